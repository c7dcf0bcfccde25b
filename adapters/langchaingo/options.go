package langchaingo

import (
	"fmt"

	"github.com/tmc/langchaingo/callbacks"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// DefaultMaxParallel is how many of one model turn's tool calls
// [Tools.CallTools] runs at once when no other bound is given. (The agent
// executor calls its tools one after another whatever it is.)
const DefaultMaxParallel = turn.DefaultMaxParallel

// MinCallIDKey is the shortest key [WithCallIDKey] takes, in bytes.
const MinCallIDKey = 16

// Option configures [New] and [Wrap]. Each option's documentation says
// which of them takes it; given to the other, it is a
// tool-definition-invalid/option_invalid error.
type Option func(*options)

type options struct {
	profile     schema.Profile
	inDesc      bool
	maxParallel int
	countCalls  bool
	handler     callbacks.Handler
	idKey       []byte
	spec        *toolmw.Spec
	newOnly     string // the first option given that only New takes
	err         error
}

var defaultOptions = options{
	profile:     schema.Plain,
	inDesc:      true,
	maxParallel: DefaultMaxParallel,
}

func (o *options) reject(format string, args ...any) {
	if o.err == nil {
		o.err = optionError(format, args...)
	}
}

func optionError(format string, args ...any) error {
	return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
		fmt.Sprintf("adapters/langchaingo: "+format, args...))
}

// evaluateOptions copies the defaults, then applies opts in order; nil
// options are skipped.
func evaluateOptions(opts []Option) options {
	o := defaultOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

func (o *options) onlyNew(name string) {
	if o.newOnly == "" {
		o.newOnly = name
	}
}

// WithProfile sets the JSON Schema dialect the tools' input schemas are
// rendered in, for [Tools.Definitions] and for the descriptions (see
// [WithSchemaInDescription]); default schema.Plain, which every model API
// langchaingo serves takes. schema.OpenAIStrict renders them for OpenAI's
// strict mode (every property required, optional ones nullable,
// additionalProperties false) and marks every definition Strict; a box
// holding a tool strict mode cannot describe then makes [New] fail, naming
// the tool. schema.Anthropic and schema.Gemini render them as those APIs
// take them. An unknown profile is an option_invalid error. New only.
func WithProfile(p schema.Profile) Option {
	return func(o *options) {
		o.onlyNew("WithProfile")
		valid := false
		for _, q := range schema.Profiles() {
			valid = valid || p == q
		}
		if !valid {
			o.reject("WithProfile(%d): unknown schema profile", int(p))
			return
		}
		o.profile = p
	}
}

// WithSchemaInDescription sets whether each tool's description, as
// tools.Tool.Description returns it, ends with its input schema (default
// true): "Input: a JSON object with this JSON Schema: {…}". langchaingo's
// agents show the model a tool's name and description only — the MRKL and
// conversational agents in their prompt, the OpenAI functions agent as a
// function taking one string — so without it the model cannot know the
// arguments. Turn it off when the model is shown the real schemas instead
// ([Tools.Definitions] with llms.WithTools, or [Tools.Model]). New only.
func WithSchemaInDescription(on bool) Option {
	return func(o *options) {
		o.onlyNew("WithSchemaInDescription")
		o.inDesc = on
	}
}

// WithMaxParallel bounds how many of one model turn's tool calls
// [Tools.CallTools] runs at once (default [DefaultMaxParallel]); 1 runs
// them one after another, in the model's order. 0 means the default; a
// negative n is an option_invalid error. New only.
func WithMaxParallel(n int) Option {
	return func(o *options) {
		o.onlyNew("WithMaxParallel")
		switch {
		case n < 0:
			o.reject("WithMaxParallel(%d): the bound must not be negative", n)
		case n > 0:
			o.maxParallel = n
		}
	}
}

// WithCallsCounted makes every call take one attempt from the context's
// run budget (budget.WithRun) before it reaches the tool, and answers a
// call whose tool has no attempt left with run-limit-exceeded without
// calling it (which ends the run: see the package documentation). Use it
// for tools whose stack has no retry layer: the retry layer (in
// middleware.Default) takes an attempt for each of its attempts itself, so
// with both every call would count twice. New and Wrap.
func WithCallsCounted() Option {
	return func(o *options) { o.countCalls = true }
}

// WithCallbacksHandler reports each call of the tools to h, as
// langchaingo's own tools report theirs: HandleToolStart with the input
// the agent passed, HandleToolEnd with what the model is shown (the
// toolmw.ForModel envelope), and HandleToolError with the [*Stop] when a
// call ends the run. No tool's error reaches h. Pass the handler the
// executor has (agents.WithCallbacksHandler) to see the calls in its log.
// A nil h reports nothing. New and Wrap.
func WithCallbacksHandler(h callbacks.Handler) Option {
	return func(o *options) { o.handler = h }
}

// WithCallIDKey keys the call ids derived for the agent's calls (see the
// package documentation) with key, a secret of at least [MinCallIDKey]
// bytes that every process serving the same runs must share (like the
// approval desk's seal key). Without it a derived id is keyed by the run's
// id alone, so someone who knows the run id and reads a call id in a log
// can test guesses of the call's arguments against it; with it they
// cannot. New and Wrap; the same key must be given to both for their
// calls in one run to be told apart by id only.
func WithCallIDKey(key []byte) Option {
	return func(o *options) {
		if len(key) < MinCallIDKey {
			o.reject("WithCallIDKey: the key has %d bytes, want at least %d", len(key), MinCallIDKey)
			return
		}
		o.idKey = append([]byte(nil), key...)
	}
}

// WithSpec sets the toolmw Spec [Wrap] gives the wrapped tool: what the
// layers see of it. Its Name, when empty, is the langchaingo tool's name
// made valid for toolmw (see Wrap), and its Description, when empty, the
// tool's description; the input schema is Wrap's own (an object with one
// string property, "input"), so spec.InputSchema must be nil. Set
// Idempotent or HonoursKeys here to let the retry layer retry the tool's
// untyped failures. Wrap only.
func WithSpec(spec toolmw.Spec) Option {
	return func(o *options) {
		if spec.InputSchema != nil {
			o.reject("WithSpec: the wrapped tool's input schema is Wrap's own; leave InputSchema nil")
			return
		}
		s := spec
		o.spec = &s
	}
}
