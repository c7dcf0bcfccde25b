package recovery

import (
	"context"
	"encoding/json"
	"runtime/debug"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/panicked"
)

// PanicEvent is a recovered panic, as the handler of [WithHandler] receives
// it. It is a plain value, safe to read from many goroutines; new fields may
// be added.
type PanicEvent struct {
	Tool    string    // the tool's name; "" when the tool was not made by toolmw.Wrap
	CallID  string    // the model's call id, when known
	Attempt int       // the attempt that panicked, from 1; 0 when not known
	Value   any       // what the tool panicked with: may hold anything, for debug logs only
	Stack   []byte    // the panicking goroutine's stack
	Time    time.Time // when the panic was recovered
}

// Handler receives a recovered panic. ctx is the call's context, for what a
// debug log takes from it (a trace id, a logger). It runs on the panicking
// goroutine, after the panic is stopped and before the call returns, with
// no lock held, and may run on many goroutines at once. A panic in the
// handler is dropped: the call still ends with the panic error.
type Handler func(ctx context.Context, e PanicEvent)

// An Option configures [New].
//
// Options are applied once, by the constructor they are passed to; an
// Option may be reused and shared between goroutines.
type Option func(*config)

type config struct {
	handler Handler
	err     error // the first option given a value it cannot use
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithHandler hands each recovered panic to h, for debug logs. Without a
// handler (or with nil, the default) the panic value is dropped and no
// stack is taken. The Option may be shared between goroutines.
func WithHandler(h Handler) Option {
	return func(c *config) { c.handler = h }
}

// Validate reports the first option given a value [New] cannot use, as a
// tool-definition-invalid/option_invalid error, or nil. Every value of
// today's options is usable (nil is the default), so it returns nil; it is
// there so that a start-up check treats every layer alike. It is safe for
// concurrent use.
func Validate(opts ...Option) error {
	return newConfig(opts).err
}

// New returns the panic-recovery middleware. The returned Middleware and
// the Tools it makes are safe for concurrent use.
func New(opts ...Option) toolmw.Middleware {
	c := newConfig(opts)
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (res toolmw.Result, err error) {
			returned := false
			defer func() {
				if returned {
					return
				}
				// A panic, or runtime.Goexit (recover returns nil, the
				// goroutine ends anyway and nobody sees these results).
				res, err = toolmw.Result{}, panicked.Err
				if v := recover(); v != nil && c.handler != nil {
					report(ctx, c.handler, v)
				}
			}()
			res, err = next(ctx, args)
			returned = true
			return res, err
		}
	}
}

// report hands a recovered panic to h, dropping a panic of h's own.
func report(ctx context.Context, h Handler, v any) {
	defer func() { _ = recover() }()
	e := PanicEvent{Value: v, Stack: debug.Stack(), Time: time.Now()}
	if call, ok := toolmw.CallFrom(ctx); ok {
		e.Tool, e.CallID, e.Attempt = call.Tool, call.ID, call.Attempt
	}
	h(ctx, e)
}
