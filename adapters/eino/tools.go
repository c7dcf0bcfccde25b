package eino

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	einoschema "github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// Box is what the adapter needs of a tool collection: its tools'
// definitions in a schema profile, and a way to call one by name.
// *toolmw.Toolbox is one; so is anything that routes calls elsewhere (a
// remote MCP server, a test double). Box must be safe for concurrent use:
// Eino runs one turn's calls at once.
type Box interface {
	Definitions(p schema.Profile) ([]toolmw.Definition, error)
	Call(ctx context.Context, name string, args json.RawMessage) (toolmw.Result, error)
}

var _ Box = (*toolmw.Toolbox)(nil)

// Tools is a Box's tools as Eino tools. [New] renders them once; every run
// then reuses them.
//
// A Tools is safe for concurrent use: one may serve many agent runs at
// once, each with its own context (and run budget).
type Tools struct {
	box   Box
	opts  options
	tools []tool.BaseTool
	names []string
}

// New renders box's tools as Eino tools, their parameters in the profile
// of [WithProfile] (default schema.Plain), and returns them. Tools are
// rendered as they are when New runs: one registered later is not offered.
//
// A definition whose schema Eino's schema type cannot hold as it is (a
// keyword it drops) is a tool-definition-invalid error naming the tool;
// an invalid option is a tool-definition-invalid/option_invalid error.
func New(box Box, opts ...Option) (*Tools, error) {
	o := evaluateOptions(opts)
	if o.err != nil {
		return nil, o.err
	}
	if box == nil {
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid, "adapters/eino: New: the box is nil")
	}
	defs, err := box.Definitions(o.profile)
	if err != nil {
		return nil, err
	}
	t := &Tools{box: box, opts: o}
	d := dispatcher{countCalls: o.countCalls}
	for _, def := range defs {
		params, err := paramsOf(def.InputSchema)
		if err != nil {
			if toolmw.ValidName(def.Name) {
				err = err.(*taxonomy.ToolError).WithTool(def.Name)
			}
			return nil, err
		}
		bt := boxTool{t: t, d: d, name: def.Name, info: einoschema.ToolInfo{Name: def.Name, Desc: def.Description, ParamsOneOf: params}}
		if o.multimodal {
			t.tools = append(t.tools, &enhancedBoxTool{bt})
		} else {
			t.tools = append(t.tools, &bt)
		}
		t.names = append(t.names, def.Name)
	}
	return t, nil
}

// MustNew is [New] for a program that treats a tool it cannot render as a
// mistake to fix before it starts, as toolmw.MustWrap does: it panics
// with New's error.
func MustNew(box Box, opts ...Option) *Tools {
	t, err := New(box, opts...)
	if err != nil {
		panic(err)
	}
	return t
}

// BaseTools returns the tools, in the box's order, for
// compose.ToolsNodeConfig.Tools (and so adk.ToolsConfig, react.AgentConfig
// ToolsConfig): tool.InvokableTool values, or tool.EnhancedInvokableTool
// values under [WithMultimodal]. Each call returns a new slice of the same
// tools.
func (t *Tools) BaseTools() []tool.BaseTool {
	return append([]tool.BaseTool(nil), t.tools...)
}

// Names returns the names of the tools, in the box's order.
func (t *Tools) Names() []string {
	return append([]string(nil), t.names...)
}

// NodeConfig returns a compose.ToolsNodeConfig holding the tools
// ([Tools.BaseTools]) and [UnknownTool] as its UnknownToolsHandler: what
// an adk.ToolsConfig or a react.AgentConfig takes as its ToolsNodeConfig.
// Add the agent's other tools to its Tools, and middlewares (such as
// [Middleware]'s) to its ToolCallMiddlewares.
func (t *Tools) NodeConfig() compose.ToolsNodeConfig {
	return compose.ToolsNodeConfig{Tools: t.BaseTools(), UnknownToolsHandler: UnknownTool}
}

// paramsOf returns an input schema as Eino's parameters, without
// "$schema" (the chat models send the schema as their API's dialect). It
// fails when the schema does not survive Eino's schema type unchanged.
func paramsOf(doc json.RawMessage) (*einoschema.ParamsOneOf, error) {
	if len(doc) == 0 {
		return nil, nil // schema.Gemini: a tool without parameters
	}
	var want map[string]any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&want); err != nil || want == nil {
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaNotObject,
			"adapters/eino: the tool's input schema is not a JSON object")
	}
	delete(want, "$schema")
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(doc, s); err != nil {
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaInvalid,
			"adapters/eino: Eino's schema type cannot read the tool's input schema")
	}
	s.Version = ""
	if err := keep(s, doc, true); err != nil {
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaInvalid,
			"adapters/eino: Eino's schema type cannot read the tool's input schema")
	}
	back, err := json.Marshal(s)
	var got map[string]any
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(back))
		dec.UseNumber()
		err = dec.Decode(&got)
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaKeywordUnsupported,
			"adapters/eino: Eino's schema type does not keep the tool's input schema as it is")
	}
	return einoschema.NewParamsOneOfByJSONSchema(s), nil
}

// keep puts into s.Extras, at every depth, the keywords of doc that Eino's
// schema type reads into no field of its own (Gemini's "nullable", an
// empty "required" list), so that the schema reaches the model as the
// profile made it; and keeps an empty schema ({}) from being written as
// true. The top level's "$schema" is left out.
func keep(s *jsonschema.Schema, doc json.RawMessage, top bool) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil // a boolean schema: the type keeps it
	}
	if top {
		delete(raw, "$schema")
	}
	extras := s.Extras
	s.Extras = nil
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	s.Extras = extras
	var have map[string]json.RawMessage
	if string(b) != "true" {
		if err := json.Unmarshal(b, &have); err != nil {
			return err
		}
	}
	for k, v := range raw {
		if _, ok := have[k]; !ok {
			if s.Extras == nil {
				s.Extras = map[string]any{}
			}
			s.Extras[k] = v
		}
	}
	if len(raw) == 0 && s.Extras == nil {
		s.Extras = map[string]any{} // written as {}, not true
	}
	sub := func(s *jsonschema.Schema, key string) error {
		if s == nil {
			return nil
		}
		return keep(s, raw[key], false)
	}
	subs := func(key string, list []*jsonschema.Schema) error {
		var docs []json.RawMessage
		if err := json.Unmarshal(raw[key], &docs); err != nil || len(docs) != len(list) {
			return nil
		}
		for i, c := range list {
			if err := keep(c, docs[i], false); err != nil {
				return err
			}
		}
		return nil
	}
	named := func(key string, get func(string) *jsonschema.Schema) error {
		var docs map[string]json.RawMessage
		if err := json.Unmarshal(raw[key], &docs); err != nil {
			return nil
		}
		for name, d := range docs {
			if c := get(name); c != nil {
				if err := keep(c, d, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, step := range []func() error{
		func() error { return sub(s.Items, "items") },
		func() error { return sub(s.AdditionalProperties, "additionalProperties") },
		func() error { return sub(s.Not, "not") },
		func() error { return sub(s.If, "if") },
		func() error { return sub(s.Then, "then") },
		func() error { return sub(s.Else, "else") },
		func() error { return sub(s.Contains, "contains") },
		func() error { return sub(s.PropertyNames, "propertyNames") },
		func() error { return sub(s.ContentSchema, "contentSchema") },
		func() error { return subs("allOf", s.AllOf) },
		func() error { return subs("anyOf", s.AnyOf) },
		func() error { return subs("oneOf", s.OneOf) },
		func() error { return subs("prefixItems", s.PrefixItems) },
		func() error {
			if s.Properties == nil {
				return nil
			}
			return named("properties", func(n string) *jsonschema.Schema { c, _ := s.Properties.Get(n); return c })
		},
		func() error {
			return named("patternProperties", func(n string) *jsonschema.Schema { return s.PatternProperties[n] })
		},
		func() error {
			return named("dependentSchemas", func(n string) *jsonschema.Schema { return s.DependentSchemas[n] })
		},
		func() error { return named("$defs", func(n string) *jsonschema.Schema { return s.Definitions[n] }) },
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// boxTool is one of the box's tools as an Eino tool.
type boxTool struct {
	t    *Tools
	d    dispatcher
	name string
	info einoschema.ToolInfo
}

// Info returns the tool's name, description and parameters.
func (b *boxTool) Info(context.Context) (*einoschema.ToolInfo, error) {
	info := b.info
	return &info, nil
}

// InvokableRun runs the call through the box, with Eino's call id
// (compose.GetToolCallID) as toolmw's call id, and returns what the model
// is shown (toolmw.ForModel). The error is nil, an interrupt when the call
// waits for approval, or a *turn.Stop.
func (b *boxTool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	a, err := b.d.call(ctx, b.t.box, compose.GetToolCallID(ctx), b.name, argsOf(args))
	if err != nil {
		return "", err
	}
	return a.Text, nil
}

// enhancedBoxTool is one of the box's tools as an Eino enhanced tool: its
// results are multimodal (WithMultimodal).
type enhancedBoxTool struct{ boxTool }

// InvokableRun runs the call as [boxTool.InvokableRun] does and returns
// the answer as a multimodal tool result.
func (b *enhancedBoxTool) InvokableRun(ctx context.Context, arg *einoschema.ToolArgument, _ ...tool.Option) (*einoschema.ToolResult, error) {
	var args string
	if arg != nil {
		args = arg.Text
	}
	a, err := b.d.call(ctx, b.t.box, compose.GetToolCallID(ctx), b.name, argsOf(args))
	if err != nil {
		return nil, err
	}
	return toolResult(a, b.t.opts.limits), nil
}

var (
	_ tool.InvokableTool         = (*boxTool)(nil)
	_ tool.EnhancedInvokableTool = (*enhancedBoxTool)(nil)
)

// toolResult returns an answer as a multimodal tool result: its images and
// PDFs as media within limits, the rest as enveloped text (turn.Media); a
// failure, or a result without media, as one text part of its Text.
func toolResult(a turn.Answer, limits turn.MediaLimits) *einoschema.ToolResult {
	if a.Err == nil {
		if blocks, ok := turn.NewMedia(limits).Blocks(a.Result); ok {
			out := &einoschema.ToolResult{Parts: make([]einoschema.ToolOutputPart, len(blocks))}
			for i, b := range blocks {
				out.Parts[i] = outputPart(b)
			}
			return out
		}
	}
	return &einoschema.ToolResult{Parts: []einoschema.ToolOutputPart{{Type: einoschema.ToolPartTypeText, Text: a.Text}}}
}

// outputPart returns a block as an Eino tool output part.
func outputPart(b turn.Block) einoschema.ToolOutputPart {
	common := func() einoschema.MessagePartCommon {
		c := einoschema.MessagePartCommon{MIMEType: b.MIMEType}
		if b.URL != "" {
			u := b.URL
			c.URL = &u
		} else {
			d := b.Data
			c.Base64Data = &d
		}
		return c
	}
	switch b.Kind {
	case turn.BlockImage:
		return einoschema.ToolOutputPart{Type: einoschema.ToolPartTypeImage, Image: &einoschema.ToolOutputImage{MessagePartCommon: common()}}
	case turn.BlockPDF:
		return einoschema.ToolOutputPart{Type: einoschema.ToolPartTypeFile, File: &einoschema.ToolOutputFile{MessagePartCommon: common()}}
	}
	return einoschema.ToolOutputPart{Type: einoschema.ToolPartTypeText, Text: b.Text}
}
