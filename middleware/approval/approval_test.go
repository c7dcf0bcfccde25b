package approval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	key   = bytes.Repeat([]byte("k"), approval.MinKeyLen)
)

// counter is a tool that counts its executions.
type counter struct{ n atomic.Int32 }

func (c *counter) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	c.n.Add(1)
	return toolmw.Text("cancelled"), nil
}

// fixture is one replica: a Desk over a store and a cancel_booking tool
// gated by it.
type fixture struct {
	desk  *approval.Desk
	tool  toolmw.Tool
	calls *counter
}

func newFixture(t *testing.T, s approval.Store, clk clock.Clock, calls *counter, mws ...toolmw.Middleware) fixture {
	t.Helper()
	// The stores given here answer at once (none hangs): a store timeout
	// of a minute keeps a loaded machine's scheduling delay from reading
	// as an outage (TestFlippedByteFailsClosed met 50 ms under -race).
	desk := approval.NewDesk(approval.WithStore(s, store.WithTimeout(time.Minute)), approval.WithSealKey(key), approval.WithClock(clk))
	if calls == nil {
		calls = new(counter)
	}
	mws = append([]toolmw.Middleware{desk.Middleware(approval.Tools("cancel_booking"))}, mws...)
	tool, err := toolmw.Wrap(toolmw.Spec{Name: "cancel_booking"}, calls.tool, mws...)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{desk: desk, tool: tool, calls: calls}
}

// runCtx is the context of the model's call callID in the run "run_1".
func runCtx(callID string) context.Context {
	return toolmw.WithCallID(budget.WithRun(context.Background(), budget.WithID("run_1")), callID)
}

const booking = `{"booking":"BK-1042","reason":"customer asked"}`

// expect checks that err is of kind and code, and returns its approval id.
func expect(t *testing.T, err error, kind taxonomy.Kind, code string) string {
	t.Helper()
	info := taxonomy.InfoOf(err)
	if err == nil || info.Kind != kind || info.Code != code {
		t.Fatalf("the call ended in %v (%s/%s), want %s/%s", err, info.Kind, info.Code, kind, code)
	}
	if info.Approval == nil {
		return ""
	}
	return info.Approval.ID
}

func (f fixture) call(callID, args string) error {
	_, err := f.tool(runCtx(callID), json.RawMessage(args))
	return err
}

func (f fixture) get(t *testing.T, id string) approval.Request {
	t.Helper()
	req, err := f.desk.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return req
}

func TestPendingApproveRunsOnce(t *testing.T) {
	clk := clock.NewFake(epoch)
	f := newFixture(t, approval.NewMemoryStore(), clk, nil)
	id := expect(t, f.call("call_1", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	if f.calls.n.Load() != 0 {
		t.Fatal("the tool ran without an approval")
	}
	// Asking again, even with the arguments spaced and ordered otherwise,
	// is the same request.
	if again := expect(t, f.call("call_1", ` { "reason" : "customer asked", "booking":"BK-1042" } `), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending); again != id {
		t.Fatalf("the same call asked under %s, then %s", id, again)
	}
	req := f.get(t, id)
	wantSummary := `cancel_booking {"booking":"BK-1042","reason":"customer asked"}`
	if req.State != approval.StatePending || req.Tool != "cancel_booking" || req.Summary != wantSummary || !req.Created.Equal(epoch) {
		t.Fatalf("request %+v", req)
	}
	if err := f.desk.Approve(context.Background(), req, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := f.desk.Approve(context.Background(), f.get(t, id), time.Hour); !errors.Is(err, approval.ErrDecided) {
		t.Fatalf("approving an approved request: %v, want ErrDecided", err)
	}
	if err := f.call("call_1", booking); err != nil {
		t.Fatalf("the approved call: %v", err)
	}
	if n := f.calls.n.Load(); n != 1 {
		t.Fatalf("%d executions, want 1", n)
	}
	// The approval is used: the same call again does not run.
	expect(t, f.call("call_1", booking), taxonomy.KindNotPermitted, taxonomy.CodeApprovalReplayed)
	used := f.get(t, id)
	if used.State != approval.StateUsed || !strings.HasPrefix(used.Key, "tmk_") {
		t.Fatalf("used request %+v, want StateUsed with the call's key", used)
	}
	// Another call of the model is another request.
	if other := expect(t, f.call("call_2", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending); other == id {
		t.Fatal("another model call reused the approval id")
	}
	if n := f.calls.n.Load(); n != 1 {
		t.Fatalf("%d executions, want 1", n)
	}
}

// TestApprovalIDSurvivesARestart: a new Desk over the same store (a
// process restarted between question and answer) finds the request of the
// same run and call, and honours a decision made by another Desk.
func TestApprovalIDSurvivesARestart(t *testing.T) {
	store := approval.NewMemoryStore()
	before := newFixture(t, store, nil, nil)
	id := expect(t, before.call("call_1", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	if !strings.HasPrefix(id, "apr_") || len(id) != 36 || toolmw.SafeCallID(id) != id {
		t.Fatalf("approval id %q is not a safe 36-byte token", id)
	}
	after := newFixture(t, store, nil, nil)
	if err := after.desk.Approve(context.Background(), after.get(t, id), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := after.call("call_1", booking); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	// A run without an id keys its requests apart per process.
	ctx := toolmw.WithCallID(budget.WithRun(context.Background()), "call_1")
	_, err := after.tool(ctx, json.RawMessage(booking))
	if other := expect(t, err, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending); other == id {
		t.Fatal("a run without an id shares the requests of run_1")
	}
}

// TestReplicasRaceForOneApproval: two stacks sharing one store race to
// execute the same approved call; exactly one runs it, every other caller
// ends in approval_replayed.
func TestReplicasRaceForOneApproval(t *testing.T) {
	store := approval.NewMemoryStore()
	calls := new(counter)
	replicas := []fixture{newFixture(t, store, nil, calls), newFixture(t, store, nil, calls)}
	const rounds, racers = 20, 50
	for round := range rounds {
		callID := fmt.Sprintf("call_%d", round)
		id := expect(t, replicas[0].call(callID, booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
		if err := replicas[1].desk.Approve(context.Background(), replicas[1].get(t, id), time.Hour); err != nil {
			t.Fatal(err)
		}
		before := calls.n.Load()
		var ok, replayed atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range racers {
			wg.Go(func() {
				<-start
				err := replicas[i%2].call(callID, booking)
				switch {
				case err == nil:
					ok.Add(1)
				case taxonomy.InfoOf(err).Code == taxonomy.CodeApprovalReplayed:
					replayed.Add(1)
				default:
					t.Errorf("a racer ended in %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		if ok.Load() != 1 || replayed.Load() != racers-1 || calls.n.Load()-before != 1 {
			t.Fatalf("round %d: %d ran, %d replayed, %d executions; want 1, %d, 1", round, ok.Load(), replayed.Load(), calls.n.Load()-before, racers-1)
		}
	}
}

// TestDenyIsOneAnswer: a denied call ends in approval-denied, once per
// call, never retried, and the tool does not run.
func TestDenyIsOneAnswer(t *testing.T) {
	var attempts atomic.Int32
	countAttempts := func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			attempts.Add(1)
			return next(ctx, args)
		}
	}
	// A retry layer outside the approval layer does not retry a denial.
	f := newFixture(t, approval.NewMemoryStore(), nil, nil)
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, f.calls.tool, testutil.RetryN(5), countAttempts, f.desk.Middleware(approval.Tools("cancel_booking")))
	id := expect(t, f.call("call_1", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	if err := f.desk.Deny(context.Background(), f.get(t, id)); err != nil {
		t.Fatal(err)
	}
	res, err := tool(runCtx("call_1"), json.RawMessage(booking))
	expect(t, err, taxonomy.KindApprovalDenied, taxonomy.CodeApprovalDenied)
	if retry, _ := taxonomy.ShouldRetry(err, true); retry || attempts.Load() != 1 || f.calls.n.Load() != 0 {
		t.Fatalf("retry=%v attempts=%d executions=%d; want false, 1, 0", retry, attempts.Load(), f.calls.n.Load())
	}
	told := toolmw.ForModel(res, err)
	if want := `<untrusted-data source="tool_error">approval-denied approval_denied: a reviewer denied this call; nothing ran; do not make it again</untrusted-data>`; told != want {
		t.Fatalf("the model is told %s", told)
	}
	if err := f.desk.Approve(context.Background(), f.get(t, id), time.Hour); !errors.Is(err, approval.ErrDecided) {
		t.Fatalf("approving a denied request: %v, want ErrDecided", err)
	}
}

// TestDenyRevokesAnUnusedApproval: an approval not yet used may be denied.
func TestDenyRevokesAnUnusedApproval(t *testing.T) {
	f := newFixture(t, approval.NewMemoryStore(), nil, nil)
	id := expect(t, f.call("call_1", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	ctx := context.Background()
	if err := f.desk.Approve(ctx, f.get(t, id), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := f.desk.Deny(ctx, f.get(t, id)); err != nil {
		t.Fatal(err)
	}
	expect(t, f.call("call_1", booking), taxonomy.KindApprovalDenied, taxonomy.CodeApprovalDenied)
	if f.calls.n.Load() != 0 {
		t.Fatal("a revoked approval ran the tool")
	}
}

// TestApprovalForOtherArguments: an approval holds for the arguments it
// was given for; the same call id with other arguments (a changed value,
// an extra member, a duplicate key, keys equal under case folding in the
// other order, trailing data, invalid UTF-8) ends as approval_args_changed
// and leaves the request as the reviewer decided it, and the approved
// arguments, however spaced or ordered, then run once.
func TestApprovalForOtherArguments(t *testing.T) {
	f := newFixture(t, approval.NewMemoryStore(), nil, nil)
	ctx := context.Background()
	id := expect(t, f.call("call_1", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	seen := f.get(t, id)
	if err := f.desk.Approve(ctx, seen, time.Hour); err != nil {
		t.Fatal(err)
	}
	approved := f.get(t, id)
	for _, other := range []string{
		`{"booking":"BK-9999","reason":"customer asked"}`,
		`{"booking":"BK-1042","reason":"customer asked","refund":true}`,
		`{"booking":"BK-1042","reason":"customer asked","booking":"BK-9999"}`, // a duplicate key reads otherwise elsewhere
		`{"booking":"BK-1042","reason":"customer asked","Booking":"BK-9999"}`, // so does a key equal under case folding
		`{"booking":"BK-1042","reason":"customer asked"} {}`,
		"{\"booking\":\"BK-1042\xff\",\"reason\":\"customer asked\"}",
	} {
		err := f.call("call_1", other)
		if got := expect(t, err, taxonomy.KindNotPermitted, taxonomy.CodeApprovalArgsChanged); got != id {
			t.Fatalf("changed arguments named %s, want %s", got, id)
		}
		if s := taxonomy.InfoOf(err).Approval.Summary; s != "" {
			t.Fatalf("the error shows the standing request's arguments: %q", s)
		}
		if f.calls.n.Load() != 0 {
			t.Fatalf("an approval for other arguments ran %s", other)
		}
	}
	if now := f.get(t, id); now != approved {
		t.Fatalf("the request changed: %+v, want %+v", now, approved)
	}
	if err := f.call("call_1", ` {"reason":"customer asked", "booking":"BK-1042"}`); err != nil || f.calls.n.Load() != 1 {
		t.Fatalf("the approved arguments, spaced and ordered otherwise: %v, %d executions", err, f.calls.n.Load())
	}
	// A decision on a request as it no longer is does not apply.
	if err := f.desk.Deny(ctx, seen); !errors.Is(err, approval.ErrChanged) {
		t.Fatalf("denying a request that changed: %v, want ErrChanged", err)
	}
}

// TestExpiredApprovalAsksAgain: an approval past its ttl does not run the
// tool; the call waits for a new decision, which then does.
func TestExpiredApprovalAsksAgain(t *testing.T) {
	clk := clock.NewFake(epoch)
	f := newFixture(t, approval.NewMemoryStore(), clk, nil)
	ctx := context.Background()
	id := expect(t, f.call("call_1", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	if err := f.desk.Approve(ctx, f.get(t, id), time.Minute); err != nil {
		t.Fatal(err)
	}
	if req := f.get(t, id); !req.Expires.Equal(epoch.Add(time.Minute)) {
		t.Fatalf("expires %v", req.Expires)
	}
	clk.Advance(time.Minute)
	expect(t, f.call("call_1", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalExpired)
	if f.calls.n.Load() != 0 {
		t.Fatal("an expired approval ran the tool")
	}
	req := f.get(t, id)
	if req.State != approval.StatePending {
		t.Fatalf("after expiry the request is %v, want pending", req.State)
	}
	if err := f.desk.Approve(ctx, req, time.Minute); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute - time.Nanosecond)
	if err := f.call("call_1", booking); err != nil || f.calls.n.Load() != 1 {
		t.Fatalf("a renewed approval: %v, %d executions", err, f.calls.n.Load())
	}
}

func TestApproveTTLBounds(t *testing.T) {
	f := newFixture(t, approval.NewMemoryStore(), nil, nil)
	id := expect(t, f.call("call_1", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	for _, ttl := range []time.Duration{0, -time.Second, approval.MaxTTL + 1} {
		if err := f.desk.Approve(context.Background(), f.get(t, id), ttl); err == nil {
			t.Errorf("Approve with ttl %v succeeded", ttl)
		}
	}
	if f.get(t, id).State != approval.StatePending {
		t.Fatal("a refused Approve changed the request")
	}
	if err := f.desk.Approve(context.Background(), approval.Request{ID: id}, time.Hour); !errors.Is(err, approval.ErrChanged) {
		t.Fatalf("approving a request made by hand: %v, want ErrChanged", err)
	}
	if _, err := f.desk.Get(context.Background(), "apr_none"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("Get of an unknown id: %v", err)
	}
}

// TestPassThrough: a call the gate does not name runs without touching
// the store.
func TestPassThrough(t *testing.T) {
	desk := approval.NewDesk(approval.WithStore(failingStore{errors.New("down")}), approval.WithSealKey(key))
	var c counter
	tool := toolmw.MustWrap(toolmw.Spec{Name: "get_booking"}, c.tool, desk.Middleware(approval.Tools("cancel_booking")))
	if _, err := tool(runCtx("call_1"), json.RawMessage(booking)); err != nil || c.n.Load() != 1 {
		t.Fatalf("an ungated call: %v, %d executions", err, c.n.Load())
	}
	// A gate that panics gates the call.
	panicky := toolmw.MustWrap(toolmw.Spec{Name: "get_booking"}, c.tool, desk.Middleware(func(context.Context, toolmw.Call, json.RawMessage) bool { panic("gate bug") }))
	_, err := panicky(runCtx("call_1"), json.RawMessage(booking))
	expect(t, err, taxonomy.KindFailed, taxonomy.CodeApprovalStoreFailed) // gated, and this desk's store is down
	if c.n.Load() != 1 {
		t.Fatal("a panicking gate let the call run")
	}
	// A nil gate gates every call.
	all := toolmw.MustWrap(toolmw.Spec{Name: "get_booking"}, c.tool, approval.New(nil))
	_, err = all(runCtx("call_1"), json.RawMessage(booking))
	expect(t, err, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
}

func TestValidate(t *testing.T) {
	for name, opts := range map[string][]approval.Option{
		"short key":             {approval.WithSealKey(make([]byte, approval.MinKeyLen-1))},
		"empty key":             {approval.WithSealKey([]byte{})},
		"negative timeout":      {approval.WithStore(approval.NewMemoryStore(), store.WithTimeout(-time.Second)), approval.WithSealKey(key)},
		"store without its key": {approval.WithStore(approval.NewMemoryStore())},
	} {
		err := approval.Validate(opts...)
		if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindDefinitionInvalid || info.Code != taxonomy.CodeOptionInvalid {
			t.Errorf("%s: Validate = %v", name, err)
		}
		if _, werr := toolmw.Wrap(toolmw.Spec{Name: "t"}, toolmwtest.OK, approval.New(nil, opts...)); werr == nil {
			t.Errorf("%s: Wrap accepted the layer", name)
		}
		if _, gerr := approval.NewDesk(opts...).Get(context.Background(), "apr_1"); gerr == nil {
			t.Errorf("%s: the Desk worked", name)
		}
	}
	for name, opts := range map[string][]approval.Option{
		"none":          nil,
		"nil option":    {nil},
		"nil values":    {approval.WithStore(nil), approval.WithSealKey(nil), approval.WithClock(nil), approval.WithScrubber(nil)},
		"store options": {approval.WithStore(nil, store.WithTimeout(0), store.WithOnError(nil))},
		"store and key": {approval.WithStore(approval.NewMemoryStore()), approval.WithSealKey(key)},
	} {
		if err := approval.Validate(opts...); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestStateString(t *testing.T) {
	for s, want := range map[approval.State]string{
		approval.StatePending: "pending", approval.StateApproved: "approved", approval.StateDenied: "denied",
		approval.StateUsed: "used", 0: "invalid", 99: "invalid",
	} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", s, s.String(), want)
		}
	}
}
