package classify

import (
	"context"
	"encoding/json"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/mapper"
)

// New returns the classification middleware. It holds no per-tool state; a
// mapper.Map is immutable, so one middleware may serve many tools at once.
func New(opts ...Option) toolmw.Middleware {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	m := c.m
	if m == nil {
		m = mapper.Default()
	}
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			res, err := next(ctx, args)
			if err == nil {
				return res, nil
			}
			call, _ := toolmw.CallFrom(ctx)
			return res, m.ClassifyContext(ctx, call.Tool, call.Idempotent, err)
		}
	}
}
