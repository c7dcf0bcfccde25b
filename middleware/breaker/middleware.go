package breaker

import (
	"context"
	"encoding/json"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/keyed"
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
	case c.sharing.Shared != nil && c.sharing.Shared.err != nil:
		return toolmw.Reject(c.sharing.Shared.err)
	case c.sharing.Shared != nil:
		b := c.sharing.Shared
		return func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				return b.call(ctx, next, args)
			}
		}
	case c.sharing.Key != nil:
		key := c.sharing.Key
		breakers := keyed.New(c.sharing.Max, func(key string) *Breaker {
			b := newBreaker(c)
			b.name.Store(&key)
			return b
		})
		return func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				call, _ := toolmw.CallFrom(ctx)
				return breakers.Get(key(call)).call(ctx, next, args)
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
