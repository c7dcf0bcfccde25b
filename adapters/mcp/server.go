package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/adapters/mcp/internal/wire"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

// The _meta keys the adapter reads and writes. MCP reserves the prefixes
// naming modelcontextprotocol or mcp; "toolmw/" is toolmw's.
const (
	// MetaCallID is the key under which a tools/call request's _meta
	// carries the model's call id. A [Remote] sends it; a server made here
	// runs the call with it as the call id ([toolmw.WithCallID]).
	MetaCallID = wire.MetaCallID
	// MetaError is the key under which an isError result's _meta carries
	// the [taxonomy.Info] record of the error: kind, code, tool, retryable,
	// retry_after (seconds), message and field errors, as JSON.
	MetaError = wire.MetaError
)

// Hints are the annotations of a tool beyond what its [toolmw.Spec] says.
// The Spec gives idempotentHint (Spec.Idempotent); Hints add a title and
// the read-only, destructive and open-world hints. MCP's defaults apply to
// what is left unset: not read-only, destructive, open world.
type Hints struct {
	Title       string // a display name; "" for none
	ReadOnly    bool   // the tool does not modify its environment (implies idempotent)
	Destructive *bool  // nil: unstated (MCP's default: true)
	OpenWorld   *bool  // nil: unstated (MCP's default: true)
}

// A ServerOption configures [AddToolbox].
type ServerOption func(*serverOptions)

type serverOptions struct {
	hints  map[string]Hints
	callID func(context.Context, *sdk.CallToolRequest) string
	err    error
}

func evaluateServerOptions(opts []ServerOption) *serverOptions {
	o := &serverOptions{hints: map[string]Hints{}, callID: CallIDFromMeta}
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	return o
}

func (o *serverOptions) reject(format string, args ...any) {
	if o.err == nil {
		o.err = optionError(format, args...)
	}
}

func optionError(format string, args ...any) error {
	return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid, "mcp: "+fmt.Sprintf(format, args...))
}

// WithHints publishes the tool called name with h. Hints for a name the
// box does not hold are an option_invalid error, so a typo does not pass
// unnoticed. Given twice for a name, the last wins.
func WithHints(name string, h Hints) ServerOption {
	return func(o *serverOptions) { o.hints[name] = h }
}

// WithCallID sets how a call's id is read from the request (nil means
// [CallIDFromMeta]). The id is data from the client: toolmw carries it as
// toolmw.SafeCallID makes it. f is called from many goroutines at once.
func WithCallID(f func(context.Context, *sdk.CallToolRequest) string) ServerOption {
	return func(o *serverOptions) {
		if f == nil {
			f = CallIDFromMeta
		}
		o.callID = f
	}
}

// CallIDFromMeta is the default call id of a request: the string under
// [MetaCallID] in its _meta (a [Remote] sends the model's call id there),
// else its progress token (unique per request when the client sets one),
// else "". The SDK does not hand a handler the JSON-RPC request id.
func CallIDFromMeta(_ context.Context, req *sdk.CallToolRequest) string {
	if req == nil || req.Params == nil {
		return ""
	}
	if id, ok := req.Params.Meta[MetaCallID].(string); ok && id != "" {
		return id
	}
	switch t := req.Params.GetProgressToken().(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case int:
		return strconv.Itoa(t)
	case int64:
		return strconv.FormatInt(t, 10)
	}
	return ""
}

// AddTool publishes tool on srv under spec, wrapped with mws (the first
// outermost) as [toolmw.Wrap] wraps it: a bad spec, a nil tool or a layer
// given an invalid option is a tool-definition-invalid error, and nothing
// is added. It is AddToolbox with a box holding the one tool; use a
// [toolmw.Toolbox] and [AddToolbox] for hints or a custom call id.
func AddTool(srv *sdk.Server, spec toolmw.Spec, tool toolmw.Tool, mws ...toolmw.Middleware) error {
	box := toolmw.NewToolbox(mws...)
	if err := box.Register(spec, tool); err != nil {
		return err
	}
	return AddToolbox(srv, box)
}

// AddToolbox publishes every tool registered in box, at the time of the
// call, on srv, and calls each through box ([toolmw.Toolbox.Call]), so it
// runs in the middlewares it was registered with.
//
// A tool is published with its name, description, input schema in the MCP
// profile ([schema.MCP]: JSON Schema 2020-12; a Typed tool's rendered from
// its input type) and annotations: idempotentHint from Spec.Idempotent,
// the rest from [WithHints]. A tool without an input schema takes any
// object, as toolmw.Wrap lets any object through, and is published so,
// with [toolmw.AnyObjectSchema] ({"type":"object"}), as
// Toolbox.Definitions shows it.
// A box that cannot be described, a nil srv or box, or an invalid option
// is a tool-definition-invalid error, and nothing is added.
//
// A tool with an output schema (Spec.OutputSchema, or its definition's)
// of type "object" publishes it as its outputSchema; one of another type
// is not published, since MCP requires an object schema there.
//
// Each call runs with the request's call id ([WithCallID]) and the
// request's context: a client's cancellation cancels the call. Empty or
// null arguments stand for {}. The context carries a [toolmw.Session] on
// the request's session: [toolmw.ReportProgress] sends a progress
// notification with the request's progress token (nothing when the client
// sent none), [toolmw.LogToClient] a logging notification at or above the
// level the client set (none before it sets one; a level MCP does not
// define is sent as "info"), [toolmw.Elicit] a form elicitation with the
// question's schema, [toolmw.Sample] a sampling request of its text
// messages (maxTokens 1024 when it sets none). Elicit and Sample return
// an error wrapping [toolmw.ErrSessionUnsupported] when the client did not
// declare the capability, or negotiated protocol 2026-07-28 or later,
// where a server may no longer ask during a call; a request the client
// fails is tool-failed/upstream_error.
//
// A result is sent as [toolmw.ForModelParts] gives its parts: every text
// and JSON part, and an embedded resource's text, wrapped as untrusted
// data, as an error is. Each part becomes one content block, in order,
// with its annotations (the audiences "user" and "assistant", a priority
// within 0 to 1, a lastModified): text and JSON as text; an image or audio
// as image or audio content, or as a resource link when it has only a URI;
// a file as an embedded resource of its bytes (a blob) under its URI, or
// "attachment:" and its escaped name when it has none, or as a resource
// link when it has only a URI; a resource link as one (named by its kind
// when it has no name); an embedded resource with its text or its blob.
// A part of no known kind, or with nothing to send, ends the call as
// tool-result-invalid/result_part_invalid. The first JSON part, when it
// is a JSON object, is also sent as structured content (MCP's
// structuredContent is an object: a JSON array or scalar is sent as text
// only); a tool that publishes an output schema must return one, else the
// call ends as tool-result-invalid/result_not_json. Any error becomes an
// isError result, never a protocol error: its only content is
// [toolmw.ForModel]'s envelope (an untyped error's text withheld), its
// _meta carries the error's record under [MetaError], and it carries the
// typed error for the server's own middleware (CallToolResult.GetError;
// an untyped error as the typed error of its record, wrapping it). A panic
// that escapes the tool's middlewares ends the call as
// tool-failed/tool_panicked; its value is not sent or logged.
//
// Unknown tools and malformed requests are answered by the SDK before any
// tool runs; install [ProtocolErrors] to make those answers typed too.
func AddToolbox(srv *sdk.Server, box *toolmw.Toolbox, opts ...ServerOption) error {
	o := evaluateServerOptions(opts)
	switch {
	case srv == nil:
		o.reject("AddToolbox: the server is nil")
	case box == nil:
		o.reject("AddToolbox: the toolbox is nil")
	}
	if o.err != nil {
		return o.err
	}
	defs, err := box.Definitions(schema.MCP)
	if err != nil {
		return err
	}
	specs := map[string]toolmw.Spec{}
	for _, s := range box.Specs() {
		specs[s.Name] = s
	}
	for name := range o.hints {
		if _, ok := specs[name]; !ok {
			return optionError("WithHints(%q): the toolbox has no tool of that name", name)
		}
	}
	tools := make([]*sdk.Tool, 0, len(defs))
	for _, d := range defs {
		spec := specs[d.Name]
		out, err := outputSchema(d, spec)
		if err != nil {
			return err
		}
		t := &sdk.Tool{
			Name:        d.Name,
			Description: d.Description,
			InputSchema: d.InputSchema,
			Annotations: annotations(spec, o.hints[d.Name]),
		}
		if out != nil {
			t.OutputSchema = out
		}
		tools = append(tools, t)
	}
	for _, t := range tools {
		h := handler(box, t.Name, o.callID)
		if t.OutputSchema != nil {
			h = structuredOnly(t.Name, h)
		}
		srv.AddTool(t, h)
	}
	return nil
}

// outputSchema is the outputSchema published for the tool d describes:
// its definition's (Spec.OutputSchema in the MCP profile), else its spec's
// adapted to the MCP profile; nil when it has none, or when it is not of
// type "object", which MCP requires of an outputSchema (the tool's JSON
// result is then sent as text only).
func outputSchema(d toolmw.Definition, spec toolmw.Spec) (json.RawMessage, error) {
	out := d.OutputSchema
	if out == nil && spec.OutputSchema != nil {
		var err error
		if out, err = schema.Adapt(spec.OutputSchema, schema.MCP); err != nil {
			return nil, err
		}
	}
	if out == nil || !objectSchema(out) {
		return nil, nil
	}
	return out, nil
}

func annotations(spec toolmw.Spec, h Hints) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{
		Title:           h.Title,
		ReadOnlyHint:    h.ReadOnly,
		IdempotentHint:  spec.Idempotent || h.ReadOnly,
		DestructiveHint: h.Destructive,
		OpenWorldHint:   h.OpenWorld,
	}
}

// handler is the SDK handler of the tool called name in box.
func handler(box *toolmw.Toolbox, name string, callID func(context.Context, *sdk.CallToolRequest) string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args json.RawMessage
		if req != nil && req.Params != nil {
			args = req.Params.Arguments
		}
		if id := callID(ctx, req); id != "" {
			ctx = toolmw.WithCallID(ctx, id)
		}
		ctx = withSession(ctx, req)
		res, err := call(ctx, box, name, normalArgs(args))
		if err != nil {
			return failureResult(err), nil
		}
		r, bad := successResult(res)
		if bad != nil {
			return failureResult(bad.WithTool(name)), nil
		}
		return r, nil
	}
}

// errPanicked ends a call whose panic no layer recovered.
var errPanicked = taxonomy.New(taxonomy.KindFailed, taxonomy.CodeToolPanicked, "the tool panicked")

// call calls the tool, turning a panic that escaped its layers into
// tool_panicked: the SDK has no recovery of its own, and a panic would end
// the server.
func call(ctx context.Context, box *toolmw.Toolbox, name string, args json.RawMessage) (res toolmw.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = toolmw.Result{}, errPanicked.WithTool(name)
		}
	}()
	return box.Call(ctx, name, args)
}

// normalArgs returns args, or {} for empty or null arguments (MCP makes
// them optional).
func normalArgs(args json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage("{}")
	}
	return args
}

// structuredOnly is h for a tool that publishes an output schema: MCP then
// requires structured content in every result that is not an error, so a
// result without (no JSON object) becomes the error result_not_json.
func structuredOnly(name string, h sdk.ToolHandler) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		r, err := h(ctx, req)
		if err == nil && r != nil && !r.IsError && r.StructuredContent == nil {
			return failureResult(errNotStructured.WithTool(name)), nil
		}
		return r, err
	}
}

// successResult is the result of a call that returned res: its parts as
// content ([contentOf]), and its structured content. A part that cannot be
// sent is an error.
func successResult(res toolmw.Result) (*sdk.CallToolResult, *taxonomy.ToolError) {
	content, value, err := contentOf(res)
	if err != nil {
		return nil, err
	}
	r := &sdk.CallToolResult{Content: content}
	if value != nil {
		r.StructuredContent = value
	}
	return r, nil
}

// failureResult is the isError result of err: the envelope first, then the
// typed error, so SetError keeps the envelope as the content.
func failureResult(err error) *sdk.CallToolResult {
	f := wire.FailureOf(err)
	r := &sdk.CallToolResult{
		Content: []sdk.Content{&sdk.TextContent{Text: f.Text}},
		Meta:    sdk.Meta{MetaError: f.MetaInfo()},
	}
	r.SetError(f.Typed)
	return r
}
