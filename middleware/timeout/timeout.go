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

// Late is the late outcome of a call abandoned by [WithAbandon]: what the
// tool returned after the layer had stopped waiting for it.
//
// It is a plain value, safe to read from many goroutines; do not modify one that is shared.
type Late struct {
	Call   toolmw.Call   // the call as it started; zero when the tool was not Wrap'd
	Result toolmw.Result // what the tool returned
	Err    error         // the error it returned, or nil
	Panic  any           // the value it panicked with, or nil
	After  time.Duration // how long after it was abandoned it returned
}

// Option configures the timeout layer.
//
// Options are applied once, by the constructor they are passed to; an Option may be reused and shared between goroutines.
type Option func(*config)

type config struct {
	clock        clock.Clock
	abandon      bool
	onLate       func(Late)
	maxAbandoned int
	err          error // the first invalid option value
}

// DefaultMaxAbandoned is how many executions of one tool [WithAbandon]'s
// layer lets run at once, awaited or abandoned, before it refuses new calls;
// so at most this many abandoned executions are ever still running.
const DefaultMaxAbandoned = 100

// WithMaxAbandoned bounds, per wrapped tool, the executions that
// [WithAbandon] has stopped waiting for and that are still running (each
// holds a goroutine and whatever the tool holds). The bound is exact under
// any concurrency: since any execution may be abandoned, a slot is reserved
// (atomically) before an execution starts and given back when the tool
// returns, so at most n executions run at once, awaited or abandoned. While
// n of them run, a new call is not started: it ends at once as
// tool-failed/too_many_abandoned, retryable, since nothing ran. In abandon
// mode the bound is therefore also a cap on the tool's concurrent calls. 0
// means [DefaultMaxAbandoned]; a negative n is invalid. Without WithAbandon
// it has no effect.
func WithMaxAbandoned(n int) Option {
	return func(c *config) {
		switch {
		case n < 0:
			if c.err == nil {
				c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
					fmt.Sprintf("timeout: WithMaxAbandoned(%d): the bound must not be negative", n))
			}
		case n > 0:
			c.maxAbandoned = n
		}
	}
}

// WithAbandon makes the layer return at the deadline without waiting for a
// tool that ignores its context; what the tool returns later goes to
// [WithOnLate], which it needs (without, the options are invalid). Without
// WithAbandon the layer waits for the tool (cooperative).
func WithAbandon() Option {
	return func(c *config) { c.abandon = true }
}

// WithOnLate sets a function called with what an abandoned tool returned
// ([WithAbandon]), once per abandoned call, on the abandoned tool's
// goroutine — possibly from many goroutines at once, so it must be safe
// for that. nil means the default: it is discarded once the goroutine
// ends.
func WithOnLate(f func(Late)) Option {
	return func(c *config) { c.onLate = f }
}

// WithClock sets the clock the layer reads and waits on (nil means
// clock.System): the attempt's deadline passes when that clock reaches it,
// and an abandoned call's lateness is measured on it. Tests pass a
// *clock.Fake; see the package documentation for the deadline the tool
// sees. The Option may be shared between goroutines.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) { cfg.clock = clock.Or(c) }
}

func newConfig(opts []Option) config {
	c := config{clock: clock.System, maxAbandoned: DefaultMaxAbandoned}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.abandon && c.onLate == nil && c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			"timeout: WithAbandon needs WithOnLate: what an abandoned tool returns would be lost without a word")
	}
	return c
}

// Validate reports a negative d as a tool-definition-invalid error with
// code option_invalid, or nil: the error that toolmw.Wrap reports for the
// middleware [New] makes of it, or the first invalid option value. A d of 0
// is valid (the layer is off); nil options are the defaults. It is safe for
// concurrent use.
func Validate(d time.Duration, opts ...Option) error {
	if d < 0 {
		return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("timeout: New(%v): the timeout must not be negative", d))
	}
	return newConfig(opts).err
}

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
