package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// lateStore answers a Consume only after its caller gave up, and applies
// it anyway: the store that answers late (a Redis busy in DEBUG SLEEP, a
// failover). When armed, the next Consume waits for its context to end and
// returns the context's error; the consume itself lands at the moment
// landAfter says, measured from the context's end: 0 before the answer is
// returned (the answer was lost), more after it (the request was late).
type lateStore struct {
	*approval.MemoryStore
	armed     atomic.Bool
	landAfter time.Duration
}

func (s *lateStore) Consume(ctx context.Context, nonce, op string) error {
	if !s.armed.CompareAndSwap(true, false) {
		return s.MemoryStore.Consume(ctx, nonce, op)
	}
	<-ctx.Done()
	if s.landAfter == 0 {
		_ = s.MemoryStore.Consume(context.Background(), nonce, op)
		return ctx.Err()
	}
	go func() {
		time.Sleep(s.landAfter)
		_ = s.MemoryStore.Consume(context.Background(), nonce, op)
	}()
	return ctx.Err()
}

// TestLateConsumeDoesNotLoseTheApproval (issue 35, item 3): the call's
// Consume of its approval's nonce times out, and the store applies it
// anyway, before or after the layer hears of it. The call fails closed
// (approval_store_failed, nothing runs), and the approval is not lost: the
// same call made again runs, exactly once.
func TestLateConsumeDoesNotLoseTheApproval(t *testing.T) {
	for _, c := range []struct {
		name      string
		landAfter time.Duration
		deadline  time.Duration // the caller's own, 0 for none
	}{
		{"answer lost", 0, 0},
		{"request late", time.Second, 0},
		{"caller's deadline, answer lost", 0, 50 * time.Millisecond},
		{"caller's deadline, request late", time.Second, 50 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				late := &lateStore{MemoryStore: approval.NewMemoryStore(), landAfter: c.landAfter}
				var calls counter
				desk := approval.NewDesk(approval.WithStore(late, store.WithTimeout(100*time.Millisecond)), approval.WithSealKey(key))
				tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, calls.tool, desk.Middleware(approval.Tools("cancel_booking")))
				call := func(ctx context.Context) error {
					_, err := tool(ctx, json.RawMessage(booking))
					return err
				}
				id := expect(t, call(runCtx("call_1")), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
				req, err := desk.Get(context.Background(), id)
				if err != nil {
					t.Fatal(err)
				}
				if err := desk.Approve(context.Background(), req, time.Hour); err != nil {
					t.Fatal(err)
				}

				late.armed.Store(true)
				ctx, cancel := runCtx("call_1"), context.CancelFunc(func() {})
				if c.deadline > 0 {
					ctx, cancel = context.WithTimeout(ctx, c.deadline)
				}
				err = call(ctx)
				cancel()
				if c.deadline > 0 {
					expect(t, err, taxonomy.KindTimeout, taxonomy.CodeDeadlineExceeded)
				} else {
					expect(t, err, taxonomy.KindFailed, taxonomy.CodeApprovalStoreFailed)
				}
				if n := calls.n.Load(); n != 0 {
					t.Fatalf("the call whose Consume timed out ran the tool (%d executions)", n)
				}
				if c.deadline == 0 {
					// The store failed (the caller's deadline blames
					// nothing): calls fail closed at once while it rests.
					start := time.Now()
					expect(t, call(runCtx("call_1")), taxonomy.KindFailed, taxonomy.CodeApprovalStoreFailed)
					if time.Since(start) != 0 {
						t.Fatal("a call asked the store while it rested")
					}
				}
				time.Sleep(max(2*c.landAfter, store.Rest)) // the late consume lands; the rest ends
				synctest.Wait()

				if err := call(runCtx("call_1")); err != nil {
					t.Fatalf("the approved call made again after its Consume landed late: %v (%s); want it to run", err, taxonomy.InfoOf(err).Code)
				}
				expect(t, call(runCtx("call_1")), taxonomy.KindNotPermitted, taxonomy.CodeApprovalReplayed)
				if n := calls.n.Load(); n != 1 {
					t.Fatalf("%d executions, want 1", n)
				}
				if got, _ := desk.Get(context.Background(), id); got.State != approval.StateUsed {
					t.Fatalf("the request is %v, want used", got.State)
				}
			})
		})
	}
}

// TestLateRetirementDoesNotStickTheRequest: an expired approval is
// replaced by a new request, its nonce spent first; when that Consume
// times out and lands anyway, the request is not stuck approved-and-spent
// (every call approval_replayed, Approve ErrDecided): the call made again
// files the new request.
func TestLateRetirementDoesNotStickTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late := &lateStore{MemoryStore: approval.NewMemoryStore()}
		var calls counter
		desk := approval.NewDesk(approval.WithStore(late, store.WithTimeout(100*time.Millisecond)), approval.WithSealKey(key))
		tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, calls.tool, desk.Middleware(approval.Tools("cancel_booking")))
		call := func() error {
			_, err := tool(runCtx("call_1"), json.RawMessage(booking))
			return err
		}
		id := expect(t, call(), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
		req, err := desk.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if err := desk.Approve(context.Background(), req, time.Minute); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour)
		late.armed.Store(true)
		expect(t, call(), taxonomy.KindFailed, taxonomy.CodeApprovalStoreFailed)
		time.Sleep(store.Rest) // the store failed: it rests
		expect(t, call(), taxonomy.KindApprovalPending, taxonomy.CodeApprovalExpired)
		req, err = desk.Get(context.Background(), id)
		if err != nil || req.State != approval.StatePending {
			t.Fatalf("the request after its renewal: %v, %v; want pending", req.State, err)
		}
		if err := desk.Approve(context.Background(), req, time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := call(); err != nil || calls.n.Load() != 1 {
			t.Fatalf("the approved call: %v, %d executions; want it run once", err, calls.n.Load())
		}
	})
}

// lostCancelStore loses the answer of every Consume (it applies it, then
// fails) and fails every Cancel until it heals.
type lostCancelStore struct {
	*approval.MemoryStore
	healed atomic.Bool
}

func (s *lostCancelStore) Consume(ctx context.Context, nonce, op string) error {
	_ = s.MemoryStore.Consume(ctx, nonce, op)
	return context.DeadlineExceeded
}

func (s *lostCancelStore) Cancel(ctx context.Context, nonce, op string) error {
	if s.healed.Load() {
		return s.MemoryStore.Cancel(ctx, nonce, op)
	}
	return errors.New("connection refused")
}

// TestFailedCancelIsReported: when the store fails the Cancel too, the
// failure is reported (op "cancel") and the decision stays spent while the
// Cancel fails: the call made again is approval_replayed, never run. The
// Cancel is tried again after each rest of the store: once it lands, the
// same call made again runs, once.
func TestFailedCancelIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := approval.NewMemoryStore()
		f, id, _ := approvedRow(t, mem)
		var mu sync.Mutex
		var reported []store.Error
		ops := func() []string {
			mu.Lock()
			defer mu.Unlock()
			var o []string
			for _, e := range reported {
				// The call is refused; a cancel tried again after it is not.
				if e.Layer != "approval" || e.Err == nil || !e.Refused && e.Op != "cancel" {
					t.Fatalf("reported %+v, want the approval layer's, refused, with the store's error", e)
				}
				o = append(o, e.Op)
			}
			return o
		}
		lost := &lostCancelStore{MemoryStore: mem}
		desk := approval.NewDesk(approval.WithSealKey(key), approval.WithStore(lost,
			store.WithOnError(func(e store.Error) { mu.Lock(); reported = append(reported, e); mu.Unlock() })))
		tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, f.calls.tool, desk.Middleware(nil))
		_, err := tool(runCtx("call_1"), json.RawMessage(booking))
		expect(t, err, taxonomy.KindFailed, taxonomy.CodeApprovalStoreFailed)
		if got := ops(); !slices.Equal(got, []string{"consume", "cancel"}) {
			t.Fatalf("reported %v, want the consume and the cancel", got)
		}
		expect(t, f.call("call_1", booking), taxonomy.KindNotPermitted, taxonomy.CodeApprovalReplayed)

		time.Sleep(store.Rest) // the Cancel is tried again, and fails again
		synctest.Wait()
		if got := ops(); !slices.Equal(got, []string{"consume", "cancel", "cancel"}) {
			t.Fatalf("reported %v, want the consume and the cancel twice", got)
		}
		expect(t, f.call("call_1", booking), taxonomy.KindNotPermitted, taxonomy.CodeApprovalReplayed)
		if n := f.calls.n.Load(); n != 0 {
			t.Fatalf("%d executions, want 0", n)
		}
		if got := f.get(t, id); got.State != approval.StateApproved {
			t.Fatalf("the request is %v, want approved (spent in the store)", got.State)
		}

		lost.healed.Store(true)
		time.Sleep(store.Rest) // the Cancel lands
		synctest.Wait()
		if err := f.call("call_1", booking); err != nil {
			t.Fatalf("the approved call made again after its Cancel landed: %v; want it to run", err)
		}
		expect(t, f.call("call_1", booking), taxonomy.KindNotPermitted, taxonomy.CodeApprovalReplayed)
		if n := f.calls.n.Load(); n != 1 {
			t.Fatalf("%d executions, want 1", n)
		}
		if got := ops(); len(got) != 3 {
			t.Fatalf("reported %v after the Cancel landed, want nothing more", got)
		}
	})
}

// TestHungStoreBoundsTheCall: a store that answers nothing holds a call
// for the Consume's store timeout and the Cancel's, not longer, even when
// the caller's own deadline is shorter: the Cancel does not depend on it.
// The Cancel is tried even though the failed Consume rested the store.
func TestHungStoreBoundsTheCall(t *testing.T) {
	for _, deadline := range []time.Duration{0, 300 * time.Millisecond} {
		synctest.Test(t, func(t *testing.T) {
			mem := approval.NewMemoryStore()
			f, _, _ := approvedRow(t, mem)
			var cancels atomic.Int32
			desk := approval.NewDesk(approval.WithSealKey(key), approval.WithStore(&hangingConsume{MemoryStore: mem},
				store.WithTimeout(time.Second),
				store.WithOnError(func(e store.Error) {
					if e.Op == "cancel" {
						cancels.Add(1)
					}
				})))
			tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, f.calls.tool, desk.Middleware(nil))
			ctx, cancel := runCtx("call_1"), context.CancelFunc(func() {})
			if deadline > 0 {
				ctx, cancel = context.WithTimeout(ctx, deadline)
			}
			start := time.Now()
			_, err := tool(ctx, json.RawMessage(booking))
			cancel()
			took := time.Since(start)
			if err == nil {
				t.Fatal("a call on a hung store ran")
			}
			want := 2 * time.Second
			if deadline > 0 {
				want = deadline + time.Second
			}
			if took != want {
				t.Fatalf("with a caller's deadline of %v the call took %v, want %v", deadline, took, want)
			}
			if n := cancels.Load(); n != 1 {
				t.Fatalf("%d failed cancels reported, want 1", n)
			}
		})
	}
}

// hangingConsume answers no Consume and no Cancel until its context ends.
type hangingConsume struct{ *approval.MemoryStore }

func (hangingConsume) Consume(ctx context.Context, _, _ string) error {
	<-ctx.Done()
	return ctx.Err()
}

func (hangingConsume) Cancel(ctx context.Context, _, _ string) error {
	<-ctx.Done()
	return ctx.Err()
}
