package approvaltest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
)

// The checks of operations whose answer never arrived:
// first on the store alone, then through a Desk over a store whose answers
// to Consume are lost or late.

// testLateConsumeAfterCancel: an operation cancelled before its Consume
// arrives consumes nothing when the Consume comes, however often.
func testLateConsumeAfterCancel(t *testing.T, s approval.Store) {
	ctx := context.Background()
	must(t, s.Cancel(ctx, "n1", "op_late"))
	for range 2 {
		if err := s.Consume(ctx, "n1", "op_late"); !errors.Is(err, approval.ErrCanceled) {
			t.Fatalf("a Consume arriving after its operation was cancelled = %v, want ErrCanceled", err)
		}
	}
	must(t, s.Consume(ctx, "n1", "op_next"))
	if err := s.Consume(ctx, "n1", "op_late"); !errors.Is(err, approval.ErrCanceled) {
		t.Fatalf("the cancelled operation's Consume after another consumed = %v, want ErrCanceled", err)
	}
	if err := s.Consume(ctx, "n1", "op_other"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("a Consume after the nonce was consumed = %v, want ErrConsumed", err)
	}
}

// testCancelFreesALandedConsume: a Cancel after its operation's Consume
// landed frees the nonce for another operation; the cancelled one, sent
// again, stays cancelled.
func testCancelFreesALandedConsume(t *testing.T, s approval.Store) {
	ctx := context.Background()
	must(t, s.Consume(ctx, "n1", "op_a"))
	must(t, s.Cancel(ctx, "n1", "op_a"))
	if err := s.Consume(ctx, "n1", "op_a"); !errors.Is(err, approval.ErrCanceled) {
		t.Fatalf("the cancelled operation's Consume sent again = %v, want ErrCanceled", err)
	}
	if err := s.Consume(ctx, "n1", "op_b"); err != nil {
		t.Fatalf("a Consume after the Cancel of the operation that consumed = %v, want nil", err)
	}
	if err := s.Consume(ctx, "n1", "op_a"); !errors.Is(err, approval.ErrCanceled) {
		t.Fatalf("the cancelled operation's Consume after another consumed = %v, want ErrCanceled", err)
	}
	if err := s.Consume(ctx, "n1", "op_c"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("a third operation's Consume = %v, want ErrConsumed", err)
	}
	// Another nonce is another record.
	must(t, s.Consume(ctx, "n2", "op_a"))
}

// testCancelIsIdempotent: a Cancel again is the same as once, before or
// after the Consume, and after another operation consumed.
func testCancelIsIdempotent(t *testing.T, s approval.Store) {
	ctx := context.Background()
	must(t, s.Consume(ctx, "n1", "op_a"))
	must(t, s.Cancel(ctx, "n1", "op_a"))
	must(t, s.Cancel(ctx, "n1", "op_a"))
	must(t, s.Consume(ctx, "n1", "op_b"))
	must(t, s.Cancel(ctx, "n1", "op_a"))
	if err := s.Consume(ctx, "n1", "op_c"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("a Cancel again freed the nonce another operation holds: Consume = %v, want ErrConsumed", err)
	}
	if err := s.Consume(ctx, "n1", "op_b"); err != nil {
		t.Fatalf("the holding operation's Consume again = %v, want nil", err)
	}

	must(t, s.Cancel(ctx, "n2", "op_a"))
	must(t, s.Cancel(ctx, "n2", "op_a"))
	if err := s.Consume(ctx, "n2", "op_a"); !errors.Is(err, approval.ErrCanceled) {
		t.Fatalf("the twice cancelled operation's Consume = %v, want ErrCanceled", err)
	}
	must(t, s.Consume(ctx, "n2", "op_b"))
}

// testCancelKeepsAnotherOpsConsume: a nonce consumed by one operation (a
// use that ran, a revocation, a replacement) is never freed by the Cancel
// of another.
func testCancelKeepsAnotherOpsConsume(t *testing.T, s approval.Store) {
	ctx := context.Background()
	must(t, s.Consume(ctx, "n1", "op_retire"))
	for _, op := range []string{"op_late", "op_retire_", "op_retir", "OP_RETIRE", "op_other"} {
		must(t, s.Cancel(ctx, "n1", op))
		if err := s.Consume(ctx, "n1", "op_new"); !errors.Is(err, approval.ErrConsumed) {
			t.Fatalf("after the Cancel of %s the retired nonce's Consume = %v, want ErrConsumed", op, err)
		}
	}
}

// testConsumeCancelRace: 16 operations race to consume one nonce, for
// each of 3 nonces, and 8 of them cancel themselves when their Consume
// returned, whatever it returned (callers that did not hear the answer).
// At most one operation that does not cancel wins, and the nonce ends
// consumed exactly when one did: a Consume that landed and ran is never
// undone, and a decision is not lost to a cancelled one. The operations
// have a minute, so that a loaded machine does not turn the race into
// timeouts.
func testConsumeCancelRace(t *testing.T, s approval.Store) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const nonces, racers = 3, 16
	var kept [nonces]atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers * nonces {
		wg.Go(func() {
			<-start
			n, op := i%nonces, fmt.Sprintf("op_%d", i)
			nonce := fmt.Sprintf("nonce_%d", n)
			err := s.Consume(ctx, nonce, op)
			if err != nil && !errors.Is(err, approval.ErrConsumed) {
				t.Errorf("a racing Consume returned %v, want nil or ErrConsumed", err)
			}
			if cancels(i / nonces) {
				if err := s.Cancel(ctx, nonce, op); err != nil {
					t.Errorf("Cancel: %v", err)
				}
				return
			}
			if err == nil {
				kept[n].Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	for n := range nonces {
		nonce := fmt.Sprintf("nonce_%d", n)
		err := s.Consume(ctx, nonce, "op_after")
		switch k := kept[n].Load(); {
		case k > 1:
			t.Errorf("nonce %d: %d operations that were not cancelled consumed it, want at most 1", n, k)
		case k == 1 && !errors.Is(err, approval.ErrConsumed):
			t.Errorf("nonce %d: consumed by an operation not cancelled, yet a later Consume = %v, want ErrConsumed", n, err)
		case k == 0 && err != nil:
			t.Errorf("nonce %d: every operation that consumed it was cancelled, yet a later Consume = %v, want nil", n, err)
		}
		for j := range racers {
			if !cancels(j) {
				continue
			}
			if err := s.Consume(ctx, nonce, fmt.Sprintf("op_%d", j*nonces+n)); !errors.Is(err, approval.ErrCanceled) {
				t.Errorf("nonce %d: a cancelled racer's Consume again = %v, want ErrCanceled", n, err)
			}
		}
	}
}

// cancels reports whether racer j of a nonce in testConsumeCancelRace
// cancels its operation: 8 of them, among the first to start.
func cancels(j int) bool { return j%2 == 1 && j < 16 }

// testCancelBounds: a store keeps at least 8 cancelled operations of one
// nonce; past its bound a Cancel may fail, and then changes nothing.
func testCancelBounds(t *testing.T, s approval.Store) {
	ctx := context.Background()
	for i := range 8 {
		must(t, s.Cancel(ctx, "n1", fmt.Sprintf("op_%d", i)))
	}
	for i := range 8 {
		if err := s.Consume(ctx, "n1", fmt.Sprintf("op_%d", i)); !errors.Is(err, approval.ErrCanceled) {
			t.Fatalf("cancelled operation %d of 8: Consume = %v, want ErrCanceled", i, err)
		}
	}
	must(t, s.Consume(ctx, "n1", "op_new"))
	must(t, s.Cancel(ctx, "n1", "op_3")) // again: nothing more to keep
	for i := 8; i < 40; i++ {
		op := fmt.Sprintf("op_%d", i)
		if err := s.Cancel(ctx, "n1", op); err != nil {
			// Refused: nothing changed, op_new holds the nonce.
			if err := s.Consume(ctx, "n1", "op_other"); !errors.Is(err, approval.ErrConsumed) {
				t.Fatalf("a refused Cancel freed the nonce: Consume = %v, want ErrConsumed", err)
			}
			break
		}
	}
	err := s.Cancel(ctx, "n1", "op_new")
	switch {
	case err == nil:
		if err := s.Consume(ctx, "n1", "op_new"); !errors.Is(err, approval.ErrCanceled) {
			t.Fatalf("the holder cancelled: its Consume again = %v, want ErrCanceled", err)
		}
	default:
		if err := s.Consume(ctx, "n1", "op_new"); err != nil {
			t.Fatalf("the holder's refused Cancel changed the nonce: Consume = %v, want nil", err)
		}
	}
}

// errLost is what a Consume whose answer was lost returns: as a client
// that gave up waiting sees it.
var errLost = fmt.Errorf("approvaltest: the store's answer did not arrive: %w", context.DeadlineExceeded)

// lossy wraps the store under test: it loses the answer of the next
// Consumes (applies them, then reports errLost), or holds them (reports
// errLost, and applies them only when the test sends them), or loses
// every answer while loseAll is set.
type lossy struct {
	approval.Store
	lose, hold atomic.Int32
	loseAll    atomic.Bool
	held       chan func() error
	cancels    atomic.Int32
}

func newLossy(s approval.Store) *lossy { return &lossy{Store: s, held: make(chan func() error, 8)} }

func (l *lossy) Consume(ctx context.Context, nonce, op string) error {
	switch {
	case l.loseAll.Load() || take(&l.lose):
		_ = l.Store.Consume(ctx, nonce, op)
		return errLost
	case take(&l.hold):
		l.held <- func() error { return l.Store.Consume(context.Background(), nonce, op) }
		return errLost
	}
	return l.Store.Consume(ctx, nonce, op)
}

func (l *lossy) Cancel(ctx context.Context, nonce, op string) error {
	l.cancels.Add(1)
	return l.Store.Cancel(ctx, nonce, op)
}

// take takes one from n when it is above 0.
func take(n *atomic.Int32) bool {
	for {
		v := n.Load()
		if v <= 0 {
			return false
		}
		if n.CompareAndSwap(v, v-1) {
			return true
		}
	}
}

// testLostConsumeAnswerKeepsTheApproval: the store applies the call's
// Consume but its answer is lost: the call fails closed, and the same call
// made again runs, once.
func testLostConsumeAnswerKeepsTheApproval(t *testing.T, s approval.Store) {
	l := newLossy(s)
	c := newCycle(l, nil, nil)
	req := c.ask(t, "call_lost", cycleArgs)
	must(t, c.desk.Approve(context.Background(), req, time.Hour))
	l.lose.Store(1)
	if err := c.call("call_lost", cycleArgs); code(err) != taxonomy.CodeApprovalStoreFailed || c.runs.Load() != 0 {
		t.Fatalf("the call whose Consume's answer was lost: %v, %d executions; want approval_store_failed, 0", err, c.runs.Load())
	}
	if l.cancels.Load() == 0 {
		t.Fatal("the Desk did not cancel the Consume whose answer was lost")
	}
	// The store failed: it rests, and calls fail closed at once meanwhile.
	if err := c.call("call_lost", cycleArgs); code(err) != taxonomy.CodeApprovalStoreFailed || c.runs.Load() != 0 {
		t.Fatalf("the call made again while the store rests: %v, %d executions; want approval_store_failed, 0", err, c.runs.Load())
	}
	c.rest()
	if err := c.call("call_lost", cycleArgs); err != nil || c.runs.Load() != 1 {
		t.Fatalf("the approved call made again: %v, %d executions; want it run once (the lost answer lost the approval)", err, c.runs.Load())
	}
	if err := c.call("call_lost", cycleArgs); code(err) != taxonomy.CodeApprovalReplayed || c.runs.Load() != 1 {
		t.Fatalf("the call a third time: %v, %d executions; want approval_replayed, 1", err, c.runs.Load())
	}
	if got, err := c.desk.Get(context.Background(), req.ID); err != nil || got.State != approval.StateUsed {
		t.Fatalf("the request is %v (%v), want used", got.State, err)
	}
}

// testLateConsumeKeepsTheApproval: the call's Consume reaches the store
// only after the call gave up and cancelled it: the late Consume consumes
// nothing, and the same call made again runs, once.
func testLateConsumeKeepsTheApproval(t *testing.T, s approval.Store) {
	l := newLossy(s)
	c := newCycle(l, nil, nil)
	req := c.ask(t, "call_late", cycleArgs)
	must(t, c.desk.Approve(context.Background(), req, time.Hour))
	l.hold.Store(1)
	if err := c.call("call_late", cycleArgs); code(err) != taxonomy.CodeApprovalStoreFailed || c.runs.Load() != 0 {
		t.Fatalf("the call whose Consume was held: %v, %d executions; want approval_store_failed, 0", err, c.runs.Load())
	}
	if err := (<-l.held)(); !errors.Is(err, approval.ErrCanceled) {
		t.Fatalf("the Consume arriving after the call cancelled it = %v, want ErrCanceled", err)
	}
	c.rest()
	if err := c.call("call_late", cycleArgs); err != nil || c.runs.Load() != 1 {
		t.Fatalf("the approved call made again: %v, %d executions; want it run once (the late Consume lost the approval)", err, c.runs.Load())
	}
	if err := c.call("call_late", cycleArgs); code(err) != taxonomy.CodeApprovalReplayed || c.runs.Load() != 1 {
		t.Fatalf("the call a third time: %v, %d executions; want approval_replayed, 1", err, c.runs.Load())
	}
}

// testLostAnswerKeepsARevocation: a revoked approval stays revoked through
// lost answers: a Deny whose Consume's answer is lost (the revocation is
// never undone), and a call on the approved row written back whose
// Consume's answer is lost (its Cancel does not free the nonce the Deny
// spent).
func testLostAnswerKeepsARevocation(t *testing.T, s approval.Store) {
	l := newLossy(s)
	c := newCycle(l, nil, nil)
	ctx := context.Background()

	req := c.ask(t, "call_revoked_lost", cycleArgs)
	must(t, c.desk.Approve(ctx, req, time.Hour))
	req, err := c.desk.Get(ctx, req.ID)
	must(t, err)
	l.lose.Store(1)
	if err := c.desk.Deny(ctx, req); err == nil {
		t.Fatal("a Deny whose revocation's answer was lost returned nil")
	}
	c.rest()
	for range 2 {
		if err := c.call("call_revoked_lost", cycleArgs); code(err) != taxonomy.CodeApprovalReplayed || c.runs.Load() != 0 {
			t.Fatalf("the call after a revocation whose answer was lost: %v, %d executions; want approval_replayed, 0", err, c.runs.Load())
		}
	}
	if err := c.desk.Deny(ctx, req); !errors.Is(err, approval.ErrDecided) {
		t.Fatalf("a Deny again: %v, want ErrDecided", err)
	}

	req = c.ask(t, "call_revoked", cycleArgs)
	must(t, c.desk.Approve(ctx, req, time.Hour))
	approved := snapshot(t, s, req.ID)
	req, err = c.desk.Get(ctx, req.ID)
	must(t, err)
	must(t, c.desk.Deny(ctx, req))
	writeBack(t, s, req.ID, approved)
	l.lose.Store(1)
	if err := c.call("call_revoked", cycleArgs); code(err) != taxonomy.CodeApprovalStoreFailed || c.runs.Load() != 0 {
		t.Fatalf("the revoked approval written back, its Consume's answer lost: %v, %d executions; want approval_store_failed, 0", err, c.runs.Load())
	}
	c.rest()
	if err := c.call("call_revoked", cycleArgs); code(err) != taxonomy.CodeApprovalReplayed || c.runs.Load() != 0 {
		t.Fatalf("the revoked approval written back, called again: %v, %d executions; want approval_replayed, 0", err, c.runs.Load())
	}
}

// testLostAnswerKeepsAReplacement: an expired approval's replacement whose
// Consume's answer is lost is not stuck (the call made again replaces it);
// a replaced approval written back, called on a replica whose clock is
// behind with its Consume's answer lost, stays spent.
func testLostAnswerKeepsAReplacement(t *testing.T, s approval.Store) {
	l := newLossy(s)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	slowClock, clk := clock.NewFake(t0), clock.NewFake(t0)
	var runs atomic.Int64
	slow, c := newCycle(l, slowClock, &runs), newCycle(l, clk, &runs)
	req := c.ask(t, "call_replaced", cycleArgs)
	must(t, c.desk.Approve(context.Background(), req, time.Minute))
	approved := snapshot(t, s, req.ID)
	clk.Advance(time.Hour)
	l.lose.Store(1)
	if err := c.call("call_replaced", cycleArgs); code(err) != taxonomy.CodeApprovalStoreFailed {
		t.Fatalf("the expired approval, its replacement's answer lost: %v, want approval_store_failed", err)
	}
	c.rest()
	if err := c.call("call_replaced", cycleArgs); code(err) != taxonomy.CodeApprovalExpired {
		t.Fatalf("the expired approval called again: %v, want approval_expired (a new request)", err)
	}
	writeBack(t, s, req.ID, approved)
	l.lose.Store(1)
	if err := slow.call("call_replaced", cycleArgs); code(err) != taxonomy.CodeApprovalStoreFailed || runs.Load() != 0 {
		t.Fatalf("the replaced approval written back, on a slow clock, its answer lost: %v, %d executions; want approval_store_failed, 0", err, runs.Load())
	}
	slow.rest()
	if err := slow.call("call_replaced", cycleArgs); code(err) != taxonomy.CodeApprovalReplayed || runs.Load() != 0 {
		t.Fatalf("the replaced approval written back, on a slow clock: %v, %d executions; want approval_replayed, 0", err, runs.Load())
	}
}

// testLostAnswersRaceRunsOnce: two replicas race for one approved call,
// 16 callers, in 5 rounds; every answer to the first replica's Consumes is
// lost (each applied, then cancelled by its caller). The call runs exactly
// once in each round: a Consume that landed and ran is never undone by
// the others' Cancels, and the approval is not lost to them.
func testLostAnswersRaceRunsOnce(t *testing.T, s approval.Store) {
	l := newLossy(s)
	var runs atomic.Int64
	a, b := newCycle(l, nil, &runs), newCycle(s, nil, &runs)
	const callers, rounds = 16, 5
	for round := range rounds {
		callID := fmt.Sprintf("call_lossy_%d", round)
		req := b.ask(t, callID, cycleArgs)
		must(t, b.desk.Approve(context.Background(), req, time.Hour))
		before := runs.Load()
		l.loseAll.Store(true)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range callers {
			c := a
			if i%2 == 1 {
				c = b
			}
			wg.Go(func() {
				<-start
				err := c.call(callID, cycleArgs)
				switch code(err) {
				case "", taxonomy.CodeApprovalReplayed, taxonomy.CodeApprovalStoreFailed:
				default:
					t.Errorf("round %d: a racer ended in %v", round, err)
				}
			})
		}
		close(start)
		wg.Wait()
		l.loseAll.Store(false)
		a.rest()
		if runs.Load()-before == 0 {
			if err := b.call(callID, cycleArgs); err != nil {
				t.Fatalf("round %d: nothing ran in the race, and the call after it: %v; want it to run", round, err)
			}
		}
		for _, c := range []cycle{a, b} {
			if err := c.call(callID, cycleArgs); code(err) != taxonomy.CodeApprovalReplayed {
				t.Fatalf("round %d: a call after the approval ran: %v, want approval_replayed", round, err)
			}
		}
		if n := runs.Load() - before; n != 1 {
			t.Fatalf("round %d: %d executions, want 1", round, n)
		}
	}
}
