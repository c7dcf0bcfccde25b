// Package storeguard is what the layers that keep their state in a shared
// store and decide on their own when it fails (ratelimit's admissions,
// runlimit's call counts, spend's reservations) have in common: how long a call waits for the store, when the store is left
// alone, and how a call the store could not serve ends or is decided on
// the replica's own state.
package storeguard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// Rest is how long a layer leaves a store alone after it failed: calls are
// decided locally meanwhile, so an outage costs at most one timeout per
// rest, not one per call, and the store is tried again after it.
const Rest = 250 * time.Millisecond

// ErrDeadline ends a call whose own deadline passed while the store was
// asked.
var ErrDeadline = taxonomy.Timeout(taxonomy.CodeDeadlineExceeded, "the caller's deadline passed", false).
	WithCause(context.DeadlineExceeded)

// A Guard stands between one layer and its store. Set its fields before
// the first call; it is then safe for concurrent use.
type Guard struct {
	// Layer is the name a call decided locally is marked degraded with
	// (toolmw.SetDegraded).
	Layer string
	// Timeout bounds each operation of the store.
	Timeout time.Duration
	// Resting is reported for a call decided locally because the store
	// failed moments ago.
	Resting error
	// OnError reports an operation the store did not complete, with the
	// name the layer gave Ask or After; nil means no report.
	OnError func(op string, err error)
	// Now is the layer's clock; nil means time.Now.
	Now func() time.Time

	rest atomic.Int64 // unix nanoseconds until which the store is left alone

	mu       sync.Mutex
	pending  []pending // operations that must still reach the store, oldest first
	trying   int       // operations taken from pending by the try under way
	flushing bool      // a try is scheduled or under way
}

// pending is an operation Eventually queued.
type pending struct {
	op    string
	f     func(context.Context) error
	until time.Time // when it is given up
}

// MaxPending bounds the operations a Guard keeps for the store while it is
// down (see [Guard.Eventually]); past it the oldest is dropped and
// reported. At most a few hundred bytes each, so a few MiB in all.
const MaxPending = 10000

// GiveUp is how long an operation queued by [Guard.Eventually] is tried
// before it is dropped and reported: longer than any failover, shorter
// than a run's state lives in a store.
const GiveUp = 10 * time.Minute

// ErrDropped is reported, wrapped, for an operation [Guard.Eventually]
// gave up on: the store may never learn of it.
var ErrDropped = errors.New("storeguard: the operation never reached the store and was dropped")

// NewOp returns a new operation id: 32 random hexadecimal digits, unique
// to one call, so that a store can apply an operation that arrives twice,
// or late, once (see the Store ports of runlimit and spend).
func NewOp() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// Partial reports whether err says that only part of the store failed (an
// error with a PartialOutage method returning true, such as one node of a
// cluster): the store then leaves that part alone itself, and a layer does
// not rest the whole store for it.
func Partial(err error) bool {
	var p interface{ PartialOutage() bool }
	return errors.As(err, &p) && p.PartialOutage()
}

// Ask asks the store through f, with ctx bounded by the timeout, unless
// the store rests. When f answered, it returns false and nil: the layer
// uses the answer. When ctx itself ended first, it returns the error to
// end the call with (ErrDeadline, or ctx's error); the store is not to
// blame and nothing is reported. Otherwise the store failed, did not answer
// in time or rests: Ask reports op, marks the call degraded and returns
// true: the layer decides on its own state. A failure rests the store,
// unless it is of part of the store only (an error with a PartialOutage
// method that returns true, as a cluster's Store returns for one node):
// the rest of the store goes on answering the other calls.
func (g *Guard) Ask(ctx context.Context, op string, f func(context.Context) error) (local bool, end error) {
	if g.resting() {
		g.report(op, g.Resting)
	} else {
		sctx, cancel := context.WithTimeout(ctx, g.Timeout)
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
		g.failed(op, err)
	}
	toolmw.SetDegraded(ctx, g.Layer)
	return true, nil
}

// Eventually tells the store through f something it must learn even if it
// is down now: how a call ended, or what a call decided without it did.
// f must be idempotent (the layers give each call an operation id, see
// [NewOp]): it may reach the store more than once. Eventually tries f at
// once, bounded by the timeout but not by the cancellation of ctx, which
// may have ended with the call, unless the store rests; a failure is
// reported and rests the store. An operation not done then is queued and
// tried again in the background, after each rest, for up to [GiveUp];
// at most [MaxPending] are kept, and one dropped is reported with
// [ErrDropped]. Eventually does not wait for the queue, and no goroutine
// waits for it: a timer tries the queue again after each rest.
func (g *Guard) Eventually(ctx context.Context, op string, f func(context.Context) error) {
	if !g.resting() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.Timeout)
		err := f(sctx)
		cancel()
		if err == nil {
			return
		}
		g.failed(op, err)
	}
	g.queue(pending{op: op, f: f, until: time.Now().Add(GiveUp)})
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
	d := time.Duration(g.rest.Load() - g.now().UnixNano())
	if d <= 0 || d > Rest {
		d = Rest
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
		if g.resting() {
			keep = append(keep, batch[i:]...)
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), g.Timeout)
		err := p.f(ctx)
		cancel()
		switch {
		case err == nil:
		case !time.Now().Before(p.until):
			g.failed(p.op, err)
			gone, last = append(gone, p), err
		default:
			g.failed(p.op, err)
			keep = append(keep, p)
		}
	}
	g.drop(gone, fmt.Errorf("%w after %v: %w", ErrDropped, GiveUp, last))
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
var errTooMany = fmt.Errorf("%w: more than %d waited", ErrDropped, MaxPending)

// trim drops the oldest pending operations past MaxPending and returns
// them. g.mu is held.
func (g *Guard) trim() []pending {
	n := len(g.pending) - MaxPending
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
		g.report(p.op, err)
	}
}

// resting reports whether the store is left alone now.
func (g *Guard) resting() bool { return g.now().UnixNano() < g.rest.Load() }

// failed reports that the store failed now and, unless the failure is of
// part of it only, leaves it alone for a rest.
func (g *Guard) failed(op string, err error) {
	if !Partial(err) {
		g.rest.Store(g.now().Add(Rest).UnixNano())
	}
	g.report(op, err)
}

func (g *Guard) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Guard) report(op string, err error) {
	if g.OnError != nil {
		g.OnError(op, err)
	}
}
