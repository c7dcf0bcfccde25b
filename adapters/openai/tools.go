package openai

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

// Box is what the adapter needs of a tool collection: its tools'
// definitions in a schema profile, and a way to call one by name.
// *toolmw.Toolbox is one; so is anything that routes calls elsewhere (a
// remote MCP server, a test double). Box must be safe for concurrent use:
// one turn's calls reach it at once.
type Box interface {
	Definitions(p schema.Profile) ([]toolmw.Definition, error)
	Call(ctx context.Context, name string, args json.RawMessage) (toolmw.Result, error)
}

var _ Box = (*toolmw.Toolbox)(nil)

// Tools is a Box's tools as OpenAI's APIs take them, and the dispatcher of
// the model's calls to them. [New] renders the definitions once; every
// turn then reuses them.
//
// A Tools is safe for concurrent use: one may serve many agent runs at
// once, each with its own context (and run budget).
type Tools struct {
	box     Box
	opts    options
	defs    []definition
	offered map[string]bool
}

// definition is one tool as rendered at New: its parameters schema split
// into top-level keywords, so that each request gets a fresh map while the
// nested JSON keeps its key order (properties in the order of the Go
// fields).
type definition struct {
	name        string
	description string
	params      []keyword
}

type keyword struct {
	key string
	raw json.RawMessage
}

// New renders box's tools for the OpenAI APIs and returns them with their
// dispatcher. Tools are rendered as they are when New runs: one registered
// later is neither shown to the model nor called by the dispatcher.
//
// With the default options every tool is strict (see [WithStrict]): a tool
// strict mode cannot describe makes New fail with the box's
// tool-definition-invalid error (code schema_not_strict, naming the tool).
// An invalid option is a tool-definition-invalid/option_invalid error.
func New(box Box, opts ...Option) (*Tools, error) {
	o := evaluateOptions(opts)
	if o.err != nil {
		return nil, o.err
	}
	if box == nil {
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid, "adapters/openai: New: the box is nil")
	}
	profile := schema.Plain
	if o.strict {
		profile = schema.OpenAIStrict
	}
	defs, err := box.Definitions(profile)
	if err != nil {
		return nil, err
	}
	t := &Tools{box: box, opts: o, offered: make(map[string]bool, len(defs))}
	for _, d := range defs {
		params, err := keywords(d.InputSchema)
		if err != nil {
			if toolmw.ValidName(d.Name) {
				err = err.(*taxonomy.ToolError).WithTool(d.Name)
			}
			return nil, err
		}
		t.defs = append(t.defs, definition{name: d.Name, description: d.Description, params: params})
		t.offered[d.Name] = true
	}
	return t, nil
}

// keywords splits an object schema into its top-level keywords, dropping
// "$schema": OpenAI reads the schema as its own dialect, and the Plain
// profile's declaration of 2020-12 tells the model nothing.
func keywords(doc json.RawMessage) ([]keyword, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	bad := func() ([]keyword, error) {
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaNotObject,
			"adapters/openai: the tool's input schema is not a JSON object")
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return bad()
	}
	var out []keyword
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bad()
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return bad()
		}
		if key := tok.(string); key != "$schema" {
			out = append(out, keyword{key: key, raw: raw})
		}
	}
	return out, nil
}

// parameters returns a fresh parameters map of d: the SDK encodes each
// json.RawMessage value as it is, so nested key order and every number's
// exact text survive.
func (d *definition) parameters() map[string]any {
	m := make(map[string]any, len(d.params))
	for _, k := range d.params {
		m[k.key] = json.RawMessage(bytes.Clone(k.raw))
	}
	return m
}

// Strict reports whether the tools go out in strict mode (see
// [WithStrict]).
func (t *Tools) Strict() bool { return t.opts.strict }

// Names returns the names of the tools offered to the model, in the box's
// order.
func (t *Tools) Names() []string {
	out := make([]string, len(t.defs))
	for i, d := range t.defs {
		out[i] = d.name
	}
	return out
}

// ForChat returns the tools as Chat Completions function tools, for
// openai.ChatCompletionNewParams.Tools: name, description, parameters
// schema and the strict flag, always set. Each call returns new values,
// which the caller may change.
func (t *Tools) ForChat() []openai.ChatCompletionToolUnionParam {
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(t.defs))
	for i := range t.defs {
		d := &t.defs[i]
		fn := shared.FunctionDefinitionParam{
			Name:       d.name,
			Parameters: shared.FunctionParameters(d.parameters()),
			Strict:     param.NewOpt(t.opts.strict),
		}
		if d.description != "" {
			fn.Description = param.NewOpt(d.description)
		}
		out = append(out, openai.ChatCompletionFunctionTool(fn))
	}
	return out
}

// ForResponses returns the tools as Responses API function tools, for
// responses.ResponseNewParams.Tools: name, description, parameters schema
// and the strict flag, always set (the API treats a function tool without
// it as strict). Each call returns new values, which the caller may change.
func (t *Tools) ForResponses() []responses.ToolUnionParam {
	out := make([]responses.ToolUnionParam, 0, len(t.defs))
	for i := range t.defs {
		d := &t.defs[i]
		fn := responses.FunctionToolParam{
			Name:       d.name,
			Parameters: d.parameters(),
			Strict:     param.NewOpt(t.opts.strict),
		}
		if d.description != "" {
			fn.Description = param.NewOpt(d.description)
		}
		out = append(out, responses.ToolUnionParam{OfFunction: &fn})
	}
	return out
}
