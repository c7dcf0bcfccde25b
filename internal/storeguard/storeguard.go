// Package storeguard is the one guard every layer with a shared store puts
// between itself and the store (breaker, ratelimit, runlimit, spend,
// approval, and budget's two stores): how long an operation waits, when
// the store is left alone, how a call the store could not serve ends, and
// how an operation the store must learn reaches it after an outage. What it
// promises is package store's documentation.
//
// It sits below package toolmw (budget uses it), so it marks nothing in the
// call record: Ask tells its caller that the call is decided without the
// store, and the caller marks the call degraded.
package storeguard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// ErrDeadline ends a call whose own deadline passed while the store was
// asked.
var ErrDeadline = taxonomy.Timeout(taxonomy.CodeDeadlineExceeded, "the caller's deadline passed", false).
	WithCause(context.DeadlineExceeded)

// A Guard stands between one layer and its store. Make it with [New]; it is
// safe for concurrent use.
type Guard struct {
	layer      string
	timeout    time.Duration
	onError    func(store.Error)
	failClosed bool
	clock      clock.Clock

	rest atomic.Int64 // unix nanoseconds until which the store is left alone

	// For package state: the calls decided without the store (fail
	// open), and the failures reported, by operation (a layer's few
	// fixed names).
	degraded atomic.Uint64
	errMu    sync.Mutex
	errs     map[string]uint64

	mu       sync.Mutex
	pending  []pending // operations that must still reach the store, oldest first
	trying   int       // operations taken from pending by the try under way
	flushing bool      // a try is scheduled or under way
}

// New returns the guard of layer (the name store.Error and
// toolmw.Call.Degraded give it), configured by c. A layer that fails closed
// reports the errors of Ask with Refused set. c nil means the system clock.
func New(layer string, cfg store.Config, failClosed bool, c clock.Clock) *Guard {
	if cfg.Timeout <= 0 {
		cfg.Timeout = store.DefaultTimeout
	}
	g := &Guard{layer: layer, timeout: cfg.Timeout, onError: cfg.OnError,
		failClosed: failClosed, clock: clock.Or(c)}
	state.Register(state.Default, g, publish)
	return g
}

// publish reports g's failures and degraded decisions to package state,
// under the port's name: every store port counts without user wiring.
func publish(g *Guard, emit state.Emit) {
	emit(state.StoreDegraded, g.layer, "", float64(g.degraded.Load()))
	g.errMu.Lock()
	defer g.errMu.Unlock()
	for op, n := range g.errs {
		emit(state.StoreErrors, g.layer, op, float64(n))
	}
}

// Timeout is the bound of each operation.
func (g *Guard) Timeout() time.Duration { return g.timeout }

// pending is an operation Eventually queued.
type pending struct {
	op, key string
	f       func(context.Context) error
	until   time.Time // when it is given up
}

// NewOp returns a new operation id: 32 random hexadecimal digits, unique
// to one call, so that a store can apply an operation that arrives twice,
// or late, once (see the Store ports of runlimit, spend and approval).
func NewOp() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// Ask asks the store through f, with ctx bounded by the timeout, unless
// the store rests. When f answered, it returns false and nil: the layer
// uses the answer. When ctx itself ended first, it returns the error to
// end the call with (ErrDeadline, or ctx's error); the store is not to
// blame and nothing is reported. Otherwise the store failed, did not answer
// in time or rests: Ask reports op and key and returns true: the layer
// decides on its own state, or refuses, and marks the call degraded. A
// failure rests the store unless it is of part of the store only
// (store.Partial).
func (g *Guard) Ask(ctx context.Context, op, key string, f func(context.Context) error) (local bool, end error) {
	return g.AskAs(ctx, op, key, g.failClosed, f)
}

// AskAs is Ask for a layer that fails closed for some calls and not for
// others: refused is what its reports say of this call.
func (g *Guard) AskAs(ctx context.Context, op, key string, refused bool, f func(context.Context) error) (local bool, end error) {
	if g.Resting() {
		g.report(op, key, store.ErrResting, refused)
		g.decidedLocally(refused)
		return true, nil
	}
	sctx, cancel := context.WithTimeout(ctx, g.timeout)
	err := f(sctx)
	cancel()
	if err == nil {
		return false, nil
	}
	if cerr := ctx.Err(); cerr != nil {
		if cerr == context.DeadlineExceeded {
			return false, ErrDeadline
		}
		return false, cerr
	}
	g.failed(op, key, err, refused)
	g.decidedLocally(refused)
	return true, nil
}

// decidedLocally counts a call Ask left to the layer: degraded unless the
// layer refuses it.
func (g *Guard) decidedLocally(refused bool) {
	if !refused {
		g.degraded.Add(1)
	}
}

// Eventually tells the store through f something it must learn even if it
// is down now: how a call ended, or what a call decided without it did.
// Its reports never say Refused: the call was decided before.
// f must be idempotent (the layers give each call an operation id, see
// [NewOp]): it may reach the store more than once. Eventually tries f at
// once, bounded by the timeout but not by the cancellation of ctx, which
// may have ended with the call, unless the store rests; a failure is
// reported and rests the store. An operation not done then is queued and
// tried again in the background, after each rest, for up to store.GiveUp;
// at most store.MaxPending are kept, and one dropped is reported with
// store.ErrDropped. Eventually does not wait for the queue, and no
// goroutine waits for it: a timer tries the queue again after each rest.
func (g *Guard) Eventually(ctx context.Context, op, key string, f func(context.Context) error) {
	if !g.Resting() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.timeout)
		err := f(sctx)
		cancel()
		if err == nil {
			return
		}
		g.failed(op, key, err, false)
	}
	g.queue(pending{op: op, key: key, f: f, until: time.Now().Add(store.GiveUp)})
}

// Pending returns how many operations wait to reach the store, or are
// being tried.
func (g *Guard) Pending() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending) + g.trying
}

// queue adds p to the operations waiting for the store and schedules their
// next try, unless one is scheduled.
func (g *Guard) queue(p pending) {
	g.mu.Lock()
	g.pending = append(g.pending, p)
	dropped := g.trim()
	start := !g.flushing
	g.flushing = true
	g.mu.Unlock()
	g.drop(dropped, errTooMany)
	if start {
		g.schedule()
	}
}

// schedule tries the pending operations again when the store's rest ends,
// or a rest from now if it does not rest (it failed in part only). A timer,
// not a goroutine, waits meanwhile.
func (g *Guard) schedule() {
	d := time.Duration(g.rest.Load() - g.clock.Now().UnixNano())
	if d <= 0 || d > store.Rest {
		d = store.Rest
	}
	time.AfterFunc(d, g.flush)
}

// flush tries each pending operation once, oldest first, one at a time,
// while the store does not rest; what fails or is not tried waits for the
// next try, and what has waited past GiveUp is dropped.
func (g *Guard) flush() {
	g.mu.Lock()
	batch := g.pending
	g.pending, g.trying = nil, len(batch)
	g.mu.Unlock()
	var keep, gone []pending
	var last error
	for i, p := range batch {
		if g.Resting() {
			keep = append(keep, batch[i:]...)
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
		err := p.f(ctx)
		cancel()
		switch {
		case err == nil:
		case !time.Now().Before(p.until):
			g.failed(p.op, p.key, err, false)
			gone, last = append(gone, p), err
		default:
			g.failed(p.op, p.key, err, false)
			keep = append(keep, p)
		}
	}
	g.drop(gone, fmt.Errorf("%w after %v: %w", store.ErrDropped, store.GiveUp, last))
	g.mu.Lock()
	g.pending, g.trying = append(keep, g.pending...), 0
	dropped := g.trim()
	again := len(g.pending) > 0
	g.flushing = again
	g.mu.Unlock()
	g.drop(dropped, errTooMany)
	if again {
		g.schedule()
	}
}

// errTooMany is reported for an operation dropped from a full queue.
var errTooMany = fmt.Errorf("%w: more than %d waited", store.ErrDropped, store.MaxPending)

// trim drops the oldest pending operations past MaxPending and returns
// them. g.mu is held.
func (g *Guard) trim() []pending {
	n := len(g.pending) - store.MaxPending
	if n <= 0 {
		return nil
	}
	dropped := slices.Clone(g.pending[:n])
	g.pending = g.pending[n:]
	return dropped
}

// drop reports each of ps as given up, with err.
func (g *Guard) drop(ps []pending, err error) {
	for _, p := range ps {
		g.report(p.op, p.key, err, false)
	}
}

// Resting reports whether the store is left alone now.
func (g *Guard) Resting() bool { return g.clock.Now().UnixNano() < g.rest.Load() }

// Failed reports that the store failed now and, unless the failure is of
// part of it only, leaves it alone for a rest.
func (g *Guard) Failed(op, key string, err error) { g.failed(op, key, err, g.failClosed) }

// failed is Failed, reporting refused as the call's outcome: false for an
// operation that comes after the call (Eventually's).
func (g *Guard) failed(op, key string, err error, refused bool) {
	if !store.Partial(err) {
		g.rest.Store(g.clock.Now().Add(store.Rest).UnixNano())
	}
	g.report(op, key, err, refused)
}

// Report reports an operation the store did not complete, without resting
// it; Refused is set when the guard's layer fails closed.
func (g *Guard) Report(op, key string, err error) { g.report(op, key, err, g.failClosed) }

// Corrupt reports an answer of the store with state it cannot parse
// (store.ErrCorrupt), on which the layer refuses the call: Refused is set,
// whether or not the layer fails closed on an outage. The store answered,
// so it does not rest.
func (g *Guard) Corrupt(op, key string, err error) { g.report(op, key, err, true) }

// After reports an operation that came after the call (a deposit, a
// release, a settle) the store did not complete or answered with corrupt
// state: Refused is false, and the store does not rest.
func (g *Guard) After(op, key string, err error) { g.report(op, key, err, false) }

func (g *Guard) report(op, key string, err error, refused bool) {
	g.errMu.Lock()
	if g.errs == nil {
		g.errs = map[string]uint64{}
	}
	g.errs[op]++
	g.errMu.Unlock()
	if g.onError != nil {
		g.onError(store.Error{Layer: g.layer, Op: op, Key: key, Err: err, Refused: refused})
	}
}
