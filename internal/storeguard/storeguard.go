// Package storeguard is what the layers that keep their state in a shared
// store and decide on their own when it fails (ratelimit's admissions,
// runlimit's call counts, spend's reservations) have in common: how long a call waits for the store, when the store is left
// alone, and how a call the store could not serve ends or is decided on
// the replica's own state.
package storeguard

import (
	"context"
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
}

// Ask asks the store through f, with ctx bounded by the timeout, unless
// the store rests. When f answered, it returns false and nil: the layer
// uses the answer. When ctx itself ended first, it returns the error to
// end the call with (ErrDeadline, or ctx's error); the store is not to
// blame and nothing is reported. Otherwise the store failed, did not answer
// in time or rests: Ask reports op, marks the call degraded and returns
// true: the layer decides on its own state.
func (g *Guard) Ask(ctx context.Context, op string, f func(context.Context) error) (local bool, end error) {
	if g.now().UnixNano() < g.rest.Load() {
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

// After tells the store how a call it admitted ended, through f: bounded
// by the timeout but not by the cancellation of ctx, which may have ended
// with the call. A failure is reported and rests the store.
func (g *Guard) After(ctx context.Context, op string, f func(context.Context) error) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.Timeout)
	err := f(sctx)
	cancel()
	if err != nil {
		g.failed(op, err)
	}
}

// failed records that the store failed now and reports it.
func (g *Guard) failed(op string, err error) {
	g.rest.Store(g.now().Add(Rest).UnixNano())
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
