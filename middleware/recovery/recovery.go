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

// PanicEvent is a recovered panic, as the function of [WithOnPanic] receives
// it. New fields may be added.
type PanicEvent struct {
	Tool    string    // the tool's name; "" when the tool was not made by toolmw.Wrap
	CallID  string    // the model's call id, when known
	Attempt int       // the attempt that panicked, from 1; 0 when not known
	Value   any       // what the tool panicked with: may hold anything, for debug logs only
	Stack   []byte    // the panicking goroutine's stack
	Time    time.Time // when the panic was recovered, by the layer's clock ([WithClock])
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
