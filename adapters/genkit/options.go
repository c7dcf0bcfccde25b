package genkit

import (
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

// Option configures [New] or [Wrap].
type Option func(*options)

type options struct {
	profile    schema.Profile
	profileSet bool
	countCalls bool
	specs      map[string]toolmw.Spec
	err        error
}

// defaultProfile is the schema profile of New's tools: Genkit is used with
// Gemini above all, and its googlegenai plugin turns a tool's JSON Schema
// into Gemini's OpenAPI subset by dropping what that subset lacks.
const defaultProfile = schema.Gemini

func (o *options) reject(format string, args ...any) {
	if o.err == nil {
		o.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("adapters/genkit: "+format, args...))
	}
}

// evaluateOptions applies opts in order to the defaults; nil options are
// skipped.
func evaluateOptions(opts []Option) options {
	o := options{profile: defaultProfile}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// WithProfile sets the schema profile the box's tools are rendered in for
// [New] (default schema.Gemini): the dialect of the model API the Genkit
// plugin serves. schema.Gemini fits the googlegenai and vertexai plugins
// (constraints Gemini lacks move into the descriptions, instead of being
// dropped by the plugin); schema.Plain fits the compat_oai (OpenAI),
// anthropic and ollama plugins, which pass JSON Schema on as it is. A
// profile the box cannot describe a tool in makes New fail naming the
// tool. An unknown profile, or WithProfile given to Wrap (whose tools keep
// the schemas Genkit has for them), is a tool-definition-invalid/
// option_invalid error.
func WithProfile(p schema.Profile) Option {
	return func(o *options) {
		valid := false
		for _, q := range schema.Profiles() {
			valid = valid || p == q
		}
		if !valid {
			o.reject("WithProfile(%d): unknown schema profile", int(p))
			return
		}
		o.profile, o.profileSet = p, true
	}
}

// WithCallsCounted makes every call take one attempt from the context's
// run budget (budget.WithRun) before it runs, and answers a call whose
// tool has no attempt left with run-limit-exceeded without running it. Use
// it for a stack without a retry layer: the retry layer (in
// middleware.Default) takes an attempt for each of its attempts itself, so
// with both every call would count twice.
func WithCallsCounted() Option {
	return func(o *options) { o.countCalls = true }
}

// WithSpecs describes, for [Wrap], the application's own Genkit tools that
// the stack should know more of than their name: Idempotent above all (only
// an idempotent tool has its untyped failures and timeouts repeated by the
// stack's retry and hedge layers; typed failures say themselves whether
// they may be retried), and a Description for the approval layer's
// summaries (Genkit's own description when empty). A tool without a spec is
// toolmw.Spec{Name: its name}. An invalid spec, two specs of one name, or
// WithSpecs given to New (whose box declares its tools itself) is a
// tool-definition-invalid error.
func WithSpecs(specs ...toolmw.Spec) Option {
	return func(o *options) {
		if o.specs == nil {
			o.specs = make(map[string]toolmw.Spec, len(specs))
		}
		for _, sp := range specs {
			if err := sp.Validate(); err != nil {
				if o.err == nil {
					o.err = err
				}
				return
			}
			if _, dup := o.specs[sp.Name]; dup {
				o.reject("WithSpecs: two specs name the tool %s", sp.Name)
				return
			}
			o.specs[sp.Name] = sp
		}
	}
}
