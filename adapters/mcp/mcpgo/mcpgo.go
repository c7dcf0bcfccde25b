// Package mcpgo runs a toolmw stack around the tool handlers of an mcp-go
// server (github.com/mark3labs/mcp-go), with the result and error rules of
// the go-sdk adapter in the parent package:
//
//	mw, err := mcpgo.Middleware(middleware.Default().Middleware())
//	if err != nil {
//		return err // a layer given an invalid option
//	}
//	s := server.NewMCPServer("booking", "1.0.0", server.WithToolHandlerMiddleware(mw))
//
// Every tool call then runs through the stack as a toolmw tool: a spec per
// tool (made on its first call), the request's call id, per-tool state
// (breaker, limiter, retry budget) kept across calls. What the handler
// returns becomes the call's outcome: a Go error as it is (a taxonomy
// error keeps its kind and code; the stack's classify layer types the
// rest); an isError result as the handler's own failure in its words
// (tool-failed/tool_reported_error, never retried, its text scrubbed); a
// result as the tool's result. What the client gets:
//
//   - on success, the handler's result as it returned it (images,
//     structured content and all), unless a layer changed the content (the
//     redact layer scrubbing results, say), which then goes as text (and
//     as structured content when it is a JSON object);
//   - on any error, an isError result, never a JSON-RPC error: its only
//     content is toolmw.ForModel's envelope (an untyped error's text and a
//     panic's value withheld) and its _meta carries the error's
//     taxonomy.Info record under "toolmw/error".
//
// mcp-go answers a call of an unknown tool itself, before any middleware,
// with a JSON-RPC error. Do not enable its WithInputSchemaValidation: the
// middleware checks the arguments against the tool's input schema with
// value-free field errors, which mcp-go's validation results are not.
package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/adapters/mcp/internal/wire"
	"github.com/toolmw/toolmw/taxonomy"
)

// MaxTools bounds how many tools the middleware keeps per-tool state for.
// A tool first called after that many others runs with state of its own
// per call (its breaker, say, starts afresh each time).
const MaxTools = 4096

// An Option configures [Middleware].
type Option func(*options)

type options struct {
	spec   func(mcp.Tool, *toolmw.Spec)
	callID func(context.Context, mcp.CallToolRequest) string
}

// WithSpec lets f adjust the spec made for each tool on its first call
// (nil: no adjustment), given the tool's mcp-go definition: its
// idempotency, argument size cap, or input schema (set InputSchema to nil
// to leave argument checks to the handler).
func WithSpec(f func(mcp.Tool, *toolmw.Spec)) Option {
	return func(o *options) { o.spec = f }
}

// WithCallID sets how a call's id is read from the request (nil means
// [CallIDFromMeta]). f is called from many goroutines at once.
func WithCallID(f func(context.Context, mcp.CallToolRequest) string) Option {
	return func(o *options) {
		if f == nil {
			f = CallIDFromMeta
		}
		o.callID = f
	}
}

// CallIDFromMeta is the default call id of a request: the string under
// "toolmw/call_id" in its _meta (a toolmw Remote sends the model's call id
// there), else its progress token, else "".
func CallIDFromMeta(_ context.Context, req mcp.CallToolRequest) string {
	m := req.Params.Meta
	if m == nil {
		return ""
	}
	if id, ok := m.AdditionalFields[wire.MetaCallID].(string); ok && id != "" {
		return id
	}
	switch t := m.ProgressToken.(type) {
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

// Middleware returns an mcp-go tool handler middleware that runs every
// tool call through stack (nil: no layers; the result and error rules
// still apply). Install it with server.WithToolHandlerMiddleware or
// (*server.MCPServer).Use; a panic in a handler that no layer of stack
// recovers ends the call as tool-failed/tool_panicked, whatever mcp-go's
// own recovery would have sent.
//
// A tool's spec is made on its first call from its mcp-go definition
// (server.ServerFromContext(ctx).GetTool): its name made model-safe (see
// the parent package's ModelName), its description, idempotent when its
// annotations hint idempotent or read-only, and its input schema, against
// which every call's arguments are checked before the handler runs. A spec
// that toolmw rejects (a schema it cannot use) fails every call of the
// tool as tool-definition-invalid; adjust it with [WithSpec].
//
// A layer of stack given an invalid option is reported here, as a
// tool-definition-invalid error. The middleware is safe for concurrent
// use.
func Middleware(stack toolmw.Middleware, opts ...Option) (server.ToolHandlerMiddleware, error) {
	o := &options{callID: CallIDFromMeta}
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	var mws []toolmw.Middleware
	if stack != nil {
		mws = []toolmw.Middleware{stack}
	}
	if _, err := toolmw.Wrap(toolmw.Spec{Name: "probe"}, inner, mws...); err != nil {
		return nil, err
	}
	m := &adapter{o: o, mws: mws, tools: map[string]*entry{}}
	return m.middleware, nil
}

// adapter is the state of one Middleware.
type adapter struct {
	o     *options
	mws   []toolmw.Middleware
	mu    sync.RWMutex
	tools map[string]*entry // MCP name → the tool wrapped in the stack
}

// entry is a tool made on its first call, or the error that made it fail.
type entry struct {
	once sync.Once
	tool toolmw.Tool
	err  error
}

func (m *adapter) middleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tool, err := m.toolFor(ctx, req.Params.Name)
		if err != nil {
			return failureResult(err), nil
		}
		st := &state{next: next, req: req}
		ctx = context.WithValue(ctx, stateKey{}, st)
		if id := m.o.callID(ctx, req); id != "" {
			ctx = toolmw.WithCallID(ctx, id)
		}
		res, err := run(ctx, tool, argsOf(req), req.Params.Name)
		if err != nil {
			return failureResult(err), nil
		}
		if orig := st.result(); orig != nil && len(res.Parts()) == 0 && resultOf(orig).Content == res.Content && resultOf(orig).JSON == res.JSON {
			return orig, nil
		}
		return successResult(res), nil
	}
}

// toolFor returns the tool called name wrapped in the stack, made on its
// first call.
func (m *adapter) toolFor(ctx context.Context, name string) (toolmw.Tool, error) {
	m.mu.RLock()
	e, ok := m.tools[name]
	m.mu.RUnlock()
	if !ok {
		m.mu.Lock()
		if e, ok = m.tools[name]; !ok {
			e = &entry{}
			if len(m.tools) < MaxTools {
				m.tools[name] = e
			}
		}
		m.mu.Unlock()
	}
	e.once.Do(func() { e.tool, e.err = toolmw.Wrap(m.spec(ctx, name), inner, m.mws...) })
	return e.tool, e.err
}

// spec is the spec of the tool called name, from its definition.
func (m *adapter) spec(ctx context.Context, name string) toolmw.Spec {
	spec := toolmw.Spec{Name: wire.ModelName("", name)}
	var def mcp.Tool
	if s := server.ServerFromContext(ctx); s != nil {
		if st := s.GetTool(name); st != nil {
			def = st.Tool
			spec.Description = def.Description
			a := def.Annotations
			spec.Idempotent = a.IdempotentHint != nil && *a.IdempotentHint || a.ReadOnlyHint != nil && *a.ReadOnlyHint
			spec.InputSchema = inputSchema(def)
		}
	}
	if def.Name == "" {
		def.Name = name
	}
	if m.o.spec != nil {
		m.o.spec(def, &spec)
	}
	return spec
}

// inputSchema is the JSON of a tool's input schema, nil when it has none.
func inputSchema(t mcp.Tool) json.RawMessage {
	if t.RawInputSchema != nil {
		return t.RawInputSchema
	}
	if t.InputSchema.Type == "" {
		return nil
	}
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil
	}
	return b
}

// state is one call's handler and request, which the inner tool calls, and
// the result the handler last returned.
type state struct {
	next server.ToolHandlerFunc
	req  mcp.CallToolRequest
	mu   sync.Mutex
	res  *mcp.CallToolResult
}

type stateKey struct{}

func (s *state) setResult(r *mcp.CallToolResult) {
	s.mu.Lock()
	s.res = r
	s.mu.Unlock()
}

func (s *state) result() *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.res
}

// inner is the tool every spec wraps: it calls the handler of the call in
// the context, with the request as mcp-go made it.
// errHandlerMissing ends a call that reached the tool without its mcp-go
// handler; its code is declared, so telemetry shows it.
var errHandlerMissing = taxonomy.Failure(taxonomy.Declare("handler_missing"), "the call has no mcp-go handler")

func inner(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	st, ok := ctx.Value(stateKey{}).(*state)
	if !ok {
		return toolmw.Result{}, errHandlerMissing
	}
	res, err := st.next(ctx, st.req)
	if err != nil {
		return toolmw.Result{}, err
	}
	if res == nil {
		return toolmw.Result{}, nil
	}
	if res.IsError {
		var meta any
		if res.Meta != nil {
			meta = res.Meta.AdditionalFields[wire.MetaError]
		}
		return toolmw.Result{}, wire.OwnCancel(ctx, wire.ReportedFailure(wire.CodeToolReportedError, textOf(res), meta))
	}
	st.setResult(res)
	return resultOf(res), nil
}

// errPanicked ends a call whose panic no layer recovered.
var errPanicked = taxonomy.New(taxonomy.KindFailed, taxonomy.CodeToolPanicked, "the tool panicked")

func run(ctx context.Context, tool toolmw.Tool, args json.RawMessage, name string) (res toolmw.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = toolmw.Result{}, errPanicked.WithTool(wire.ModelName("", name))
		}
	}()
	return tool(ctx, args)
}

// argsOf is the request's arguments as JSON, {} when there are none.
func argsOf(req mcp.CallToolRequest) json.RawMessage {
	raw := req.Params.RawArguments
	if len(raw) == 0 && req.Params.Arguments != nil {
		if b, err := json.Marshal(req.Params.Arguments); err == nil {
			raw = b
		}
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage("{}")
	}
	return raw
}

func successResult(res toolmw.Result) *mcp.CallToolResult {
	r := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(res.Content)}}
	if res.JSON {
		if js, ok := wire.StructuredJSON(res.Content); ok {
			r.StructuredContent = js
		}
	}
	return r
}

func failureResult(err error) *mcp.CallToolResult {
	f := wire.FailureOf(err)
	return &mcp.CallToolResult{
		Result:  mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{wire.MetaError: f.MetaInfo()}}},
		Content: []mcp.Content{mcp.NewTextContent(f.Text)},
		IsError: true,
	}
}

// resultOf is a handler's result as a toolmw Result: its structured
// content as JSON when it has some, else its text.
func resultOf(res *mcp.CallToolResult) toolmw.Result {
	if len(res.RawStructuredContent) > 0 {
		return toolmw.Result{Content: string(res.RawStructuredContent), JSON: true}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return toolmw.Result{Content: string(b), JSON: true}
		}
	}
	return toolmw.Text(textOf(res))
}

func textOf(res *mcp.CallToolResult) string {
	parts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		parts = append(parts, contentText(c))
	}
	return wire.JoinText(parts)
}

func contentText(c mcp.Content) string {
	switch c := c.(type) {
	case mcp.TextContent:
		return c.Text
	case *mcp.TextContent:
		return c.Text
	case mcp.EmbeddedResource:
		return resourceText(c.Resource)
	case *mcp.EmbeddedResource:
		return resourceText(c.Resource)
	case mcp.ImageContent:
		return placeholder("image", c.MIMEType)
	case *mcp.ImageContent:
		return placeholder("image", c.MIMEType)
	case mcp.AudioContent:
		return placeholder("audio", c.MIMEType)
	case *mcp.AudioContent:
		return placeholder("audio", c.MIMEType)
	case nil:
		return ""
	}
	return "[content]"
}

func resourceText(r mcp.ResourceContents) string {
	switch r := r.(type) {
	case mcp.TextResourceContents:
		return r.Text
	case *mcp.TextResourceContents:
		return r.Text
	}
	return "[embedded resource]"
}

func placeholder(kind, mime string) string {
	if len(mime) > 64 {
		mime = mime[:64]
	}
	return "[" + kind + ": " + mime + "]"
}
