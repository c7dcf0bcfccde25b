package recovery

import (
	"context"
	"encoding/json"
	"runtime/debug"
	"sync"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/internal/panicked"
)

// PanicEvent is a recovered panic, as the function of [WithOnPanic] receives
// it. It is a plain value, safe to read from many goroutines; new fields may
// be added.
type PanicEvent struct {
	Tool    string    // the tool's name; "" when the tool was not made by toolmw.Wrap
	CallID  string    // the model's call id, when known
	Attempt int       // the attempt that panicked, from 1; 0 when not known
	Value   any       // what the tool panicked with: may hold anything, for debug logs only
	Stack   []byte    // the panicking goroutine's stack
	Time    time.Time // when the panic was recovered, by the layer's clock ([WithClock])
}

// An Option configures [New].
//
// Options are applied once, by the constructor they are passed to; an
// Option may be reused and shared between goroutines.
type Option func(*config)

type config struct {
	onPanic func(ctx context.Context, e PanicEvent)
	goexit  bool
	clock   clock.Clock
	err     error // the first option given a value it cannot use
}

func newConfig(opts []Option) config {
	c := config{clock: clock.System}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithOnPanic sets a function called with each recovered panic, for debug
// logs. ctx is the call's context, for what a debug log takes from it (a
// trace id, a logger). f runs on the panicking goroutine, after the panic
// is stopped and before the call returns, with no lock held, and may run
// on many goroutines at once; a panic in f is dropped: the call still ends
// with the panic error. Without it (or with nil, the default) the panic
// value is dropped and no stack is taken.
func WithOnPanic(f func(ctx context.Context, e PanicEvent)) Option {
	return func(c *config) { c.onPanic = f }
}

// WithClock sets the clock that stamps [PanicEvent.Time] (nil means
// clock.System). Tests pass a *clock.Fake. The Option may be shared
// between goroutines.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) { cfg.clock = clock.Or(c) }
}

// Validate reports the first option given a value [New] cannot use, as a
// tool-definition-invalid/option_invalid error, or nil. Every value of
// today's options is usable (nil is the default), so it returns nil; it is
// there so that a start-up check treats every layer alike. It is safe for
// concurrent use.
func Validate(opts ...Option) error {
	return newConfig(opts).err
}

// WithGoexit runs each call's tool on a goroutine of its own and waits for
// it, so that a tool calling runtime.Goexit (t.FailNow in a test helper, a
// library that ends its goroutine) ends only that goroutine: the call ends
// as tool-failed/tool_exited instead of silently ending the caller's
// goroutine. Off by default, because the hand-off is dear: about 0.8 µs a
// call for the layer alone and 2 µs inside the default stack on a two-core
// machine (BenchmarkGoexitContained), more than the rest of the default
// stack together; turn it on for tools you do not trust.
func WithGoexit() Option {
	return func(c *config) { c.goexit = true }
}

// New returns the panic-recovery middleware. The returned Middleware and
// the Tools it makes are safe for concurrent use.
//
// By default the tool runs on the caller's goroutine; a runtime.Goexit in
// the tool then ends the caller's goroutine as Goexit always does (the
// deferred calls run; no result is returned to anyone). [WithGoexit]
// contains it.
func New(opts ...Option) toolmw.Middleware {
	c := newConfig(opts)
	if c.err != nil {
		return toolmw.Reject(c.err)
	}
	return func(next toolmw.Tool) toolmw.Tool {
		l := &layer{next: next, onPanic: c.onPanic, clock: c.clock}
		if c.goexit {
			return l.contained
		}
		return l.call
	}
}

func (l *layer) call(ctx context.Context, args json.RawMessage) (res toolmw.Result, err error) {
	returned := false
	defer func() {
		if returned {
			return
		}
		// A panic, or runtime.Goexit (recover returns nil, the goroutine
		// ends anyway and nobody sees these results).
		res, err = toolmw.Result{}, panicked.Err
		if v := recover(); v != nil && l.onPanic != nil {
			report(ctx, l.onPanic, l.clock, v)
		}
	}()
	res, err = l.next(ctx, args)
	returned = true
	return res, err
}

// layer is the middleware around one tool.
type layer struct {
	next    toolmw.Tool
	onPanic func(ctx context.Context, e PanicEvent)
	clock   clock.Clock
}

// execution carries one call's outcome from the tool's goroutine; they are
// pooled, so a call allocates nothing of its own.
type execution struct {
	res  toolmw.Result
	err  error
	done chan struct{} // buffered: the tool's goroutine never blocks
}

var executions = sync.Pool{New: func() any { return &execution{done: make(chan struct{}, 1)} }}

// contained runs the tool on a goroutine of its own (WithGoexit).
func (l *layer) contained(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	e := executions.Get().(*execution)
	go l.run(ctx, args, e)
	<-e.done
	res, err := e.res, e.err
	e.res, e.err = toolmw.Result{}, nil
	executions.Put(e)
	return res, err
}

// run calls the tool on its own goroutine and reports how it ended: it
// returned, it panicked (recovered here, on the panicking goroutine, so the
// function's stack is the tool's), or it called runtime.Goexit (recover
// returns nil and the goroutine ends after this deferred call).
func (l *layer) run(ctx context.Context, args json.RawMessage, e *execution) {
	returned := false
	defer func() {
		if !returned {
			e.res = toolmw.Result{}
			if v := recover(); v != nil {
				e.err = panicked.Err
				if l.onPanic != nil {
					report(ctx, l.onPanic, l.clock, v)
				}
			} else {
				e.err = panicked.Exited
			}
		}
		e.done <- struct{}{}
	}()
	e.res, e.err = l.next(ctx, args)
	returned = true
}

// report hands a recovered panic to h, stamped by clk, dropping a panic of
// h's own.
func report(ctx context.Context, h func(context.Context, PanicEvent), clk clock.Clock, v any) {
	defer func() { _ = recover() }()
	e := PanicEvent{Value: v, Stack: debug.Stack(), Time: clk.Now()}
	if call, ok := toolmw.CallFrom(ctx); ok {
		e.Tool, e.CallID, e.Attempt = call.Tool, call.ID, call.Attempt
	}
	h(ctx, e)
}
