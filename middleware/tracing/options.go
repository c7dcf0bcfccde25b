package tracing

import (
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
)

// Option configures New and Attempts.
type Option func(*config)

type config struct {
	tp            trace.TracerProvider
	mp            metric.MeterProvider
	clock         clock.Clock
	codes         map[string]bool // the codes written as they are; nil until WithCodes
	contentBytes  int             // the bound on each content attribute; 0: content is not recorded
	scrubber      *scrub.Scrubber // scrubs content and descriptions; nil until newConfig
	noDescription bool            // WithoutDescription
	agent         string          // WithAgentName; "" when not given
	toolName      string          // WithToolName; "" when not given
	err           error           // the first invalid option value
}

// The bounds of what the layer copies into a span.
const (
	// DefaultContentBytes is the bound on each content attribute when
	// [WithContent] is given 0.
	DefaultContentBytes = 4 << 10
	// MinContentBytes and MaxContentBytes bound what [WithContent] takes.
	MinContentBytes = 16
	MaxContentBytes = 64 << 10
	// MaxDescriptionBytes bounds gen_ai.tool.description.
	MaxDescriptionBytes = 1 << 10
	// MaxAgentNameBytes bounds gen_ai.agent.name (see [ValidAgentName]).
	MaxAgentNameBytes = 64
)

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			"tracing: "+fmt.Sprintf(format, args...))
	}
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
				c.reject("WithCodes: a code must be snake_case, at most 64 bytes")
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

// WithClock sets the clock that times calls. One reading when a call
// starts and one when it ends give the span its start and end timestamps
// and the duration histogram its value, so the two agree exactly; events
// are stamped by it too. By default, and when c is nil, the clock is
// clock.System, and the readings are the tracer's own: the OpenTelemetry
// Go SDK's span start and end times (another tracer's spans are stamped
// from the system clock).
func WithClock(c clock.Clock) Option {
	return func(cfg *config) { cfg.clock = c }
}

// WithContent records the opt-in content attributes of the GenAI
// conventions on each call's span: gen_ai.tool.call.arguments (the
// arguments' JSON) and, after a successful call, gen_ai.tool.call.result
// (the result's text; see the package documentation). They are off by
// default. Each is scrubbed whole with the layer's scrubber ([WithScrubber])
// and then cut to at most maxBytes bytes (at a character boundary, ending
// in "…"): 0 means [DefaultContentBytes] (4 KiB); a value below
// [MinContentBytes] (16) or above [MaxContentBytes] (64 KiB) is invalid.
//
// The content is the tool's input and output: scrubbing removes the
// secrets and identifiers the scrubber knows, not everything a person
// would call private. Turn it on where the telemetry store may hold such
// data.
func WithContent(maxBytes int) Option {
	return func(c *config) {
		switch {
		case maxBytes == 0:
			c.contentBytes = DefaultContentBytes
		case maxBytes < MinContentBytes || maxBytes > MaxContentBytes:
			c.reject("WithContent(%d): the bound is 0 (the default, %d bytes) or from %d to %d bytes",
				maxBytes, DefaultContentBytes, MinContentBytes, MaxContentBytes)
		default:
			c.contentBytes = maxBytes
		}
	}
}

// WithScrubber sets the scrubber of the content attributes ([WithContent])
// and of gen_ai.tool.description. nil means scrub.Default().
func WithScrubber(s *scrub.Scrubber) Option {
	return func(c *config) { c.scrubber = s }
}

// WithoutDescription leaves gen_ai.tool.description off the spans. By
// default a span carries the tool's Spec.Description, scrubbed and cut to
// [MaxDescriptionBytes], when it is not empty.
func WithoutDescription() Option {
	return func(c *config) { c.noDescription = true }
}

// WithAgentName names the agent that executes the tools: gen_ai.agent.name
// on the spans and on the metrics. A name given to a call's context with
// [ContextWithAgent] wins over it. "" means none (the default); a name that
// is not valid ([ValidAgentName]) is invalid.
func WithAgentName(name string) Option {
	return func(c *config) {
		if name != "" && !ValidAgentName(name) {
			c.reject("WithAgentName: an agent name is 1 to %d bytes of printable UTF-8 in which the scrubber finds nothing", MaxAgentNameBytes)
			return
		}
		c.agent = name
	}
}

// WithToolName names the tool for calls whose context carries no
// toolmw.Call: a layer used outside toolmw.Wrap, around a tool of its own.
// gen_ai.tool.name is required by the conventions: without a Call and
// without this option, a span and the metrics name the tool [UnknownTool].
// Inside Wrap the Call's name wins. "" means none (the default); a name
// that is not a valid tool name (toolmw.ValidName) is invalid.
func WithToolName(name string) Option {
	return func(c *config) {
		if name != "" && !toolmw.ValidName(name) {
			c.reject("WithToolName: a tool name matches ^[a-zA-Z0-9_-]{1,64}$")
			return
		}
		c.toolName = name
	}
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
	if c.scrubber == nil {
		c.scrubber = scrub.Default()
	}
	c.clock = clock.Or(c.clock)
	return c
}

// Validate reports the first invalid option value as a
// tool-definition-invalid/option_invalid error, or nil. Nil providers, a
// nil clock and a nil scrubber mean the defaults; a malformed code given
// to [WithCodes], a content bound out of range, a malformed agent or tool
// name are invalid.
func Validate(opts ...Option) error {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c.err
}
