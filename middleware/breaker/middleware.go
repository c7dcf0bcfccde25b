package breaker

import (
	"context"
	"encoding/json"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/keyed"
)

// New returns the circuit-breaking middleware. By default each tool it wraps
// gets its own breaker, made when it wraps the tool; [WithShared] and
// [WithKey] share breakers between tools. See the package documentation for
// the defaults and for what counts as a failure. An option given a value it
// cannot use, or a shared Breaker made with one, makes a [toolmw.Reject]
// middleware: toolmw.Wrap reports the error at start-up (see [Validate]).
// The returned Middleware and the Tools it makes are safe for concurrent
// use.
func New(opts ...Option) toolmw.Middleware {
	c := newConfig(opts)
	switch {
	case c.err != nil:
		return toolmw.Reject(c.err)
	case c.shared != nil && c.shared.err != nil:
		return toolmw.Reject(c.shared.err)
	case c.shared != nil:
		b := c.shared
		return func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				return b.call(ctx, next, args)
			}
		}
	case c.key != nil:
		breakers := keyed.New(c.maxKeys, func(key string) *Breaker {
			b := newBreaker(c)
			b.name.Store(&key)
			return b
		})
		return func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				call, _ := toolmw.CallFrom(ctx)
				return breakers.Get(c.key(call)).call(ctx, next, args)
			}
		}
	}
	return func(next toolmw.Tool) toolmw.Tool {
		b := newBreaker(c)
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			if b.name.Load() == nil {
				call, _ := toolmw.CallFrom(ctx)
				b.name.CompareAndSwap(nil, &call.Tool)
			}
			return b.call(ctx, next, args)
		}
	}
}
