package classify

import (
	"context"
	"encoding/json"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/mapper"
)

// An Option configures [New].
//
// Options are applied once, by the constructor they are passed to; an Option may be reused and shared between goroutines.
type Option func(*config)

type config struct {
	m *mapper.Map
}

// WithMap sets the map that classifies errors. The default, and a nil m, is
// mapper.Default().
func WithMap(m *mapper.Map) Option {
	return func(c *config) { c.m = m }
}

// Validate reports the first invalid option value as a
// tool-definition-invalid/option_invalid error, or nil. Every value of this
// package's options is usable (a nil map means mapper.Default()), so it
// returns nil; it is here so that every layer is checked the same way.
func Validate(opts ...Option) error { return nil }

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
