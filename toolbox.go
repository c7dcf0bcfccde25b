package toolmw

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

// Toolbox holds registered tools and calls them by name. Middlewares given
// to NewToolbox wrap every tool registered after; those given to Register
// wrap one tool, inside the box's. A Toolbox is safe for concurrent use; no
// lock is held while a tool runs.
type Toolbox struct {
	mws   []Middleware
	mu    sync.RWMutex
	tools map[string]Tool
	specs []*wrapped
}

// NewToolbox returns an empty Toolbox whose tools are all wrapped with mws
// (the first outermost).
func NewToolbox(mws ...Middleware) *Toolbox {
	return &Toolbox{mws: mws, tools: make(map[string]Tool)}
}

// Register validates and wraps tool (see [Wrap]) and adds it under
// spec.Name. A name already registered is a duplicate-tool error; a bad spec
// a tool-definition-invalid one.
func (b *Toolbox) Register(spec Spec, tool Tool, mws ...Middleware) error {
	all := make([]Middleware, 0, len(b.mws)+len(mws))
	all = append(append(all, b.mws...), mws...)
	tool, w, err := wrap(spec, tool, all)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tools == nil {
		b.tools = make(map[string]Tool)
	}
	if _, dup := b.tools[spec.Name]; dup {
		return taxonomy.New(taxonomy.KindDuplicateTool, taxonomy.CodeDuplicateTool,
			"a tool named "+spec.Name+" is already registered").WithTool(spec.Name)
	}
	b.tools[spec.Name] = tool
	b.specs = append(b.specs, w)
	return nil
}

// Call calls the tool registered under name. An unknown name is a
// tool-not-found error. Pass the model's call id with [WithCallID].
func (b *Toolbox) Call(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	b.mu.RLock()
	tool, ok := b.tools[name]
	b.mu.RUnlock()
	if !ok {
		return Result{}, notFound(name)
	}
	return tool(ctx, args)
}

// Specs returns the registered specs in registration order, as Wrap
// completed them (a Typed tool's InputSchema, and OutputSchema when its
// output type is a JSON object, filled in). The slice is a
// copy.
func (b *Toolbox) Specs() []Spec {
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := make([]Spec, len(b.specs))
	for i, w := range b.specs {
		out[i] = w.spec
	}
	return out
}

// Definition is a tool as a model API is shown it: its name, description
// and input schema in one profile's dialect. The JSON names are MCP's; an
// adapter maps them onto its API's (OpenAI's "parameters", Anthropic's
// "input_schema").
type Definition struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// InputSchema is the schema of the arguments in the profile's dialect.
	// It is nil (and left out of the JSON) only under schema.Gemini, for a
	// tool that takes no parameters: Gemini declares such a function
	// without parameters, and rejects parameters that are an object
	// without properties.
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// OutputSchema is the schema of the tool's structured output
	// (Spec.OutputSchema) in the profile's dialect, or nil when the tool
	// declares none or the profile cannot express it.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// AnyObjectSchema is the input schema of a tool registered without one:
// it takes any JSON object, which is what Wrap then lets through (only the
// size cap applies). Definitions shows such a tool with it, and so must
// anything else that publishes one (an MCP server), so that what a client
// is shown and what the tool accepts never disagree.
const AnyObjectSchema = `{"type":"object"}`

// Definitions returns the registered tools' definitions in registration
// order, their input schemas rendered for profile p: a Typed tool's from
// its input type (rendered once per profile, then reused), a hand-written
// one as p's API is shown it, after checking that p's API accepts it
// ([schema.Adapt]: as given, except that Gemini is shown it without a root
// $schema, and without parameters when it has no properties). A tool
// without an input schema takes any object: it is shown with
// [AnyObjectSchema] (under Gemini, without parameters), except under
// OpenAIStrict, which cannot describe one and makes it an error. The first
// tool p cannot describe makes the error, a tool-definition-invalid one
// naming the tool.
//
// A tool's output schema, when it has one ([Spec.OutputSchema]), is
// rendered the same way, once per profile: a Typed tool's from its output
// type, a hand-written one adapted. A profile that cannot express it
// (OpenAIStrict and a map, Gemini and a $ref) shows the tool without one
// rather than failing: of the APIs these profiles serve, only MCP (Plain,
// which expresses every output schema Wrap accepts) takes an output
// schema.
func (b *Toolbox) Definitions(p schema.Profile) ([]Definition, error) {
	b.mu.RLock()
	ws := append([]*wrapped(nil), b.specs...)
	b.mu.RUnlock()
	out := make([]Definition, 0, len(ws))
	for _, w := range ws {
		d, err := w.definition(p)
		if err != nil {
			return nil, named(err, w.spec.Name)
		}
		out = append(out, d)
	}
	return out, nil
}

func (w *wrapped) definition(p schema.Profile) (Definition, error) {
	d := Definition{Name: w.spec.Name, Description: w.spec.Description}
	var err error
	switch {
	case w.typed != nil:
		d.InputSchema, err = w.typed.Render(p)
	case w.spec.InputSchema == nil && p == schema.OpenAIStrict:
		err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaNotStrict,
			"the tool has no input schema, and OpenAI strict mode needs one")
	default:
		d.InputSchema, err = w.shown(p, false)
	}
	if err != nil {
		return Definition{}, err
	}
	// An output schema p cannot express is left out, not an error: no
	// model API but MCP's (Plain, which expresses every one Wrap accepts)
	// takes one.
	switch {
	case w.typedOut != nil:
		d.OutputSchema, _ = w.typedOut.Render(p)
	case w.spec.OutputSchema != nil:
		d.OutputSchema, _ = w.shown(p, true)
	}
	return d, nil
}

// shown returns the spec's own input schema (AnyObjectSchema without one),
// or its own output schema when output is set, as profile p's API is shown
// it, adapted once per profile.
func (w *wrapped) shown(p schema.Profile, output bool) (json.RawMessage, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := shownKey{p, output}
	if r, ok := w.adapted[k]; ok {
		return r.schema, r.err
	}
	in := w.spec.InputSchema
	if output {
		in = w.spec.OutputSchema
	}
	if in == nil {
		in = json.RawMessage(AnyObjectSchema)
	}
	out, err := schema.Adapt(in, p)
	if w.adapted == nil {
		w.adapted = map[shownKey]adaptation{}
	}
	w.adapted[k] = adaptation{out, err}
	return out, err
}

// shownKey names one of a spec's own schemas as one profile shows it.
type shownKey struct {
	profile schema.Profile
	output  bool // the output schema, not the input schema
}

// adaptation is a spec's own schema as one profile shows it.
type adaptation struct {
	schema json.RawMessage
	err    error
}

// notFound names the requested tool only when it is a valid tool name: the
// name comes from the model and is otherwise withheld.
func notFound(name string) error {
	if !ValidName(name) {
		return taxonomy.New(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, "no tool has the requested name")
	}
	return taxonomy.New(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, "no tool named "+name).WithTool(name)
}
