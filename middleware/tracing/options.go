package tracing

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/taxonomy"
)

// Option configures New and Attempts.
type Option func(*config)

type config struct {
	tp    trace.TracerProvider
	mp    metric.MeterProvider
	clock clock.Clock
	codes map[string]bool // the codes written as they are; nil until WithCodes
	err   error           // the first invalid option value
}

// WithCodes names codes, besides the taxonomy's built-in catalogue and the
// codes declared with taxonomy.Declare, that the layer writes as they are.
// Declaring a code where it is named is simpler: WithCodes is for codes
// that only this layer should let through. Every other code is written as
// [OtherCode]. A
// code that is not well formed (taxonomy.ValidCode) is invalid. Repeated
// options add up.
func WithCodes(codes ...string) Option {
	return func(c *config) {
		for _, code := range codes {
			if !taxonomy.ValidCode(code) {
				if c.err == nil {
					c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
						"tracing: WithCodes: a code must be snake_case, at most 64 bytes")
				}
				continue
			}
			if c.codes == nil {
				c.codes = map[string]bool{}
			}
			c.codes[code] = true
		}
	}
}

// bounded returns code if the layer writes it as it is — a built-in or
// declared code (taxonomy.Declared), or one given to WithCodes —, else
// OtherCode.
func (c *config) bounded(code string) string {
	if taxonomy.Declared(code) || c.codes[code] {
		return code
	}
	return OtherCode
}

// WithTracerProvider sets the provider of the tracer. By default, and when
// tp is nil, the global provider (otel.GetTracerProvider) is looked up when
// the middleware wraps a tool. Attempts ignores it: it adds its events to
// the span already in the context.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider sets the provider of the meter. By default, and when mp
// is nil, the global provider (otel.GetMeterProvider) is looked up when the
// middleware wraps a tool.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithClock sets the clock that times calls for the duration histogram;
// clock.System by default. Span timestamps are the tracer's own.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) { cfg.clock = c }
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	c.clock = clock.Or(c.clock)
	return c
}

// Validate reports the first invalid option value as a
// tool-definition-invalid/option_invalid error, or nil. Nil providers and a
// nil clock mean the defaults; only a malformed code given to [WithCodes]
// is invalid.
func Validate(opts ...Option) error {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c.err
}
