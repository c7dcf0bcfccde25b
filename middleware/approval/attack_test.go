package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// The attacks of issue 26 on the approval layer, made through its public
// API with a hostile model (the tool calls) and a hostile store (rows
// written behind the Desk's back; approvaltest runs those on every store).

// payments is a payment tool that decodes its arguments with encoding/json,
// as most hand-written tools do, and records where each payment went.
type payments struct {
	mu   sync.Mutex
	sent []string
}

func (p *payments) tool(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
	var in struct {
		Destination string `json:"destination"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return toolmw.Result{}, err
	}
	p.mu.Lock()
	p.sent = append(p.sent, in.Destination)
	p.mu.Unlock()
	return toolmw.Text("paid"), nil
}

func (p *payments) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.sent...)
}

// TestCaseFoldedKeysDoNotShareAnApproval (issue 26, item 1): an approval
// of {"Destination":"mallory","destination":"alice"} (which encoding/json
// decodes as alice: the last key matching the field wins, case folded) does
// not cover the same members in the other order (mallory), nor the same
// with "deſtination" (ſ folds to s): an approval covers exactly what the
// tool will receive. Through a Typed tool the ambiguous arguments are
// rejected before anything runs.
func TestCaseFoldedKeysDoNotShareAnApproval(t *testing.T) {
	var p payments
	desk := approval.NewDesk(approval.WithStore(approval.NewMemoryStore()), approval.WithSealKey(key))
	pay := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, p.tool, desk.Middleware(approval.Tools("pay")))
	ctx := context.Background()
	for i, attack := range [][2]string{
		{`{"Destination":"mallory","destination":"alice"}`, `{"destination":"alice","Destination":"mallory"}`},
		{`{"deſtination":"mallory","destination":"alice"}`, `{"destination":"alice","deſtination":"mallory"}`},
		{`{"DESTINATION":"mallory","destination":"alice"}`, `{"destination":"alice","DESTINATION":"mallory"}`},
	} {
		callID := fmt.Sprintf("call_pay_%d", i)
		approved, replay := attack[0], attack[1]
		_, err := pay(runCtx(callID), json.RawMessage(approved))
		id := expect(t, err, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
		req, err := desk.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := desk.Approve(ctx, req, time.Hour); err != nil {
			t.Fatal(err)
		}
		_, err = pay(runCtx(callID), json.RawMessage(replay))
		if got := p.list(); len(got) > i {
			t.Fatalf("the replay in the other order ran: payments went to %q", got)
		}
		expect(t, err, taxonomy.KindNotPermitted, taxonomy.CodeApprovalArgsChanged)
		if _, err := pay(runCtx(callID), json.RawMessage(approved)); err != nil {
			t.Fatalf("the approved arguments: %v", err)
		}
	}
	if got := p.list(); len(got) != 3 || got[0] != "alice" || got[1] != "alice" || got[2] != "alice" {
		t.Fatalf("payments went to %q; want alice three times, mallory never", got)
	}

	// A Typed tool rejects the ambiguous arguments outright, approved or not.
	ran := 0
	typed := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, toolmw.Typed(func(_ context.Context, in struct {
		Destination string          `json:"destination"`
		Memo        json.RawMessage `json:"memo,omitempty"`
	}) (string, error) {
		ran++
		return "paid " + in.Destination, nil
	}), desk.Middleware(approval.Tools("pay")))
	for i, args := range []string{
		`{"Destination":"mallory","destination":"alice"}`,
		`{"destination":"alice","memo":{"to":"alice","TO":"mallory"}}`,
	} {
		callID := fmt.Sprintf("call_typed_%d", i)
		_, err := typed(runCtx(callID), json.RawMessage(args))
		id := expect(t, err, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
		req, _ := desk.Get(ctx, id)
		if err := desk.Approve(ctx, req, time.Hour); err != nil {
			t.Fatal(err)
		}
		_, err = typed(runCtx(callID), json.RawMessage(args))
		expect(t, err, taxonomy.KindArgsInvalid, taxonomy.CodeArgsInvalid)
	}
	if ran != 0 {
		t.Fatalf("the Typed tool ran %d times on ambiguous arguments", ran)
	}
}

// TestDenialIsNotErasedByOtherArguments (issue 26, item 4): deny A; the
// same call id with A and one more member; then A again: still denied, and
// the request a reviewer reads is still the denial of A.
func TestDenialIsNotErasedByOtherArguments(t *testing.T) {
	f := newFixture(t, approval.NewMemoryStore(), nil, nil)
	ctx := context.Background()
	id := expect(t, f.call("call_1", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	denied := f.get(t, id)
	if err := f.desk.Deny(ctx, denied); err != nil {
		t.Fatal(err)
	}
	more := `{"booking":"BK-1042","reason":"customer asked","urgent":true}`
	expect(t, f.call("call_1", more), taxonomy.KindNotPermitted, taxonomy.CodeApprovalArgsChanged)
	expect(t, f.call("call_1", booking), taxonomy.KindApprovalDenied, taxonomy.CodeApprovalDenied)
	if req := f.get(t, id); req.State != approval.StateDenied || req.Summary != denied.Summary {
		t.Fatalf("the request is %v %q, want the denial of %q", req.State, req.Summary, denied.Summary)
	}
	if f.calls.n.Load() != 0 {
		t.Fatal("a denied call ran")
	}
}

// TestOneCallIDTwoArgumentsDoNotLivelock (issue 26, item 13): two callers
// share a call id with different arguments, and a reviewer approves
// whatever is pending. The second caller's call ends typed at once
// (approval_args_changed), never displacing the first's request, so the
// first's call runs after one approval instead of never.
func TestOneCallIDTwoArgumentsDoNotLivelock(t *testing.T) {
	f := newFixture(t, approval.NewMemoryStore(), nil, nil)
	ctx := context.Background()
	first, second := booking, `{"booking":"BK-9999","reason":"customer asked"}`
	approvals := 0
	for round := 0; round < 3 && f.calls.n.Load() == 0; round++ {
		for _, args := range []string{first, second} {
			err := f.call("call_shared", args)
			info := taxonomy.InfoOf(err)
			switch {
			case err == nil:
			case info.Code == taxonomy.CodeApprovalPending:
				if args == second {
					t.Fatalf("round %d: the second caller's call is pending: it displaced the first's request", round)
				}
				if aerr := f.desk.Approve(ctx, f.get(t, info.Approval.ID), time.Hour); aerr == nil {
					approvals++
				}
			case info.Code == taxonomy.CodeApprovalArgsChanged && args == second:
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	if n := f.calls.n.Load(); n != 1 || approvals != 1 {
		t.Fatalf("%d executions after %d approvals; want the first call run once after one", n, approvals)
	}
}

// panicStore panics in the operations named in ops, else behaves as its
// MemoryStore.
type panicStore struct {
	*approval.MemoryStore
	ops map[string]bool
}

func (p panicStore) Load(ctx context.Context, id string) ([]byte, error) {
	if p.ops["load"] {
		panic("store bug: " + id)
	}
	return p.MemoryStore.Load(ctx, id)
}

func (p panicStore) Save(ctx context.Context, id string, prev, row []byte) error {
	if p.ops["save"] {
		panic(errors.New("store bug"))
	}
	return p.MemoryStore.Save(ctx, id, prev, row)
}

func (p panicStore) Consume(ctx context.Context, nonce, op string) error {
	if p.ops["consume"] {
		panic(nil)
	}
	return p.MemoryStore.Consume(ctx, nonce, op)
}

// TestStorePanicsFailClosed (issue 26, item 14): a store that panics in
// any operation fails closed: the call ends as approval_store_failed, the
// reviewer's side returns an error matching ErrStorePanicked, the panic
// goes no further, nothing runs, and store.WithOnError reports each. Each
// failure rests the store: the tests wait store.Rest before the next
// operation.
func TestStorePanicsFailClosed(t *testing.T) {
	for _, op := range []string{"load", "save", "consume"} {
		t.Run(op, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				mem := approval.NewMemoryStore()
				// A request approved through a sound Desk over the same rows.
				sound := newFixture(t, mem, nil, nil)
				id := expect(t, sound.call("call_1", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
				req := sound.get(t, id)
				if err := sound.desk.Approve(ctx, req, time.Hour); err != nil {
					t.Fatal(err)
				}
				var mu sync.Mutex
				var reported []store.Error
				desk := approval.NewDesk(approval.WithSealKey(key), approval.WithStore(panicStore{mem, map[string]bool{op: true}},
					store.WithOnError(func(e store.Error) { mu.Lock(); reported = append(reported, e); mu.Unlock() })))
				var c counter
				tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, c.tool, desk.Middleware(approval.Tools("cancel_booking")))
				for _, callID := range []string{"call_1", "call_2"} { // approved; new
					_, err := tool(runCtx(callID), json.RawMessage(booking))
					time.Sleep(store.Rest)
					if op == "save" && callID == "call_1" {
						// The approval is used (its nonce consumed) before the
						// use is recorded: the tool runs, the record is lost.
						if err != nil || c.n.Load() != 1 {
							t.Fatalf("an approved call whose use could not be recorded: %v, %d executions", err, c.n.Load())
						}
						continue
					}
					if op == "consume" && callID == "call_2" {
						expect(t, err, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
						continue
					}
					expect(t, err, taxonomy.KindFailed, taxonomy.CodeApprovalStoreFailed)
				}
				if want := map[string]int32{"save": 1}[op]; c.n.Load() != want {
					t.Fatalf("%d executions, want %d", c.n.Load(), want)
				}
				if op != "save" {
					if _, err := desk.Get(ctx, id); op == "load" && !errors.Is(err, approval.ErrStorePanicked) {
						t.Fatalf("Get: %v, want ErrStorePanicked", err)
					}
				}
				mu.Lock()
				defer mu.Unlock()
				if len(reported) == 0 {
					t.Fatal("nothing was reported")
				}
				for _, r := range reported {
					if r.Op != op || !errors.Is(r.Err, approval.ErrStorePanicked) || r.Layer != "approval" || !r.Refused {
						t.Fatalf("reported %+v, want op %s with ErrStorePanicked, refused", r, op)
					}
				}
			})
		})
	}
	// The reviewer's side: Approve and Deny over a store whose Save panics.
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mem := approval.NewMemoryStore()
		sound := newFixture(t, mem, nil, nil)
		id := expect(t, sound.call("call_1", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
		desk := approval.NewDesk(approval.WithStore(panicStore{mem, map[string]bool{"save": true}}), approval.WithSealKey(key))
		req, err := desk.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := desk.Approve(ctx, req, time.Hour); !errors.Is(err, approval.ErrStorePanicked) {
			t.Fatalf("Approve: %v, want ErrStorePanicked", err)
		}
		// The failure rests the store: the reviewer's side fails at once
		// meanwhile, without asking it.
		if err := desk.Deny(ctx, req); !errors.Is(err, store.ErrResting) {
			t.Fatalf("Deny while the store rests: %v, want store.ErrResting", err)
		}
		time.Sleep(store.Rest)
		if err := desk.Deny(ctx, req); !errors.Is(err, approval.ErrStorePanicked) {
			t.Fatalf("Deny: %v, want ErrStorePanicked", err)
		}
	})
}

// TestCallsWithoutARunAreUnbound (issue 26, item 16): without a run, two
// conversations of one process giving the same call id would share one
// request, so one would use the other's approval. A gated call without a
// run ends as approval_unbound, nothing runs and nothing is filed, unless
// the Desk was made WithRunOptional; a call not made through toolmw.Wrap
// (no call record at all) is unbound either way.
func TestCallsWithoutARunAreUnbound(t *testing.T) {
	ctx := context.Background()
	store := approval.NewMemoryStore()
	f := newFixture(t, store, nil, nil)
	noRun := func(callID string) error {
		_, err := f.tool(toolmw.WithCallID(ctx, callID), json.RawMessage(booking))
		return err
	}
	// Alice's conversation asks, and a reviewer approves what she asked;
	// Bob's, with the same call id and arguments, must not use it.
	if err := noRun("call_1"); taxonomy.InfoOf(err).Approval != nil {
		if aerr := f.desk.Approve(ctx, f.get(t, taxonomy.InfoOf(err).Approval.ID), time.Hour); aerr != nil {
			t.Fatal(aerr)
		}
	}
	if err := noRun("call_1"); f.calls.n.Load() != 0 {
		t.Fatalf("another conversation's call used the approval: %v", err)
	}
	for _, conversation := range []string{"alice", "bob"} {
		err := noRun("call_2")
		expect(t, err, taxonomy.KindNotPermitted, taxonomy.CodeApprovalUnbound)
		if taxonomy.InfoOf(err).Approval != nil {
			t.Fatalf("%s: an unbound call names a request", conversation)
		}
	}
	if rows, _ := store.Len(); rows != 0 || f.calls.n.Load() != 0 {
		t.Fatalf("%d rows filed, %d executions; want none", rows, f.calls.n.Load())
	}
	// The loop that makes "no run" its choice gets the process's scope.
	var c counter
	desk := approval.NewDesk(approval.WithRunOptional())
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, c.tool, desk.Middleware(nil))
	_, err := tool(toolmw.WithCallID(ctx, "call_1"), json.RawMessage(booking))
	id := expect(t, err, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	req, _ := desk.Get(ctx, id)
	if err := desk.Approve(ctx, req, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := tool(toolmw.WithCallID(ctx, "call_1"), json.RawMessage(booking)); err != nil || c.n.Load() != 1 {
		t.Fatalf("an approved call without a run, WithRunOptional: %v, %d executions", err, c.n.Load())
	}
	// A tool called without toolmw.Wrap has no call to bind to.
	bare := desk.Middleware(nil)(c.tool)
	for _, cctx := range []context.Context{ctx, budget.WithRun(ctx, budget.WithID("run_1"))} {
		_, err := bare(cctx, json.RawMessage(booking))
		expect(t, err, taxonomy.KindNotPermitted, taxonomy.CodeApprovalUnbound)
	}
	if c.n.Load() != 1 {
		t.Fatalf("%d executions, want 1", c.n.Load())
	}
}

// denyInsideStore denies the request the first time the call consumes its
// approval: between the call's read of the approved row and its use of
// it, the moment a Deny that only rewrote the row used to lose.
type denyInsideStore struct {
	*approval.MemoryStore
	deny  func() error
	armed atomic.Bool
	err   error
}

func (s *denyInsideStore) Consume(ctx context.Context, nonce, op string) error {
	if s.armed.CompareAndSwap(true, false) { // the Deny consumes too
		s.err = s.deny()
	}
	return s.MemoryStore.Consume(ctx, nonce, op)
}

// TestDenyRacesTheCall (issue 26, item 5): a Deny of an approval and the
// call using it race; exactly one wins. A Deny that returns nil means the
// tool did not run (the call ends as approval_denied); a call that ran
// means the Deny failed.
func TestDenyRacesTheCall(t *testing.T) {
	ctx := context.Background()
	mem := approval.NewMemoryStore()
	f := newFixture(t, mem, nil, nil)
	id := expect(t, f.call("call_1", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	if err := f.desk.Approve(ctx, f.get(t, id), time.Hour); err != nil {
		t.Fatal(err)
	}
	approved := f.get(t, id)
	store := &denyInsideStore{MemoryStore: mem}
	racing := newFixture(t, store, nil, f.calls)
	store.deny = func() error { return racing.desk.Deny(ctx, approved) }
	store.armed.Store(true)
	err := racing.call("call_1", booking)
	if store.err != nil {
		t.Fatalf("the Deny made before the call used the approval: %v", store.err)
	}
	if f.calls.n.Load() != 0 {
		t.Fatal("the tool ran though the Deny succeeded")
	}
	expect(t, err, taxonomy.KindApprovalDenied, taxonomy.CodeApprovalDenied)

	// The other order: used first, then the Deny fails.
	id = expect(t, f.call("call_2", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	if err := f.desk.Approve(ctx, f.get(t, id), time.Hour); err != nil {
		t.Fatal(err)
	}
	approved = f.get(t, id)
	if err := f.call("call_2", booking); err != nil || f.calls.n.Load() != 1 {
		t.Fatalf("the approved call: %v, %d executions", err, f.calls.n.Load())
	}
	if err := f.desk.Deny(ctx, approved); !errors.Is(err, approval.ErrChanged) {
		t.Fatalf("denying an approval already used: %v, want ErrChanged", err)
	}
}

// TestSummaryRevealsLookAlikes: the summary a reviewer reads shows what a
// character that passes for another really is: letters of another script
// inside Latin text (Cyrillic а in "аlice", dotless ı, long ſ, the Kelvin
// sign, fullwidth letters), and characters that show as nothing or reorder
// the text (zero-width spaces, bidi overrides, a no-break space), are
// written as \u escapes, in keys and values. Text of one other script, and
// Latin with its usual accents, reads as written.
func TestSummaryRevealsLookAlikes(t *testing.T) {
	f := newFixture(t, approval.NewMemoryStore(), nil, nil)
	for i, c := range []struct{ args, want string }{
		{`{"to":"аlice"}`, `{"to":"\u0430lice"}`},
		{`{"dеstination":"alice"}`, `{"d\u0435stination":"alice"}`},
		{`{"to":"alıce"}`, `{"to":"al\u0131ce"}`},
		{`{"to":"ſam"}`, `{"to":"\u017fam"}`},
		{"{\"to\":\"\u212aate\"}", `{"to":"\u212aate"}`}, // the Kelvin sign
		{`{"to":"aｌice"}`, `{"to":"a\uff4cice"}`},
		{"{\"to\":\"alice\u200b\"}", `{"to":"alice\u200b"}`},
		{"{\"to\":\"alice\u202e\"}", `{"to":"alice\u202e"}`},
		{"{\"amount\":\"1\u00a0000\"}", `{"amount":"1\u00a0000"}`},
		{`{"name":"山田","city":"Zürich","street":"Straße","greek":"Αθήνα"}`, `{"city":"Zürich","greek":"Αθήνα","name":"山田","street":"Straße"}`},
	} {
		_, err := f.tool(runCtx(fmt.Sprintf("call_look_%d", i)), json.RawMessage(c.args))
		id := expect(t, err, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
		if got, want := f.get(t, id).Summary, "cancel_booking "+c.want; got != want {
			t.Errorf("the summary of %s is %s, want %s", c.args, got, want)
		}
	}
}

// TestExpiredCopyOfAUsedApproval: an approval used, its row written back,
// then read once it has expired: the Desk, about to file a new request in
// its place, finds its nonce already spent and the row unchanged, and
// fails closed as approval_replayed rather than asking again for a call
// that may have run.
func TestExpiredCopyOfAUsedApproval(t *testing.T) {
	clk := clock.NewFake(epoch)
	store := approval.NewMemoryStore()
	f := newFixture(t, store, clk, nil)
	ctx := context.Background()
	id := expect(t, f.call("call_1", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	if err := f.desk.Approve(ctx, f.get(t, id), time.Minute); err != nil {
		t.Fatal(err)
	}
	approved, _ := store.Load(ctx, id)
	if err := f.call("call_1", booking); err != nil {
		t.Fatal(err)
	}
	put(t, store, id, approved)
	clk.Advance(time.Hour)
	for range 2 {
		expect(t, f.call("call_1", booking), taxonomy.KindNotPermitted, taxonomy.CodeApprovalReplayed)
	}
	if n := f.calls.n.Load(); n != 1 {
		t.Fatalf("%d executions, want 1", n)
	}
}
