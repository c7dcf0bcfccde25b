package timeout

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/internal/monotime"
	"github.com/toolmw/toolmw/middleware/internal/panicked"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns a layer that gives each attempt at most d. With d == 0 the
// layer is off and returns the tool unchanged; a negative d makes a
// [toolmw.Reject] middleware, which toolmw.Wrap reports at start-up (see
// [Validate]). The returned Middleware and the Tools it makes are safe for
// concurrent use.
func New(d time.Duration, opts ...Option) toolmw.Middleware {
	if err := Validate(d, opts...); err != nil {
		return toolmw.Reject(err)
	}
	cfg := newConfig(opts)
	msg := fmt.Sprintf("the attempt did not finish within %v", d)
	return func(next toolmw.Tool) toolmw.Tool {
		if d == 0 {
			return next
		}
		l := &limiter{config: cfg, d: d, msg: msg, next: next}
		if cfg.clock != clock.System {
			l.attemptClock = cfg.clock
		}
		return l.call
	}
}

// Late is the late outcome of a call abandoned by [WithAbandon]: what the
// tool returned after the layer had stopped waiting for it.
type Late struct {
	Call   toolmw.Call   // the call as it started; zero when the tool was not Wrap'd
	Result toolmw.Result // what the tool returned
	Err    error         // the error it returned, or nil
	Panic  any           // the value it panicked with, or nil
	After  time.Duration // how long after it was abandoned it returned
}

// limiter is the layer around one tool.
type limiter struct {
	config
	d    time.Duration
	msg  string
	next toolmw.Tool
	// attemptClock is the clock the attempt's deadline is read and
	// waited on: nil for clock.System (the monotonic clock and a
	// time.AfterFunc), else the layer's clock.
	attemptClock clock.Clock
	executing    atomic.Int64 // executions on the layer's goroutines: awaited or abandoned, not yet returned
}

// errTooManyAbandoned ends a call that WithMaxAbandoned does not start.
var errTooManyAbandoned = taxonomy.Transient(taxonomy.CodeTooManyAbandoned,
	"too many calls of this tool are running or timed out and are still running")

const msgDeadline = "the caller's deadline passed"

func (l *limiter) call(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	call, _ := toolmw.CallFrom(ctx)
	actx, own := ctx, false
	deadline := monotime.Of(l.clock).Add(l.d)
	if dl, ok := ctx.Deadline(); !ok || deadline.Before(dl) {
		a := newAttempt(ctx, deadline, l.attemptClock)
		actx, own = a, true
		defer a.release()
	}
	var res toolmw.Result
	var err error
	if !l.abandon {
		res, err = l.next(actx, args)
	} else {
		res, err = l.abandonable(actx, call, args)
	}
	if err == nil {
		return res, nil
	}
	switch ctx.Err() {
	case nil:
	case context.DeadlineExceeded:
		return toolmw.Result{}, taxonomy.Timeout(taxonomy.CodeDeadlineExceeded, msgDeadline, false).WithCause(err)
	default:
		return toolmw.Result{}, ctx.Err()
	}
	if own && actx.Err() != nil {
		return toolmw.Result{}, taxonomy.Timeout(taxonomy.CodeTimeout, l.msg, call.Idempotent).WithCause(err)
	}
	return res, err
}

// The states of an abandonable attempt.
const (
	running int32 = iota
	finished
	abandoned
)

// attempt is one abandonable run of the tool. Whichever side moves state
// away from running first decides who gets the outcome: the waiting caller
// (finished) or the late callback (abandoned).
type attempt struct {
	state       atomic.Int32
	done        chan outcome // buffered: the tool's goroutine never blocks
	abandonedAt time.Time    // written before state becomes abandoned
}

type outcome struct {
	res   toolmw.Result
	err   error
	panic any
}

func (l *limiter) abandonable(ctx context.Context, call toolmw.Call, args json.RawMessage) (toolmw.Result, error) {
	if !l.reserve() {
		return toolmw.Result{}, errTooManyAbandoned
	}
	a := &attempt{done: make(chan outcome, 1)}
	go l.run(ctx, a, call, args)
	var o outcome
	select {
	case o = <-a.done:
	case <-ctx.Done():
		a.abandonedAt = l.clock.Now()
		if a.state.CompareAndSwap(running, abandoned) {
			return toolmw.Result{}, ctx.Err()
		}
		o = <-a.done // it returned meanwhile
	}
	if o.panic != nil {
		panic(o.panic)
	}
	return o.res, o.err
}

// reserve takes one of the maxAbandoned slots for an execution about to
// start, or reports that none is free. The slot is taken before the
// execution starts, and any execution may be abandoned, so however many
// callers arrive at once, no more than maxAbandoned executions are ever
// running, awaited or abandoned. deliver gives the slot back once the tool
// has returned.
func (l *limiter) reserve() bool {
	for {
		n := l.executing.Load()
		if n >= int64(l.maxAbandoned) {
			return false
		}
		if l.executing.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// run calls the tool and hands its outcome to the caller, or, when the
// caller has gone, to the late callback. The hand-off is deferred, so a
// tool that panics or calls runtime.Goexit (which ends this goroutine, not
// the caller's) is reported too.
func (l *limiter) run(ctx context.Context, a *attempt, call toolmw.Call, args json.RawMessage) {
	var o outcome
	returned := false
	defer func() {
		if !returned {
			if p := recover(); p != nil {
				o = outcome{panic: p}
			} else {
				o = outcome{err: panicked.Exited} // runtime.Goexit
			}
		}
		l.deliver(a, call, o)
	}()
	o.res, o.err = l.next(ctx, args)
	returned = true
}

// deliver hands o to the waiting caller, or to the late callback when the
// caller has gone, and gives the execution's slot back: before the hand-off
// to a waiting caller (so that its next call finds the slot free), after
// the late callback returns for an abandoned one (whose goroutine runs
// until then).
func (l *limiter) deliver(a *attempt, call toolmw.Call, o outcome) {
	if a.state.CompareAndSwap(running, finished) {
		l.executing.Add(-1)
		a.done <- o
		return
	}
	defer l.executing.Add(-1)
	late := Late{Call: call, Result: o.res, Err: o.err, Panic: o.panic, After: l.clock.Now().Sub(a.abandonedAt)}
	if o.panic != nil {
		late.Err = panicked.Err
	}
	if l.onLate != nil {
		l.onLate(late)
	}
}
