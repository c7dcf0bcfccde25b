package approvaltest

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// The decision checks: the approval cycle run by a Desk over the store,
// with rows written back into it behind the Desk's back as a party with
// write access to the store (but not the Desk's key) could. They hold for
// any store that keeps the contract above, and fail for one that loses a
// used nonce or stores something other than what it was given.

// cycleKey seals the rows of the decision checks.
var cycleKey = []byte("approvaltest-decisions-key-0123456789")

// cycleArgs are the arguments of the gated call; otherArgs the same call
// with one more member.
const (
	cycleArgs = `{"booking":"B-7","refund":"full"}`
	otherArgs = `{"booking":"B-7","refund":"full","note":"x"}`
)

// cycle is a Desk over the store under test and a gated tool counting its
// executions.
// Its Desk's clock is fake (clk, or one set to now when clk is nil): it
// dates requests, expires approvals and times the store's rests.
type cycle struct {
	desk  *approval.Desk
	tool  toolmw.Tool
	runs  *atomic.Int64
	clock *clock.Fake
}

func newCycle(s approval.Store, clk *clock.Fake, runs *atomic.Int64) cycle {
	if runs == nil {
		runs = new(atomic.Int64)
	}
	if clk == nil {
		clk = clock.NewFake(time.Now())
	}
	desk := approval.NewDesk(approval.WithStore(s, store.WithTimeout(Timeout)), approval.WithSealKey(cycleKey), approval.WithClock(clk))
	tool := toolmw.MustWrap(toolmw.Spec{Name: "refund_booking"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		runs.Add(1)
		return toolmw.Text("refunded"), nil
	}, desk.Middleware(approval.Tools("refund_booking")))
	return cycle{desk: desk, tool: tool, runs: runs, clock: clk}
}

// rest lets the store's rest pass: after a failure the Desk leaves its
// store alone for store.Rest, and its calls fail closed at once meanwhile.
func (c cycle) rest() { c.clock.Advance(store.Rest) }

// call makes the model's call callID with args in the run "run-decisions".
func (c cycle) call(callID, args string) error {
	ctx := toolmw.WithCallID(budget.WithRun(context.Background(), budget.WithID("run-decisions")), callID)
	_, err := c.tool(ctx, json.RawMessage(args))
	return err
}

// code returns the code err ends in, "" for nil.
func code(err error) string {
	if err == nil {
		return ""
	}
	return taxonomy.InfoOf(err).Code
}

// ask makes the call and returns its request, failing t unless it is
// pending.
func (c cycle) ask(t *testing.T, callID, args string) approval.Request {
	t.Helper()
	err := c.call(callID, args)
	if code(err) != taxonomy.CodeApprovalPending {
		t.Fatalf("the first call ended in %v, want approval_pending", err)
	}
	req, err := c.desk.Get(context.Background(), taxonomy.InfoOf(err).Approval.ID)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// snapshot returns the row stored under id now.
func snapshot(t *testing.T, s approval.Store, id string) []byte {
	t.Helper()
	row, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("Load(%s): %v", id, err)
	}
	return row
}

// writeBack stores row under id over whatever is there: what a party with
// write access to the store, or a restored backup, does.
func writeBack(t *testing.T, s approval.Store, id string, row []byte) {
	t.Helper()
	cur, err := s.Load(context.Background(), id)
	if errors.Is(err, approval.ErrNotFound) {
		cur = nil
	} else if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(context.Background(), id, cur, row); err != nil {
		t.Fatalf("writing the old row back: %v", err)
	}
}

// testRevokedApprovalRestored: approve, deny, then write the approved row
// back: the revoked approval does not run the tool.
func testRevokedApprovalRestored(t *testing.T, s approval.Store) {
	c := newCycle(s, nil, nil)
	ctx := context.Background()
	req := c.ask(t, "call_revoked", cycleArgs)
	must(t, c.desk.Approve(ctx, req, time.Hour))
	approved := snapshot(t, s, req.ID)
	req, err := c.desk.Get(ctx, req.ID)
	must(t, err)
	must(t, c.desk.Deny(ctx, req))
	writeBack(t, s, req.ID, approved)
	for range 2 {
		err := c.call("call_revoked", cycleArgs)
		if c.runs.Load() != 0 {
			t.Fatal("the approval written back after its denial ran the tool")
		}
		if got := code(err); got != taxonomy.CodeApprovalReplayed {
			t.Fatalf("the call with the revoked approval written back: %v (%s), want approval_replayed", err, got)
		}
	}
}

// testUsedApprovalRestored: an approval written back after its use does
// not run the tool again.
func testUsedApprovalRestored(t *testing.T, s approval.Store) {
	c := newCycle(s, nil, nil)
	req := c.ask(t, "call_used", cycleArgs)
	must(t, c.desk.Approve(context.Background(), req, time.Hour))
	approved := snapshot(t, s, req.ID)
	must(t, c.call("call_used", cycleArgs))
	writeBack(t, s, req.ID, approved)
	if err := c.call("call_used", cycleArgs); code(err) != taxonomy.CodeApprovalReplayed || c.runs.Load() != 1 {
		t.Fatalf("the used approval written back: %v, %d executions; want approval_replayed, 1", err, c.runs.Load())
	}
}

// testExpiredApprovalRestored: an approval replaced after it expired,
// written back and read by a replica whose clock is behind (so it looks
// valid there), does not run the tool: a replaced approval's nonce is
// spent.
func testExpiredApprovalRestored(t *testing.T, s approval.Store) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	slowClock, clk := clock.NewFake(t0), clock.NewFake(t0)
	var runs atomic.Int64
	slow, c := newCycle(s, slowClock, &runs), newCycle(s, clk, &runs)
	req := c.ask(t, "call_expired", cycleArgs)
	must(t, c.desk.Approve(context.Background(), req, time.Minute))
	approved := snapshot(t, s, req.ID)
	clk.Advance(time.Hour)
	if err := c.call("call_expired", cycleArgs); code(err) != taxonomy.CodeApprovalExpired {
		t.Fatalf("the expired approval: %v, want approval_expired", err)
	}
	writeBack(t, s, req.ID, approved)
	if err := slow.call("call_expired", cycleArgs); code(err) != taxonomy.CodeApprovalReplayed || runs.Load() != 0 {
		t.Fatalf("the replaced approval written back, on a slow clock: %v, %d executions; want approval_replayed, 0", err, runs.Load())
	}
}

// testDenialIsFinal: a denial holds whatever other arguments come with the
// same call id in between: they end typed and leave the
// request as it was.
func testDenialIsFinal(t *testing.T, s approval.Store) {
	c := newCycle(s, nil, nil)
	ctx := context.Background()
	req := c.ask(t, "call_denied", cycleArgs)
	must(t, c.desk.Deny(ctx, req))
	for range 2 {
		if err := c.call("call_denied", otherArgs); code(err) != taxonomy.CodeApprovalArgsChanged {
			t.Fatalf("the denied call id with other arguments: %v, want approval_args_changed", err)
		}
		if err := c.call("call_denied", cycleArgs); code(err) != taxonomy.CodeApprovalDenied {
			t.Fatalf("the denied call again: %v, want approval_denied", err)
		}
	}
	now, err := c.desk.Get(ctx, req.ID)
	must(t, err)
	if now.State != approval.StateDenied || now.Summary != req.Summary {
		t.Fatalf("the request is %v (%q), want the denial of %q", now.State, now.Summary, req.Summary)
	}
	if err := c.desk.Approve(ctx, now, time.Hour); !errors.Is(err, approval.ErrDecided) {
		t.Fatalf("approving a denial: %v, want ErrDecided", err)
	}
	if c.runs.Load() != 0 {
		t.Fatal("a denied call ran")
	}
}

// testOtherArgumentsKeepTheDecision: an approval is not displaced by the
// same call id with other arguments: those end typed,
// and the approved call then runs once.
func testOtherArgumentsKeepTheDecision(t *testing.T, s approval.Store) {
	c := newCycle(s, nil, nil)
	req := c.ask(t, "call_kept", cycleArgs)
	must(t, c.desk.Approve(context.Background(), req, time.Hour))
	if err := c.call("call_kept", otherArgs); code(err) != taxonomy.CodeApprovalArgsChanged {
		t.Fatalf("other arguments under an approved call id: %v, want approval_args_changed", err)
	}
	if err := c.call("call_kept", cycleArgs); err != nil || c.runs.Load() != 1 {
		t.Fatalf("the approved call: %v, %d executions; want it run once", err, c.runs.Load())
	}
}

// testCorruptRowFailsClosed: a row the Desk did not write, stored under a
// request's id, ends the call as approval_store_corrupt.
func testCorruptRowFailsClosed(t *testing.T, s approval.Store) {
	c := newCycle(s, nil, nil)
	req := c.ask(t, "call_corrupt", cycleArgs)
	must(t, c.desk.Approve(context.Background(), req, time.Hour))
	row := snapshot(t, s, req.ID)
	for _, bad := range [][]byte{{}, []byte("garbage"), []byte(`{"v":1}`), row[:len(row)/2]} {
		writeBack(t, s, req.ID, bad)
		if err := c.call("call_corrupt", cycleArgs); code(err) != taxonomy.CodeApprovalStoreCorrupt || c.runs.Load() != 0 {
			t.Fatalf("a row of %d bytes the Desk did not write: %v, %d executions; want approval_store_corrupt, 0", len(bad), err, c.runs.Load())
		}
	}
}
