package anthropic

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// BetaTools returns the box's tools as tools of the SDK's tool runner
// (client.Beta.Messages.NewToolRunner): name, description and input
// schema as [Tools.Params] renders them, and an Execute that runs the call
// through the box.
//
// Execute never hands the runner a raw error: a result goes back as
// tool_result content (toolmw.ForModel's text, or the blocks of its images
// and documents as [Turn.Blocks] maps them), a failure as an error whose
// text is only toolmw.ForModel's envelope, which the runner sends as
// "Error: " and that text with is_error set. Run the runner with the
// context of [WithBetaRunner], so that each call gets its tool_use id and
// a call that says the run should stop ends the loop (the package doc
// says what each tool does without it). Each call returns new values.
func (t *Tools) BetaTools() []anthropic.BetaTool {
	out := make([]anthropic.BetaTool, len(t.defs))
	for i := range t.defs {
		out[i] = &boxTool{tools: t, def: &t.defs[i]}
	}
	return out
}

// boxTool is one of a box's tools as the runner takes it.
type boxTool struct {
	tools *Tools
	def   *definition
}

func (b *boxTool) Name() string        { return b.def.name }
func (b *boxTool) Description() string { return b.def.description }

func (b *boxTool) InputSchema() anthropic.BetaToolInputSchemaParam {
	d := b.def
	in := anthropic.BetaToolInputSchemaParam{Required: append([]string(nil), d.required...)}
	if d.properties != nil {
		in.Properties = json.RawMessage(bytes.Clone(d.properties))
	}
	if len(d.extra) > 0 {
		in.ExtraFields = make(map[string]any, len(d.extra))
		for _, k := range d.extra {
			in.ExtraFields[k.key] = json.RawMessage(bytes.Clone(k.raw))
		}
	}
	return in
}

func (b *boxTool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	return execute(ctx, b.def.name, input, b.tools.box, b.tools.opts.countCalls)
}

// WrapBetaTool returns t, a tool of the SDK's tool runner written for it,
// with its calls made through a toolmw stack: t's Execute becomes the
// tool that mws decorate (toolmw.Wrap(spec, …, mws...)), and the wrapper
// answers as [Tools.BetaTools]' tools do — a result as content, a failure
// as toolmw.ForModel's envelope (never t's raw error), the tool_use id as
// the call id and stops ending the run under [WithBetaRunner].
//
// spec says what the layers need to know of t: Idempotent, HonoursKeys,
// MaxArgsBytes and so on. Its Name, Description and InputSchema are t's
// when empty; a Name other than t's is a tool-definition-invalid/
// option_invalid error, as is a nil t, and every error of toolmw.Wrap (an
// input schema it cannot compile: give spec.InputSchema
// toolmw.AnyObjectSchema to check nothing) is returned as it is. The model
// is shown t's own name, description and input schema; the arguments are
// validated against spec's input schema before t runs.
//
// The content t returns becomes the result's parts (text blocks text
// parts; base64 images, PDFs and plain-text documents image and file
// parts, URL sources their URIs; a search result an embedded resource),
// which the layers see and scrub, and which go back as Turn.Blocks maps
// parts. A single text block is a text result. What has no part of its
// own (a Files API file id, a tool reference, a browser state) reaches the
// model as a descriptor or as JSON text, not as the block.
func WrapBetaTool(t anthropic.BetaTool, spec toolmw.Spec, mws ...toolmw.Middleware) (anthropic.BetaTool, error) {
	if t == nil {
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid, "adapters/anthropic: WrapBetaTool: the tool is nil")
	}
	name := t.Name()
	switch spec.Name {
	case "":
		spec.Name = name
	case name:
	default:
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			"adapters/anthropic: WrapBetaTool: the spec names another tool than the one wrapped").WithTool(name)
	}
	if spec.Description == "" {
		spec.Description = t.Description()
	}
	if spec.InputSchema == nil {
		js, err := json.Marshal(t.InputSchema())
		if err != nil {
			return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaNotObject,
				"adapters/anthropic: WrapBetaTool: the tool's input schema cannot be encoded").WithTool(name)
		}
		spec.InputSchema = js
	}
	tool, err := toolmw.Wrap(spec, func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		content, err := t.Execute(ctx, args)
		if err != nil {
			return toolmw.Result{}, err
		}
		return resultOf(content), nil
	}, mws...)
	if err != nil {
		return nil, err
	}
	return &wrappedTool{BetaTool: t, name: name, tool: tool}, nil
}

// wrappedTool is a runner's tool behind a toolmw stack. Its name,
// description and schema are the inner tool's.
type wrappedTool struct {
	anthropic.BetaTool
	name string
	tool toolmw.Tool
}

func (w *wrappedTool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	return execute(ctx, w.name, input, w, false)
}

// Call makes wrappedTool a turn.Caller of its one tool.
func (w *wrappedTool) Call(ctx context.Context, _ string, args json.RawMessage) (toolmw.Result, error) {
	return w.tool(ctx, args)
}

// execute runs one call of the runner: through box, with the call id of
// its tool_use block, answered as the runner takes it, and stopping the
// run when its answer says so.
func execute(ctx context.Context, name string, input json.RawMessage, box turn.Caller, countCalls bool) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	run := betaRunFrom(ctx)
	c := turn.Call{Name: name, Args: input}
	switch in := bytes.TrimSpace(input); {
	case len(in) == 0, string(in) == "null":
		c.Args = json.RawMessage(`{}`)
	}
	member := false
	if id, ok := ctx.Value(betaCallKey{}).(string); ok {
		c.ID = id
	} else if run != nil {
		c.ID, member, _ = run.claim(name, input)
	}
	if member {
		c.Refused = turn.NotOffered(name)
	}
	callCtx, done := run.detach(ctx)
	defer done()
	answers := turn.Run(callCtx, box, []turn.Call{c}, turn.Options{MaxParallel: 1, CountCalls: countCalls})
	if run != nil {
		if s, ok := turn.StopOf(run.parent, answers).(*Stop); ok {
			run.stopWith(s)
		}
	}
	a := answers[0]
	if a.Err != nil {
		return nil, &failure{text: a.Text}
	}
	return run.content(a), nil
}

// betaCallKey carries the call id [ResumeBeta] gives a call.
type betaCallKey struct{}

// failure is a failed call as the runner takes it: an error whose text is
// toolmw.ForModel's envelope, and nothing else. It wraps nothing, so the
// failure's raw chain never reaches the runner.
type failure struct{ text string }

func (f *failure) Error() string { return f.text }
