package genkit

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

// Box is what the adapter needs of a tool collection: its tools'
// definitions in a schema profile, and a way to call one by name.
// *toolmw.Toolbox is one; so is anything that routes calls elsewhere (a
// remote MCP server, a test double). Box must be safe for concurrent use:
// Genkit runs one turn's calls at once.
type Box interface {
	Definitions(p schema.Profile) ([]toolmw.Definition, error)
	Call(ctx context.Context, name string, args json.RawMessage) (toolmw.Result, error)
}

var _ Box = (*toolmw.Toolbox)(nil)

// Tools is a Box's tools as Genkit tools, offered to a generation as a
// Genkit middleware: pass it to ai.WithUse. [New] renders the definitions
// once; each generation then gets its own tool values (Genkit registers a
// tool in the generation's registry, which must not race with another
// generation's), built from them.
//
// A Tools is safe for concurrent use: one may serve many generations at
// once, each with its own context (and run budget).
type Tools struct {
	box  Box
	opts options
	defs []*definition
}

var _ ai.Middleware = (*Tools)(nil)

// definition is one tool as rendered at New. The schema is kept as JSON
// and decoded afresh for every reader: Genkit's plugins write into the
// schema maps they are given (googlegenai copies a title into anyOf
// members), which must not reach another generation's.
type definition struct {
	name        string
	description string
	schema      json.RawMessage // nil: the tool takes no parameters (Gemini)
}

// New renders box's tools as Genkit tools, with their input schemas in the
// profile of [WithProfile] (default schema.Gemini), and returns them as a
// Genkit middleware. Pass it to ai.WithUse on genkit.Generate (or on a
// prompt's Execute); it offers the box's tools to that generation, each
// call going through the box, and answers a call of a tool the generation
// did not offer. Tools are rendered as they are when New runs: one
// registered later is neither shown to the model nor called.
//
// A tool the profile cannot describe makes New fail with the box's
// tool-definition-invalid error naming the tool; an invalid option, or a
// tool name toolmw does not take, is a tool-definition-invalid error.
func New(box Box, opts ...Option) (*Tools, error) {
	o := evaluateOptions(opts)
	switch {
	case o.err != nil:
		return nil, o.err
	case o.specs != nil:
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			"adapters/genkit: New: WithSpecs is an option of Wrap; a box's tools have their Specs")
	case box == nil:
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid, "adapters/genkit: New: the box is nil")
	}
	defs, err := box.Definitions(o.profile)
	if err != nil {
		return nil, err
	}
	t := &Tools{box: box, opts: o}
	for _, d := range defs {
		if !toolmw.ValidName(d.Name) {
			return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeNameInvalid,
				"adapters/genkit: New: the box has a tool whose name is not a valid tool name")
		}
		def := &definition{name: d.Name, description: d.Description}
		if s := bytes.TrimSpace(d.InputSchema); len(s) > 0 && string(s) != "null" {
			m, err := decodeSchema(s)
			if err != nil {
				return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaNotObject,
					"adapters/genkit: the tool's input schema is not a JSON object").WithTool(d.Name)
			}
			// The model API reads the schema as its own dialect; the Plain
			// profile's declaration of 2020-12 tells it nothing.
			delete(m, "$schema")
			if def.schema, err = json.Marshal(m); err != nil {
				return nil, err
			}
		}
		t.defs = append(t.defs, def)
	}
	return t, nil
}

// decodeSchema returns a fresh map of the JSON object doc, its numbers as
// json.Number so that they keep their exact text.
func decodeSchema(doc json.RawMessage) (map[string]any, error) {
	if doc == nil {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaNotObject, "the input schema is not a JSON object")
	}
	return m, nil
}

// Names returns the names of the tools offered to the model, in the box's
// order.
func (t *Tools) Names() []string {
	out := make([]string, len(t.defs))
	for i, d := range t.defs {
		out[i] = d.name
	}
	return out
}

// Definitions returns the tools as Genkit shows them to a model, in the
// box's order: name, description and input schema. Each call returns new
// values, which the caller may change.
func (t *Tools) Definitions() []*ai.ToolDefinition {
	out := make([]*ai.ToolDefinition, len(t.defs))
	for i, d := range t.defs {
		out[i] = d.toolDefinition()
	}
	return out
}

func (d *definition) toolDefinition() *ai.ToolDefinition {
	in, _ := decodeSchema(d.schema) // checked at New
	return &ai.ToolDefinition{
		Name:        d.name,
		Description: d.description,
		InputSchema: in,
		Metadata:    map[string]any{"multipart": true},
	}
}

// Name returns the name Genkit knows the middleware by in its logs:
// "toolmw/tools". It implements ai.Middleware.
func (t *Tools) Name() string { return "toolmw/tools" }

// New returns the hooks of one generation; Genkit calls it once per
// genkit.Generate. It implements ai.Middleware: pass t to ai.WithUse
// rather than calling it.
//
// The hooks offer the box's tools to the generation (Hooks.Tools), give
// each call the model's tool request ref as its toolmw call id
// (Hooks.WrapTool), and make every call of a tool the generation did not
// offer answer tool-not-found as a tool response instead of failing the
// generation (Hooks.WrapModel).
func (t *Tools) New(ctx context.Context) (*ai.Hooks, error) {
	g := &generation{tools: t}
	hooks := &ai.Hooks{
		Tools:     make([]ai.Tool, len(t.defs)),
		WrapModel: g.wrapModel,
		WrapTool:  g.wrapTool,
	}
	for i, d := range t.defs {
		hooks.Tools[i] = &genTool{gen: g, def: d, name: d.name}
	}
	return hooks, nil
}

// generation is the state of one genkit.Generate a Tools serves: the
// registry Genkit registered its tools in (a child registry of that
// generation's own), where it answers the tools the generation did not
// offer.
type generation struct {
	tools *Tools

	mu  sync.Mutex
	reg api.Registry
}

// registry returns the generation's registry, nil before its tools were
// registered.
func (g *generation) registry() api.Registry {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reg
}

func (g *generation) setRegistry(r api.Registry) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.reg == nil {
		g.reg = r
	}
}

// wrapModel is the WrapModel hook: once the model has answered, every tool
// request naming a tool the model was not offered gets a tool of that
// name in the generation's registry that answers tool-not-found, before
// Genkit looks the tools up (it fails the generation on a name it cannot
// find, and runs any tool registered under the name, offered or not).
func (g *generation) wrapModel(ctx context.Context, p *ai.ModelParams, next ai.ModelNext) (*ai.ModelResponse, error) {
	resp, err := next(ctx, p)
	if err != nil || resp == nil || resp.Message == nil {
		return resp, err
	}
	offered := map[string]bool{}
	if p != nil && p.Request != nil {
		for _, d := range p.Request.Tools {
			if d != nil {
				offered[d.Name] = true
			}
		}
	}
	for _, part := range resp.Message.Content {
		if part.IsToolRequest() && part.ToolRequest != nil && !offered[part.ToolRequest.Name] {
			g.refuse(part.ToolRequest.Name)
		}
	}
	return resp, nil
}

// refuse registers, in the generation's registry, a tool named name that
// answers tool-not-found, unless it is there already.
func (g *generation) refuse(name string) {
	r := g.registry()
	if r == nil || name == "" {
		return // no registry to answer in; Genkit's own handling stands
	}
	key := toolKey(name)
	if a, ok := r.LookupAction(key).(*genTool); ok && a.gen == g {
		return
	}
	defer func() {
		// The generation's registry holds another action of that key
		// (registered by someone else since): leave it to Genkit.
		_ = recover()
	}()
	r.RegisterAction(key, &genTool{gen: g, name: name})
}

// toolKey is the registry key of a tool.v2 action named name, as
// ai.LookupTool builds it.
func toolKey(name string) string {
	provider, id := api.ParseName(name)
	return api.NewKey(api.ActionTypeToolV2, provider, id)
}

// callRef is what the WrapTool hook leaves in a call's context for the
// tool: the model's ref of the call.
type callRef struct {
	gen  *generation
	name string
	ref  string
}

type callRefKey struct{}

// wrapTool is the WrapTool hook: it puts the tool request's ref in the
// context, where the generation's tools read it as the toolmw call id.
func (g *generation) wrapTool(ctx context.Context, p *ai.ToolParams, next ai.ToolNext) (*ai.MultipartToolResponse, error) {
	if p != nil && p.Request != nil {
		ctx = context.WithValue(ctx, callRefKey{}, &callRef{gen: g, name: p.Request.Name, ref: p.Request.Ref})
	}
	return next(ctx, p)
}

// refOf returns the ref the WrapTool hook of g left in ctx for a call of
// name, or "".
func refOf(ctx context.Context, g *generation, name string) string {
	if c, ok := ctx.Value(callRefKey{}).(*callRef); ok && c.gen == g && c.name == name {
		return c.ref
	}
	return ""
}
