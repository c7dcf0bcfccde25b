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
// completed them (a Typed tool's InputSchema filled in). The slice is a
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
//
// It is a plain value, safe to read from many goroutines; do not modify one that is shared.
type Definition struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// noInput is the schema of a tool that says nothing of its arguments.
var noInput = json.RawMessage(`{"type":"object"}`)

// Definitions returns the registered tools' definitions in registration
// order, their input schemas rendered for profile p: a Typed tool's from
// its input type (rendered once per profile, then reused), a hand-written
// one as given, after checking that p's API accepts it ([schema.Check]). A
// tool without an input schema is shown as taking any object, except
// under OpenAIStrict, where it is an error. The first tool p cannot
// describe makes the error, a tool-definition-invalid one naming the tool.
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
	switch {
	case w.typed != nil:
		s, err := w.typed.Render(p)
		if err != nil {
			return Definition{}, err
		}
		d.InputSchema = s
	case w.spec.InputSchema != nil:
		if err := schema.Check(w.spec.InputSchema, p); err != nil {
			return Definition{}, err
		}
		d.InputSchema = w.spec.InputSchema
	case p == schema.OpenAIStrict:
		return Definition{}, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaNotStrict,
			"the tool has no input schema, and OpenAI strict mode needs one")
	default:
		d.InputSchema = noInput
	}
	return d, nil
}

// notFound names the requested tool only when it is a valid tool name: the
// name comes from the model and is otherwise withheld.
func notFound(name string) error {
	if !ValidName(name) {
		return taxonomy.New(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, "no tool has the requested name")
	}
	return taxonomy.New(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, "no tool named "+name).WithTool(name)
}
