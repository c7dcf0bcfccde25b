package recovery

import (
	"context"
	"encoding/json"
	"runtime/debug"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/panicked"
)

// Handler receives a recovered panic: the call's context and Call (the zero
// Call when the tool was not made by toolmw.Wrap), the panic value and the
// panicking goroutine's stack. It runs on that goroutine, after the panic is
// stopped and before the call returns, with no lock held. A panic in the
// handler is dropped: the call still ends with the panic error.
type Handler func(ctx context.Context, call toolmw.Call, value any, stack []byte)

// An Option configures [New].
//
// Options are applied once, by the constructor they are passed to; an Option may be reused and shared between goroutines.
type Option func(*config)

type config struct {
	handler Handler
}

// WithHandler hands each recovered panic to h, for debug logs. Without a
// handler (or with nil) the panic value is dropped and no stack is taken.
func WithHandler(h Handler) Option {
	return func(c *config) { c.handler = h }
}

// New returns the panic-recovery middleware.
func New(opts ...Option) toolmw.Middleware {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
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
	call, _ := toolmw.CallFrom(ctx)
	h(ctx, call, v, debug.Stack())
}
