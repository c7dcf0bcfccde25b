package anthropic

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

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

// Tools is a Box's tools as the Messages API takes them, and the
// dispatcher of the model's tool_use blocks to them. [New] renders the
// definitions once; every turn then reuses them.
//
// A Tools is safe for concurrent use: one may serve many agent runs at
// once, each with its own context (and run budget).
type Tools struct {
	box     Box
	opts    options
	defs    []definition
	offered map[string]bool
}

// definition is one tool as rendered at New: its input schema's
// properties, required list and other top-level keywords, kept as JSON so
// that each request gets fresh values while the nested JSON keeps its key
// order (properties in the order of the Go fields).
type definition struct {
	name        string
	description string
	properties  json.RawMessage // nil when the schema has none
	required    []string
	extra       []keyword
}

type keyword struct {
	key string
	raw json.RawMessage
}

// New renders box's tools for the Messages API, with their input schemas
// in toolmw's Anthropic profile (the subset Anthropic's tool use supports;
// constraints it ignores are moved into the descriptions), and returns them
// with their dispatcher. Tools are rendered as they are when New runs: one
// registered later is neither shown to the model nor called by the
// dispatcher.
//
// A tool the profile cannot describe makes New fail with the box's
// tool-definition-invalid error naming the tool; an invalid option is a
// tool-definition-invalid/option_invalid error.
func New(box Box, opts ...Option) (*Tools, error) {
	o := evaluateOptions(opts)
	if o.err != nil {
		return nil, o.err
	}
	if box == nil {
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid, "adapters/anthropic: New: the box is nil")
	}
	defs, err := box.Definitions(schema.Anthropic)
	if err != nil {
		return nil, err
	}
	t := &Tools{box: box, opts: o, offered: make(map[string]bool, len(defs))}
	for _, d := range defs {
		def, err := split(d)
		if err != nil {
			if toolmw.ValidName(d.Name) {
				err = err.(*taxonomy.ToolError).WithTool(d.Name)
			}
			return nil, err
		}
		t.defs = append(t.defs, def)
		t.offered[d.Name] = true
	}
	return t, nil
}

// split takes an object schema apart into what ToolInputSchemaParam holds:
// properties, required, and every other top-level keyword but "type"
// (always "object" there) and "$schema".
func split(d toolmw.Definition) (definition, error) {
	def := definition{name: d.Name, description: d.Description}
	bad := func() (definition, error) {
		return definition{}, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaNotObject,
			"adapters/anthropic: the tool's input schema is not a JSON object schema")
	}
	dec := json.NewDecoder(bytes.NewReader(d.InputSchema))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return bad()
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bad()
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return bad()
		}
		switch key := tok.(string); key {
		case "$schema":
		case "type":
			if string(raw) != `"object"` {
				return bad()
			}
		case "properties":
			def.properties = raw
		case "required":
			if err := json.Unmarshal(raw, &def.required); err != nil {
				return bad()
			}
		default:
			def.extra = append(def.extra, keyword{key: key, raw: raw})
		}
	}
	return def, nil
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

// Params returns the tools as Messages API custom tools, for
// anthropic.MessageNewParams.Tools: name, description and input schema.
// Each call returns new values, which the caller may change (to add
// cache_control to the last tool, say).
func (t *Tools) Params() []anthropic.ToolUnionParam {
	out := make([]anthropic.ToolUnionParam, 0, len(t.defs))
	for i := range t.defs {
		d := &t.defs[i]
		in := anthropic.ToolInputSchemaParam{Required: append([]string(nil), d.required...)}
		if d.properties != nil {
			in.Properties = json.RawMessage(bytes.Clone(d.properties))
		}
		if len(d.extra) > 0 {
			in.ExtraFields = make(map[string]any, len(d.extra))
			for _, k := range d.extra {
				in.ExtraFields[k.key] = json.RawMessage(bytes.Clone(k.raw))
			}
		}
		tool := anthropic.ToolParam{Name: d.name, InputSchema: in}
		if d.description != "" {
			tool.Description = param.NewOpt(d.description)
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return out
}
