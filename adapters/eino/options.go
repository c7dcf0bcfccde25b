package eino

import (
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// DefaultMediaLimits are the bounds on the media of one tool result when
// [WithMultimodal] is given without bounds of its own: the strictest of the
// model APIs Eino's chat models serve (an image at most 5 MiB of base64, as
// Anthropic's Messages API takes it; a document and all of one result's
// media at most 30 MiB).
var DefaultMediaLimits = turn.MediaLimits{Image: 5 << 20, Document: 30 << 20, Total: 30 << 20}

// DefaultMaxTools is how many tool names one [Middleware] keeps a
// wrapped toolmw stack for when no other bound is given (see
// [WithMaxTools]).
const DefaultMaxTools = 1024

// Option configures [New] and [Middleware]. An option that only one of
// them reads is ignored by the other, as its doc comment says. An invalid
// option is a tool-definition-invalid/option_invalid error: New returns
// it; Middleware ends the run of every call with it.
type Option func(*options)

type options struct {
	profile    schema.Profile
	countCalls bool
	multimodal bool
	limits     turn.MediaLimits
	specs      map[string]toolmw.Spec
	maxTools   int
	err        error
}

func defaultOptions() options {
	return options{profile: schema.Plain, limits: DefaultMediaLimits, maxTools: DefaultMaxTools}
}

func (o *options) reject(format string, args ...any) {
	if o.err == nil {
		o.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("adapters/eino: "+format, args...))
	}
}

// evaluateOptions copies the defaults, then applies opts in order; nil
// options are skipped.
func evaluateOptions(opts []Option) options {
	o := defaultOptions()
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// WithProfile sets the schema profile the box's input schemas are rendered
// in (default schema.Plain, a JSON Schema every chat model of Eino takes).
// Pick the profile of the model API the agent's chat model talks to when it
// is pickier: schema.OpenAIStrict for OpenAI's strict function calling,
// schema.Anthropic for Claude, schema.Gemini for Gemini. An unknown profile
// is a tool-definition-invalid/option_invalid error from [New]. Read by New
// only.
func WithProfile(p schema.Profile) Option {
	return func(o *options) {
		if p < 0 || int(p) >= len(schema.Profiles()) {
			o.reject("WithProfile(%d): unknown schema profile", int(p))
			return
		}
		o.profile = p
	}
}

// WithCallsCounted makes every call take one attempt from the context's
// run budget (budget.WithRun) before it reaches the box or the stack, and
// answers a call whose tool has no attempt left with run-limit-exceeded
// without calling it. Use it for a box or a stack without a retry layer:
// the retry layer (in middleware.Default) takes an attempt for each of its
// attempts itself, so with both every call would count twice. Read by
// [New] and [Middleware].
func WithCallsCounted() Option {
	return func(o *options) { o.countCalls = true }
}

// WithMultimodal makes the tools of [New] Eino enhanced tools
// (tool.EnhancedInvokableTool), whose results reach the chat model as
// multimodal tool messages (schema.ToolResult): a result's images and PDFs
// go as image and file parts, within limits (zero limits mean
// [DefaultMediaLimits]), and everything else as enveloped text (see the
// package doc, Results with parts). Give it only when the agent's chat
// model sends multimodal tool messages to its API; without it every result
// is text, its media described. Middleware reads the limits for the
// user's own enhanced tools, which are multimodal already. Negative limits
// are a tool-definition-invalid/option_invalid error.
func WithMultimodal(limits turn.MediaLimits) Option {
	return func(o *options) {
		if limits.Image < 0 || limits.Document < 0 || limits.Total < 0 {
			o.reject("WithMultimodal: the media limits must not be negative")
			return
		}
		if limits == (turn.MediaLimits{}) {
			limits = DefaultMediaLimits
		}
		limits.PlainText = false // Eino's tool results have no plain-text document part
		o.multimodal, o.limits = true, limits
	}
}

// WithSpecs declares the user's own Eino tools to the stack of
// [Middleware], by name: whether a tool is idempotent or honours
// idempotency keys (so timeouts and untyped failures are retried), its
// input schema, its cap on argument size. A tool without a spec here is
// wrapped as toolmw.Spec{Name: name}: not idempotent, any object as
// arguments. A spec that does not validate, or two with the same name, is
// a tool-definition-invalid error. Read by Middleware only.
func WithSpecs(specs ...toolmw.Spec) Option {
	return func(o *options) {
		if o.specs == nil {
			o.specs = make(map[string]toolmw.Spec, len(specs))
		}
		for _, s := range specs {
			if err := s.Validate(); err != nil {
				if o.err == nil {
					o.err = err
				}
				return
			}
			if _, dup := o.specs[s.Name]; dup {
				o.reject("WithSpecs: two specs name the tool %s", s.Name)
				return
			}
			o.specs[s.Name] = s
		}
	}
}

// WithMaxTools bounds how many tool names [Middleware] keeps a wrapped
// stack for (default [DefaultMaxTools]): each tool the ToolsNode offers
// gets its own, with its own per-tool state (breaker, rate limit …), made
// on its first call. Eino passes the middleware only calls of the tools it
// offers, so the bound is met only by a program that offers more tools
// than it says; a call of one more tool then ends the run with a
// tool-definition-invalid error. n < 1 is a
// tool-definition-invalid/option_invalid error. Read by Middleware only.
func WithMaxTools(n int) Option {
	return func(o *options) {
		if n < 1 {
			o.reject("WithMaxTools(%d): the bound must be at least 1", n)
			return
		}
		o.maxTools = n
	}
}
