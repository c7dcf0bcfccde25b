package ratelimit

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/keyed"
	"github.com/toolmw/toolmw/middleware/internal/monotime"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the rate-limiting middleware: at most limit calls a second on
// average, in bursts of at most burst (0 means 1), per tool unless
// [WithShared] or [WithKey] say otherwise. With WithShared, limit and burst
// are not used: the shared limiter has its own. A limit of rate.Inf switches
// the layer off. A value it cannot use makes a [toolmw.Reject] middleware:
// toolmw.Wrap reports the error at start-up (see [Validate]). The returned
// Middleware and the Tools it makes are safe for concurrent use.
func New(limit rate.Limit, burst int, opts ...Option) toolmw.Middleware {
	c := newConfig(limit, burst, opts)
	switch {
	case c.err != nil:
		return toolmw.Reject(c.err)
	case c.store.s != nil && c.limit != rate.Inf:
		return newStored(c)
	case c.sharing.Shared != nil:
		l := c.published(c.sharing.Shared, "")
		return func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				return l.call(ctx, next, args)
			}
		}
	case c.limit == rate.Inf:
		return func(next toolmw.Tool) toolmw.Tool { return next }
	case c.sharing.Key != nil:
		key := c.sharing.Key
		limiters := keyed.New(c.sharing.Max, c.newLimiter)
		return func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				call, _ := toolmw.CallFrom(ctx)
				return limiters.Get(key(call)).call(ctx, next, args)
			}
		}
	}
	return func(next toolmw.Tool) toolmw.Tool {
		l := c.newLimiter("")
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			if !l.name.IsSet() {
				call, _ := toolmw.CallFrom(ctx)
				l.name.Learn(call.Tool)
			}
			return l.call(ctx, next, args)
		}
	}
}

// limiter is one rate.Limiter and the layer's settings.
type limiter struct {
	*config
	lim *rate.Limiter

	// For package state: the tool's name or the key (nil: shared, or not
	// called yet), the time calls waited and the calls refused.
	name    state.Name
	waited  atomic.Int64 // nanoseconds
	refused atomic.Uint64
}

// publish reports l's waits and refusals to package state.
func publish(l *limiter, emit state.Emit) {
	name := l.name.String()
	emit(state.RateLimitWait, name, "", time.Duration(l.waited.Load()).Seconds())
	emit(state.RateLimitRefusals, name, "", float64(l.refused.Load()))
}

// call takes a token, waiting for it when allowed, and runs next.
//
// A call that will be refused takes nothing: the wait is decided from the
// limiter's tokens before a reservation is made. Reserving and cancelling
// instead would cost capacity, since x/time/rate's CancelAt gives back only
// what no later reservation has built on: under concurrent refusals the
// limiter admitted a fraction of its rate.
func (l *limiter) call(ctx context.Context, next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	now := monotime.Of(l.clock)
	if l.lim.AllowN(now, 1) {
		return next(ctx, args)
	}
	if err := l.refusal(ctx, now, l.delay(now)); err != nil {
		l.refused.Add(1)
		return toolmw.Result{}, err
	}
	r := l.lim.ReserveN(now, 1)
	if !r.OK() {
		l.refused.Add(1)
		return toolmw.Result{}, errNever
	}
	if d := r.DelayFrom(now); d > 0 {
		if err := l.wait(ctx, r, now, d); err != nil {
			if _, ok := taxonomy.From(err); ok && err != errDeadline {
				l.refused.Add(1)
			}
			return toolmw.Result{}, err
		}
		l.waited.Add(int64(d))
	}
	return next(ctx, args)
}

// delay returns how long after now the limiter will have a token for one
// more call, from its tokens alone (nothing is reserved), or
// rate.InfDuration when it never will.
func (l *limiter) delay(now time.Time) time.Duration {
	limit := l.lim.Limit()
	if limit == rate.Inf {
		return 0
	}
	if l.lim.Burst() < 1 || limit <= 0 {
		return rate.InfDuration
	}
	missing := 1 - l.lim.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) * missing / float64(limit))
}

// refusal returns the error a call that would wait d from now ends in, or
// nil when it may wait that long.
func (l *limiter) refusal(ctx context.Context, now time.Time, d time.Duration) error {
	if d == rate.InfDuration {
		return errNever
	}
	if deadline, ok := ctx.Deadline(); d > l.maxWait || ok && now.Add(d).After(deadline) {
		return errLimited.WithRetryAfter(d)
	}
	return nil
}

// wait waits d for the reservation r made at now, or gives it back and
// returns why not.
func (l *limiter) wait(ctx context.Context, r *rate.Reservation, now time.Time, d time.Duration) error {
	// The reservation may wait longer than decided before it was made,
	// when other calls reserved meanwhile; then it is given back, as
	// rarely as that race is won.
	if err := l.refusal(ctx, now, d); err != nil {
		r.CancelAt(now)
		return err
	}
	t := l.clock.NewTimer(d)
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		t.Stop()
		r.CancelAt(monotime.Of(l.clock))
		if err := ctx.Err(); err != context.DeadlineExceeded {
			return err
		}
		return errDeadline
	}
}

var (
	// errDeadline: the caller's deadline passed during the wait (the clock
	// and the context's timer disagreed about when it would).
	errDeadline = taxonomy.Timeout(taxonomy.CodeDeadlineExceeded, "the caller's deadline passed", false).
			WithCause(context.DeadlineExceeded)
	errLimited = taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeRateLimited,
		"the tool's rate limit is reached; try again later")
	errNever = taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeRateLimited,
		"the tool's rate limit allows no more calls").WithRetryable(false)
)

// invalid returns the error of a value the layer cannot use.
func invalid(format string, args ...any) error {
	return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
		fmt.Sprintf("ratelimit: "+format, args...))
}
