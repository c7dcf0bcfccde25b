package genkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/core/tracing"

	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// genTool is one tool of a generation, both the ai.Tool Genkit registers
// (Hooks.Tools) and the action it registers it as: a tool of the box, or
// (def nil) the answer to a tool the generation did not offer. It is its
// own action so that registering it changes nothing another generation
// shares, and so that Genkit does not check the model's arguments against
// the schema before the box does (it would fail the generation; the box
// answers tool-args-invalid instead).
type genTool struct {
	gen  *generation
	def  *definition // nil: the tool was not offered
	name string
}

var (
	_ ai.Tool    = (*genTool)(nil)
	_ api.Action = (*genTool)(nil)
)

// metaKey marks the actions of this package in their descriptors, so that
// a Wrapper in the same generation leaves them to their own stack.
const metaKey = "toolmw"

// Name returns the tool's name.
func (t *genTool) Name() string { return t.name }

// Definition returns the tool as the model is shown it.
func (t *genTool) Definition() *ai.ToolDefinition {
	if t.def == nil {
		return &ai.ToolDefinition{Name: t.name, Metadata: map[string]any{"multipart": true}}
	}
	return t.def.toolDefinition()
}

// Desc returns the tool's action descriptor.
func (t *genTool) Desc() api.ActionDesc {
	d := t.Definition()
	kind := "box"
	if t.def == nil {
		kind = "not-offered"
	}
	return api.ActionDesc{
		Type:        api.ActionTypeToolV2,
		Key:         toolKey(t.name),
		Name:        t.name,
		Description: d.Description,
		InputSchema: d.InputSchema,
		Metadata: map[string]any{
			"type": api.ActionTypeToolV2, "name": t.name, "description": d.Description,
			"tool": map[string]any{"multipart": true}, metaKey: kind,
		},
	}
}

// Register registers the tool's action in r, the generation's registry,
// and keeps r to answer the tools the generation did not offer in.
func (t *genTool) Register(r api.Registry) {
	r.RegisterAction(toolKey(t.name), t)
	t.gen.setRegistry(r)
}

// RunJSON runs one call of the tool on the model's arguments and returns
// the ai.MultipartToolResponse as JSON. See [genTool.call].
func (t *genTool) RunJSON(ctx context.Context, input json.RawMessage, _ func(context.Context, json.RawMessage) error) (json.RawMessage, error) {
	r, err := t.RunJSONWithTelemetry(ctx, input, nil)
	if r == nil {
		return nil, err
	}
	return r.Result, err
}

// RunJSONWithTelemetry is RunJSON with the trace ids of the call's span,
// a tool span like those of Genkit's own tools.
func (t *genTool) RunJSONWithTelemetry(ctx context.Context, input json.RawMessage, _ func(context.Context, json.RawMessage) error) (*api.ActionRunResult[json.RawMessage], error) {
	meta := &tracing.SpanMetadata{
		Name:            t.name,
		Type:            "action",
		Subtype:         string(api.ActionTypeToolV2),
		Metadata:        map[string]string{},
		TelemetryLabels: tracing.TelemetryLabelsFromContext(ctx),
	}
	if flow := core.FlowNameFromContext(ctx); flow != "" {
		meta.Metadata["flow:name"] = flow
	}
	var info tracing.TraceInfo
	out, err := tracing.RunInNewSpan(ctx, meta, input, func(ctx context.Context, input json.RawMessage) (*ai.MultipartToolResponse, error) {
		info = tracing.SpanTraceInfo(ctx)
		return t.call(ctx, input)
	})
	res := &api.ActionRunResult[json.RawMessage]{TraceId: info.TraceID, SpanId: info.SpanID}
	if err != nil {
		return res, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return res, err
	}
	res.Result = b
	return res, nil
}

// RunRaw runs the tool on input (the model's arguments, decoded) and
// returns the response's output: the envelope the model reads.
func (t *genTool) RunRaw(ctx context.Context, input any) (any, error) {
	resp, err := t.RunRawMultipart(ctx, input)
	if err != nil {
		return nil, err
	}
	return resp.Output, nil
}

// RunRawMultipart runs the tool on input (the model's arguments, decoded).
func (t *genTool) RunRawMultipart(ctx context.Context, input any) (*ai.MultipartToolResponse, error) {
	b, err := json.Marshal(input)
	if err != nil {
		return nil, taxonomy.New(taxonomy.KindArgsInvalid, taxonomy.CodeArgsInvalid, "the arguments could not be encoded as JSON")
	}
	return t.call(ctx, b)
}

// Respond returns a response to the interrupted tool request part toolReq,
// for ai.WithToolResponses; nil when toolReq is not a tool request.
func (t *genTool) Respond(toolReq *ai.Part, output any, opts *ai.RespondOptions) *ai.Part {
	p := ai.NewResponseForToolRequest(toolReq, output)
	if p == nil {
		return nil
	}
	p.Metadata = map[string]any{"interruptResponse": true}
	if opts != nil && opts.Metadata != nil {
		p.Metadata["interruptResponse"] = opts.Metadata
	}
	return p
}

// Restart returns the interrupted tool request part toolReq to run again,
// for ai.WithToolRestarts; nil when toolReq is not a tool request.
func (t *genTool) Restart(toolReq *ai.Part, opts *ai.RestartOptions) *ai.Part {
	return restart(toolReq, opts)
}

// call runs one call: through the box, with the tool request's ref as the
// call id; or, for a tool the generation did not offer, answered
// tool-not-found without reaching the box.
func (t *genTool) call(ctx context.Context, args json.RawMessage) (*ai.MultipartToolResponse, error) {
	c := turn.Call{ID: refOf(ctx, t.gen, t.name), Name: t.name, Args: normalArgs(args)}
	if t.def == nil {
		c.Refused = turn.NotOffered(t.name)
	}
	o := t.gen.tools.opts
	return respond(ctx, t.gen.tools.box, c, o.countCalls)
}

// normalArgs returns args, or {} for no arguments (null, or nothing).
func normalArgs(args json.RawMessage) json.RawMessage {
	if s := bytes.TrimSpace(args); len(s) == 0 || string(s) == "null" {
		return json.RawMessage(`{}`)
	}
	return args
}

// respond makes call c through box (turn.Run: the call id in the context,
// a tool's runtime.Goexit contained) and returns what Genkit should make
// of its outcome:
//
//   - a response whose Output is toolmw.ForModel's text, a result or a
//     failure wrapped as untrusted data, with the result's images and PDFs
//     in Content as media parts (see [limits]);
//   - a call waiting for a person's approval: a tool interrupt
//     (ai.NewToolInterruptError) whose metadata names the approval, so
//     that the generation pauses (FinishReason "interrupted");
//   - the run should stop (the context is done, the run budget is used up,
//     the tool's circuit is open): the *Stop, which Genkit returns from
//     genkit.Generate wrapped in ai.ErrToolFailed (or a cancellation).
func respond(ctx context.Context, box turn.Caller, c turn.Call, countCalls bool) (*ai.MultipartToolResponse, error) {
	return decide(ctx, turn.Run(ctx, box, []turn.Call{c}, turn.Options{MaxParallel: 1, CountCalls: countCalls}))
}

// decide returns what Genkit should make of one call's answers (see
// respond).
func decide(ctx context.Context, answers []turn.Answer) (*ai.MultipartToolResponse, error) {
	if err := turn.StopOf(ctx, answers); err != nil {
		var stop *Stop
		if errors.As(err, &stop) && stop.Kind == taxonomy.KindApprovalPending && len(stop.Approvals) == 1 {
			return nil, ai.NewToolInterruptError(pendingMetadata(stop.Approvals[0]))
		}
		return nil, err
	}
	return response(answers[0]), nil
}

// limits bound the media of one call's response. Genkit runs each call on
// its own, so the bounds hold per call: Gemini takes at most 20 MB of
// inline data in a request, and a turn may hold a few calls.
var limits = turn.MediaLimits{Image: 7 << 20, Document: 7 << 20, Total: 7 << 20}

// response returns a's answer as Genkit's tool response.
func response(a turn.Answer) *ai.MultipartToolResponse {
	out := &ai.MultipartToolResponse{Output: a.Text}
	if a.Err != nil {
		return out
	}
	blocks, ok := turn.NewMedia(limits).Blocks(a.Result)
	if !ok {
		return out
	}
	for _, b := range blocks {
		switch b.Kind {
		case turn.BlockImage, turn.BlockPDF:
			src := b.URL
			if src == "" {
				src = b.DataURL()
			}
			out.Content = append(out.Content, ai.NewMediaPart(b.MIMEType, src))
		}
	}
	return out
}
