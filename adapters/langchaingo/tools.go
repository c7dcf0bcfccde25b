package langchaingo

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

// Box is what the adapter needs of a tool collection: its tools'
// definitions in a schema profile, and a way to call one by name.
// *toolmw.Toolbox is one; so is anything that routes calls elsewhere (a
// remote MCP server, a test double). Box must be safe for concurrent use.
type Box interface {
	Definitions(p schema.Profile) ([]toolmw.Definition, error)
	Call(ctx context.Context, name string, args json.RawMessage) (toolmw.Result, error)
}

var _ Box = (*toolmw.Toolbox)(nil)

// Tools is a Box's tools as langchaingo takes them: tools.Tool values for
// its agents ([Tools.Tools]), llms.Tool definitions for a model called
// directly ([Tools.Definitions]) and the dispatcher of such a model's tool
// calls ([Tools.CallTools]). [New] renders them once.
//
// A Tools is safe for concurrent use: one may serve many agent runs at
// once, each with its own context (and run budget).
type Tools struct {
	d       dispatcher
	opts    options
	defs    []definition
	tools   []tools.Tool
	offered map[string]bool
}

// definition is one tool as rendered at New.
type definition struct {
	name        string
	description string          // the box's description
	params      json.RawMessage // the input schema without "$schema"; nil when the profile shows none
}

// New renders box's tools for langchaingo and returns them. Tools are
// rendered as they are when New runs: one registered later is neither shown
// to the model nor called.
//
// A profile that cannot describe one of the box's tools (see
// [WithProfile]) makes New fail with the box's tool-definition-invalid
// error naming the tool; an invalid option is a
// tool-definition-invalid/option_invalid error.
func New(box Box, opts ...Option) (*Tools, error) {
	o := evaluateOptions(opts)
	if o.err != nil {
		return nil, o.err
	}
	if o.spec != nil {
		return nil, optionError("New: WithSpec is an option of Wrap")
	}
	if box == nil {
		return nil, optionError("New: the box is nil")
	}
	ds, err := box.Definitions(o.profile)
	if err != nil {
		return nil, err
	}
	t := &Tools{
		d:       dispatcher{box: box, countCalls: o.countCalls, handler: o.handler, idKey: o.idKey},
		opts:    o,
		offered: make(map[string]bool, len(ds)),
	}
	for _, d := range ds {
		params, err := withoutSchemaKeyword(d.InputSchema)
		if err != nil {
			if toolmw.ValidName(d.Name) {
				err = err.(*taxonomy.ToolError).WithTool(d.Name)
			}
			return nil, err
		}
		def := definition{name: d.Name, description: d.Description, params: params}
		t.defs = append(t.defs, def)
		t.offered[d.Name] = true
		desc := d.Description
		if o.inDesc {
			desc = describe(d.Description, params)
		}
		t.tools = append(t.tools, &boxTool{t: t, name: d.Name, description: desc})
	}
	return t, nil
}

// withoutSchemaKeyword returns the object schema doc compacted, without a
// top-level "$schema": the APIs read a schema as their own dialect, and a
// declaration of 2020-12 tells the model nothing. A nil doc (a tool without
// parameters under schema.Gemini) stays nil.
func withoutSchemaKeyword(doc json.RawMessage) (json.RawMessage, error) {
	if doc == nil {
		return nil, nil
	}
	bad := taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaNotObject,
		"adapters/langchaingo: the tool's input schema is not a JSON object")
	dec := json.NewDecoder(bytes.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, bad
	}
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, bad
		}
		key := tok.(string)
		if key == "$schema" {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		if err := json.Compact(&b, raw); err != nil {
			return nil, bad
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// describe returns a tool's description with its input schema after it.
func describe(desc string, params json.RawMessage) string {
	var b strings.Builder
	b.WriteString(desc)
	if desc != "" && !strings.HasSuffix(desc, " ") {
		b.WriteByte(' ')
	}
	if params == nil {
		b.WriteString("Input: {} (the tool takes no arguments).")
		return b.String()
	}
	b.WriteString("Input: a JSON object with this JSON Schema: ")
	b.Write(params)
	return b.String()
}

// parameters returns a fresh map of the schema, the type langchaingo's
// clients take (its Gemini client takes nothing else): objects as
// map[string]any, numbers as json.Number, so each encodes as written.
func (d *definition) parameters() map[string]any {
	if d.params == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(d.params))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil // not reached: New checked the schema is an object
	}
	return m
}

// Profile returns the schema profile the tools are rendered in (see
// [WithProfile]).
func (t *Tools) Profile() schema.Profile { return t.opts.profile }

// Names returns the names of the tools, in the box's order.
func (t *Tools) Names() []string {
	out := make([]string, len(t.defs))
	for i, d := range t.defs {
		out[i] = d.name
	}
	return out
}

// Tools returns the box's tools as langchaingo tools, in the box's order,
// for an agent (agents.NewOneShotAgent, agents.NewOpenAIFunctionsAgent,
// agents.NewConversationalAgent …) or anything else that calls a
// tools.Tool. Each tool's Name is the box's name; its Description the
// box's description, with the input schema after it (see
// [WithSchemaInDescription]); its Call runs the call through the box. The
// slice is new at each call; the tools in it are shared and safe for
// concurrent use.
//
// Call reads its input as the call's JSON arguments (after trimming space
// and one enclosing Markdown code fence, which text agents' models often
// write; an empty input is {}). It returns what the model is shown,
// toolmw.ForModel's envelope, for a result and for a failure alike, and
// returns an error only when the run must end: a [*Stop] (see the package
// documentation). The call id the layers see is derived from the call (see
// the package documentation): langchaingo does not pass the model's call
// id to a tool.
func (t *Tools) Tools() []tools.Tool {
	return append([]tools.Tool(nil), t.tools...)
}

// Definitions returns the tools as llms.Tool definitions, for a model
// called directly (llms.WithTools(defs)): type "function", the box's name
// and description, the input schema in the profile of [WithProfile] as a
// map[string]any (numbers as json.Number), and Strict set under
// schema.OpenAIStrict. Each call returns new values, which the caller may
// change. A tool without parameters under schema.Gemini has nil
// Parameters, which langchaingo's googleai client refuses: give such a
// tool a parameter, or use another profile.
func (t *Tools) Definitions() []llms.Tool {
	out := make([]llms.Tool, len(t.defs))
	for i := range t.defs {
		out[i] = llms.Tool{Type: "function", Function: t.defs[i].function(t.opts.profile)}
	}
	return out
}

func (d *definition) function(p schema.Profile) *llms.FunctionDefinition {
	return &llms.FunctionDefinition{
		Name:        d.name,
		Description: d.description,
		Parameters:  d.parameters(),
		Strict:      p == schema.OpenAIStrict,
	}
}

// boxTool is one of the box's tools as a tools.Tool.
type boxTool struct {
	t           *Tools
	name        string
	description string
}

var _ tools.Tool = (*boxTool)(nil)

func (x *boxTool) Name() string        { return x.name }
func (x *boxTool) Description() string { return x.description }

// Call runs the call through the box; see [Tools.Tools].
func (x *boxTool) Call(ctx context.Context, input string) (string, error) {
	return x.t.d.call(ctx, x.name, argsOf(input), input)
}

// argsOf reads an agent's tool input as JSON arguments: trimmed, without
// one enclosing Markdown code fence (```json … ```), and {} when empty.
// Anything else is passed as it is, for the box to answer (a text that is
// not JSON is tool-args-invalid).
func argsOf(input string) json.RawMessage {
	s := strings.TrimSpace(input)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		if body, ok := strings.CutSuffix(rest, "```"); ok {
			if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.ContainsAny(body[:nl], "{[\"") {
				body = body[nl+1:] // the fence's info string: ```json
			}
			s = strings.TrimSpace(body)
		}
	}
	if s == "" {
		s = "{}"
	}
	return json.RawMessage(s)
}
