package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/adapters/mcp/internal/wire"
	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/taxonomy"
)

// The bounds of what a Remote takes from a server's tool list.
const (
	// MaxTools is the most tools a Remote takes from one server; a longer
	// list is a start-up error (too_many_tools), found as the pages come.
	MaxTools = 4096
	// MaxDescriptionLen is the longest tool description a Remote keeps, in
	// bytes, after scrubbing; a longer one is cut, ending in "…".
	MaxDescriptionLen = 4096
	// maxEmptyPages is how many pages in a row may list no tool and name
	// a next page; one more is too_many_tools.
	maxEmptyPages = 8
)

// ModelName maps an MCP tool name to the name a model is shown, one every
// model API accepts, [a-zA-Z0-9_-]{1,64}: each other character (MCP allows
// '.') becomes '_', and a name longer than 64 bytes keeps its first 55
// bytes, then '_' and 8 hex digits of the SHA-256 of the MCP name. A name
// that is already model-safe comes back as it is. The mapping is
// deterministic; distinct MCP names can map to one model name ("a.b" and
// "a_b"), which [NewRemote] reports as a start-up error.
func ModelName(mcpName string) string { return wire.ModelName("", mcpName) }

// A RemoteOption configures [NewRemote].
type RemoteOption func(*remoteOptions)

type remoteOptions struct {
	prefix   string
	names    func(string) string
	pin      string
	onChange func(DefinitionChange)
	filter   func(*sdk.Tool) bool
	spec     func(*sdk.Tool, *toolmw.Spec)
	mapper   *mapper.Map
	dial     func(context.Context) (*sdk.ClientSession, error)
	err      error
}

func evaluateRemoteOptions(opts []RemoteOption) *remoteOptions {
	o := &remoteOptions{mapper: defaultMap}
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	return o
}

func (o *remoteOptions) reject(format string, args ...any) {
	if o.err == nil {
		o.err = optionError(format, args...)
	}
}

// maxPrefixLen is the longest name prefix: room is left for the name.
const maxPrefixLen = 32

// WithPrefix puts prefix in front of every model name ("booking_" makes
// search of a server booking_search), so the tools of several servers can
// share a toolbox. It must be "" or at most 32 of a-z, A-Z, 0-9, '_' and
// '-'; anything else is an option_invalid error. It applies to the default
// mapping ([ModelName]), not to one given with [WithNames].
func WithPrefix(prefix string) RemoteOption {
	return func(o *remoteOptions) {
		if prefix != "" && (len(prefix) > maxPrefixLen || !toolmw.ValidName(prefix)) {
			o.reject("WithPrefix(%q): want at most %d of a-z, A-Z, 0-9, '_' and '-'", quote(prefix), maxPrefixLen)
			return
		}
		o.prefix = prefix
	}
}

// WithNames replaces [ModelName] as the map from an MCP tool name to the
// model's name (nil means ModelName with [WithPrefix]'s prefix, and a
// hashed name for a name a secret shows in). f gets the server's name as
// listed, unscrubbed, and what it returns is shown to the model as it is.
// A name f returns that is not a valid toolmw name, or that two tools
// share, is a start-up error of NewRemote.
func WithNames(f func(mcpName string) string) RemoteOption {
	return func(o *remoteOptions) { o.names = f }
}

// WithFilter keeps only the tools for which keep returns true (nil keeps
// every tool): to leave out tools the agent should not see, or a tool
// whose schema toolmw cannot use. keep gets the tool as the Remote uses
// it: its name as listed, its title, description and schemas' descriptions
// scrubbed.
func WithFilter(keep func(*sdk.Tool) bool) RemoteOption {
	return func(o *remoteOptions) { o.filter = keep }
}

// WithSpec lets f adjust the spec a Remote makes for each tool before it is
// checked (nil: no adjustment): its idempotency, argument size cap,
// profiles, description or OpenTelemetry tool type. Renaming the tool is
// allowed and is checked like any name. The *sdk.Tool is the server's
// listing as the Remote uses it (see [WithFilter]), for reading.
func WithSpec(f func(*sdk.Tool, *toolmw.Spec)) RemoteOption {
	return func(o *remoteOptions) { o.spec = f }
}

// WithMapper sets the map that classifies the errors of calls to the
// server (nil means the default: mapper.Default() with [Rules]). A map of
// your own should include Rules, or JSON-RPC errors and a closed session
// end as unmapped failures.
func WithMapper(m *mapper.Map) RemoteOption {
	return func(o *remoteOptions) {
		if m == nil {
			m = defaultMap
		}
		o.mapper = m
	}
}

// WithReconnect gives the Remote a way to open a new session when the one
// it uses has closed (the server went away, a streamable HTTP session
// expired): the next call after the close dials, and calls made while it
// dials wait for it (or their context). A failed dial fails the call as
// tool-failed/upstream_unavailable, retryable, so with a breaker in the
// stack a dead server opens the circuit and its half-open probes are what
// try to reconnect. dial gets the context of the call that found the
// session closed; a session it returns is the Remote's, closed by
// [Remote.Close]. Without it (nil), calls after the close fail fast as
// upstream_unavailable.
func WithReconnect(dial func(context.Context) (*sdk.ClientSession, error)) RemoteOption {
	return func(o *remoteOptions) { o.dial = dial }
}

// Remote is the tools of one MCP server, connected through a go-sdk client
// session, as toolmw tools: a spec each (a model-safe name, the server's
// description and input schema, idempotency from its annotations) and a
// Tool that calls the server. Register them in a [toolmw.Toolbox] with a
// stack, so a remote tool runs through the same timeout, retry, breaker,
// rate limit and tracing as a local one; a breaker per server is a shared
// one (breaker.WithShared) in the stack the server's tools are wrapped in.
//
// A call sends the arguments (already checked against the server's input
// schema by toolmw.Wrap) and the model's call id (in _meta under
// [MetaCallID]). What comes back:
//
//   - a result: text content joined by newlines, or a JSON result when
//     the server sent structured content; a result with other content
//     (images, audio, embedded resources, resource links, annotations) as
//     parts, bounded and checked ([MaxRemotePartBytes],
//     [MaxRemoteResultBytes], [MaxRemoteURILen]; a result over them is a
//     tool-result-invalid error, result_too_large or result_part_invalid);
//   - progress, log lines, elicitation and sampling requests the server
//     sends during the call: relayed to the caller's toolmw.Session when
//     the client was made with [ClientOptions];
//   - an isError result: the remote tool's own answer, a typed error that
//     is never retryable; from a toolmw server it keeps the kind, code and
//     field errors of the record in _meta ([MetaError]), otherwise it is
//     tool-failed/remote_tool_error. Its text is untrusted: scrubbed, cut
//     to 1 KiB, and shown to the model only inside ForModel's envelope;
//   - a protocol or transport error: classified by the map ([WithMapper],
//     [Rules]): an unknown tool is tool-not-found, invalid params
//     tool-args-invalid, an internal error tool-failed/upstream_error
//     (retryable for an idempotent tool), a closed session or an
//     undelivered request tool-failed/upstream_unavailable (retryable), an
//     HTTP status per the mapper's status rules (429 rate-limited with its
//     Retry-After; see [HTTPTransport]), a broken connection
//     connection_reset. The server's text is never a message.
//
// A Remote is safe for concurrent use. The tool list is read by NewRemote,
// and again by [Remote.Verify] and for a session [WithReconnect] dials,
// each time held to the definitions NewRemote recorded.
type Remote struct {
	o     *remoteOptions
	specs []toolmw.Spec
	tools map[string]toolmw.Tool // model name → the tool
	names map[string]string      // model name → MCP name
	defs  definitions            // the definitions served, as listed

	mu      sync.Mutex
	cs      *sdk.ClientSession
	dead    bool // cs has closed
	closed  bool // Close was called
	changed bool // a later listing changed the definitions
	dialing *dial
	owned   []*sdk.ClientSession // sessions dial opened
}

// dial is a reconnection in progress, shared by the calls that wait for it.
type dial struct {
	done chan struct{}
	cs   *sdk.ClientSession
	err  error
}

// NewRemote lists the tools of the server behind cs and returns them as a
// Remote. A tool the server lists is kept unless [WithFilter] drops it;
// its model name is [ModelName] of its MCP name (see [WithPrefix] and
// [WithNames]); its spec is idempotent when the server hints it is
// idempotent or read-only (a server's hints are its own word; see
// [WithSpec] to decide otherwise); its input schema is the server's,
// which toolmw.Wrap compiles and checks every call's arguments against
// before they leave.
//
// The server's definitions are untrusted input. What of them reaches the
// model is scrubbed: descriptions (then cut to [MaxDescriptionLen]),
// titles, and the descriptive keywords of input schemas (description,
// title, $comment, examples, default) at any depth; a name in which a
// secret shows, even glued to a word, gets a hashed model name
// (prefix+"tool_"+8 hex digits). The Remote records the digest of the
// definitions as listed ([Remote.Digest]): with [WithPin], a server whose
// digest differs is refused; later listings ([Remote.Verify], the session
// [WithReconnect] dials) are held to the recorded digest.
//
// The listing is bounded: at most [MaxTools] tools, counted as the pages
// come, and 8 pages in a row without a tool; in bytes, before the SDK
// decodes them, when cs was connected through [LimitTransport]. ctx bounds
// it all: it is checked between pages and between tools, and NewRemote
// returns its error (context.Canceled as is) when it ends.
//
// Start-up errors: a nil ctx or cs or an invalid option (option_invalid),
// a model name that is not valid (name_invalid) or that two tools share
// (duplicate-tool), a schema toolmw cannot use (schema_invalid, …; leave
// the tool out with WithFilter), a listing over the bounds
// (too_many_tools, tool_list_too_large), definitions not the pinned ones
// (definitions_changed), and a failed listing, classified as a call's
// failure is.
//
// The Remote calls cs, which stays the caller's to close.
func NewRemote(ctx context.Context, cs *sdk.ClientSession, opts ...RemoteOption) (*Remote, error) {
	o := evaluateRemoteOptions(opts)
	switch {
	case ctx == nil:
		o.reject("NewRemote: the context is nil")
	case cs == nil:
		o.reject("NewRemote: the session is nil")
	}
	if o.err != nil {
		return nil, o.err
	}
	r := &Remote{o: o, cs: cs, tools: map[string]toolmw.Tool{}, names: map[string]string{}}
	listed, err := r.list(ctx, cs)
	if err != nil {
		return nil, err
	}
	r.defs = digestOf(listed)
	if o.pin != "" && r.defs.digest != o.pin {
		return nil, r.refuse(r.change(definitions{digest: o.pin}, r.defs))
	}
	for _, listedTool := range listed {
		if err := ctx.Err(); err != nil {
			return nil, o.mapper.ClassifyContext(ctx, "", true, err)
		}
		t := untrusted(listedTool)
		if o.filter != nil && !o.filter(t) {
			continue
		}
		spec := toolmw.Spec{
			Name:        r.modelName(t.Name),
			Description: truncate(t.Description, MaxDescriptionLen),
			Idempotent:  t.Annotations != nil && (t.Annotations.IdempotentHint || t.Annotations.ReadOnlyHint),
			InputSchema: inputSchema(t.InputSchema),
		}
		if o.spec != nil {
			o.spec(t, &spec)
		}
		if prev, dup := r.names[spec.Name]; dup {
			return nil, taxonomy.New(taxonomy.KindDuplicateTool, taxonomy.CodeDuplicateTool,
				fmt.Sprintf("the MCP tools %q and %q both have the model name %q", quote(prev), quote(t.Name), spec.Name))
		}
		tool := r.tool(t.Name)
		if _, err := toolmw.Wrap(spec, tool); err != nil {
			return nil, err
		}
		r.specs = append(r.specs, spec)
		r.tools[spec.Name] = tool
		r.names[spec.Name] = t.Name
	}
	if err := ctx.Err(); err != nil {
		return nil, o.mapper.ClassifyContext(ctx, "", true, err)
	}
	return r, nil
}

// errTooManyTools refuses a listing over MaxTools, or one that pages on
// without tools.
var errTooManyTools = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.Declare(CodeTooManyTools),
	fmt.Sprintf("the MCP server lists more than %d tools", MaxTools))

// errListTooLarge refuses a listing over LimitTransport's bound.
var errListTooLarge = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.Declare(CodeToolListTooLarge),
	"the MCP server's tool list is over the bound of its transport")

// list reads the server's tool list, page by page, within the bounds.
func (r *Remote) list(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.Tool, error) {
	var listed []*sdk.Tool
	params := &sdk.ListToolsParams{}
	for empty := 0; ; {
		if err := ctx.Err(); err != nil {
			return nil, r.o.mapper.ClassifyContext(ctx, "", true, err)
		}
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			switch {
			case isListTooLarge(err):
				return nil, errListTooLarge
			case isTooManyTools(err):
				return nil, errTooManyTools
			}
			return nil, r.o.mapper.ClassifyContext(ctx, "", true, err)
		}
		if len(res.Tools) == 0 {
			empty++
		} else {
			empty = 0
		}
		for _, t := range res.Tools {
			if t == nil {
				continue
			}
			if len(listed) == MaxTools {
				return nil, errTooManyTools
			}
			listed = append(listed, t)
		}
		if res.NextCursor == "" {
			return listed, nil
		}
		if empty > maxEmptyPages {
			return nil, errTooManyTools
		}
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
}

// inputSchema is a listed tool's input schema as JSON: {"type":"object"}
// when it has none, and "type": "object" added when it says no type (tool
// arguments are objects).
func inputSchema(v any) json.RawMessage {
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return json.RawMessage(`{"type":"object"}`)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return json.RawMessage(`{"type":"object"}`)
		}
		return b
	}
	if _, typed := m["type"]; !typed {
		m = maps.Clone(m)
		m["type"] = "object"
	}
	b, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return b
}

// Specs returns the specs of the remote tools, in the server's order. The
// slice is a copy.
func (r *Remote) Specs() []toolmw.Spec {
	return slices.Clone(r.specs)
}

// Tool returns the bare tool (no middleware) of the remote tool with the
// model name name. Wrap it with its spec ([toolmw.Wrap]) before use: the
// spec carries the input schema that checks the arguments, and the call id
// and idempotency come from the Call that Wrap puts in the context.
func (r *Remote) Tool(name string) (toolmw.Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// MCPName returns the server's name of the tool with the model name name.
func (r *Remote) MCPName(name string) (string, bool) {
	n, ok := r.names[name]
	return n, ok
}

// Register registers every remote tool in box, each wrapped with mws
// inside the box's own middlewares (see [toolmw.Toolbox.Register]). A name
// the box already holds is a duplicate-tool error, found before any tool is
// registered.
func (r *Remote) Register(box *toolmw.Toolbox, mws ...toolmw.Middleware) error {
	if box == nil {
		return optionError("Register: the toolbox is nil")
	}
	held := map[string]bool{}
	for _, s := range box.Specs() {
		held[s.Name] = true
	}
	for _, s := range r.specs {
		if held[s.Name] {
			return taxonomy.New(taxonomy.KindDuplicateTool, taxonomy.CodeDuplicateTool,
				"a tool named "+s.Name+" is already registered").WithTool(s.Name)
		}
	}
	for _, s := range r.specs {
		if err := box.Register(s, r.tools[s.Name], mws...); err != nil {
			return err
		}
	}
	return nil
}

// Toolbox returns a new toolbox of the remote tools, each wrapped with mws
// (the first outermost).
func (r *Remote) Toolbox(mws ...toolmw.Middleware) (*toolmw.Toolbox, error) {
	box := toolmw.NewToolbox(mws...)
	if err := r.Register(box); err != nil {
		return nil, err
	}
	return box, nil
}

// Close closes the sessions [WithReconnect] opened; later calls fail as
// tool-failed/remote_closed. The session given to NewRemote stays the
// caller's to close.
func (r *Remote) Close() error {
	r.mu.Lock()
	r.closed = true
	owned := r.owned
	r.owned = nil
	r.mu.Unlock()
	var errs []error
	for _, cs := range owned {
		if err := cs.Close(); err != nil && !errors.Is(err, sdk.ErrConnectionClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// errClosed fails a call after Close.
var errClosed = taxonomy.Failure(taxonomy.Declare("remote_closed"), "the MCP client was closed")

// errSessionClosed fails a call while the session is closed and there is
// no way to reconnect: nothing was sent.
var errSessionClosed = taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the session with the MCP server has closed")

// tool is the bare tool that calls the MCP tool mcpName.
func (r *Remote) tool(mcpName string) toolmw.Tool {
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		call, _ := toolmw.CallFrom(ctx)
		cs, err := r.session(ctx)
		if err != nil {
			return toolmw.Result{}, err
		}
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		params := &sdk.CallToolParams{Name: mcpName, Arguments: args}
		if call.ID != "" {
			params.Meta = sdk.Meta{MetaCallID: call.ID} // a new map each call: the SDK adds to it
		}
		rec := &status{}
		f := begin(ctx, cs, params)
		res, err := cs.CallTool(withStatus(ctx, rec), params)
		f.end(cs)
		if err != nil {
			if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) {
				r.lost(cs)
			}
			return toolmw.Result{}, r.classify(ctx, call, rec, err)
		}
		if res == nil {
			return toolmw.Result{}, nil
		}
		if res.IsError {
			return toolmw.Result{}, wire.OwnCancel(ctx, wire.ReportedFailure(wire.CodeRemoteToolError, textOf(res), res.Meta[MetaError]))
		}
		return remoteResult(res)
	}
}

// session returns the session to call, dialing a new one when the current
// one has closed and WithReconnect allows.
func (r *Remote) session(ctx context.Context) (*sdk.ClientSession, error) {
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return nil, errClosed
	case r.changed:
		r.mu.Unlock()
		return nil, errDefinitionsChanged
	case !r.dead:
		cs := r.cs
		r.mu.Unlock()
		return cs, nil
	case r.o.dial == nil:
		r.mu.Unlock()
		return nil, errSessionClosed
	}
	d := r.dialing
	if d == nil {
		d = &dial{done: make(chan struct{})}
		r.dialing = d
		r.mu.Unlock()
		r.redial(ctx, d)
	} else {
		r.mu.Unlock()
	}
	select {
	case <-d.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	switch {
	case d.err == nil:
		return d.cs, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(d.err, context.Canceled):
		// The call that dialed was cancelled; this one was not.
		return nil, errDialAbandoned
	}
	return nil, d.err
}

// errDialAbandoned fails the calls that waited for a reconnection that the
// call making it abandoned: nothing was sent, and the next call dials again.
var errDialAbandoned = taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the reconnection to the MCP server was abandoned")

// redial runs d: it dials, holds the new session's tool definitions to
// the recorded ones, and installs the session.
func (r *Remote) redial(ctx context.Context, d *dial) {
	cs, err := r.o.dial(ctx)
	if err == nil && cs == nil {
		err = errors.New("the dial function returned no session")
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			d.err = err
		} else {
			d.err = taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the MCP server could not be reached").WithCause(err)
		}
	} else if verr := r.verify(ctx, cs); verr != nil {
		// A session whose server lists other definitions is not used; one
		// whose listing failed is not used either (the next call dials
		// again).
		d.err = verr
		if _, typed := taxonomy.From(verr); !typed && !errors.Is(verr, context.Canceled) {
			d.err = taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the MCP server's tools could not be listed").WithCause(verr)
		}
		_ = cs.Close()
	}
	r.mu.Lock()
	r.dialing = nil
	switch {
	case d.err != nil:
	case r.closed:
		d.err = errClosed
		defer cs.Close()
	default:
		r.cs, r.dead, d.cs = cs, false, cs
		r.owned = append(r.owned, cs)
	}
	r.mu.Unlock()
	close(d.done)
}

// lost records that cs has closed.
func (r *Remote) lost(cs *sdk.ClientSession) {
	r.mu.Lock()
	if r.cs == cs {
		r.dead = true
	}
	r.mu.Unlock()
}

// classify turns the error of a tools/call into a typed one.
func (r *Remote) classify(ctx context.Context, call toolmw.Call, rec *status, err error) error {
	if te, ok := typedProtocolError(err); ok {
		return wire.OwnCancel(ctx, te)
	}
	if code, header, ok := rec.get(); ok {
		err = &statusError{http: httpError(code, header), err: err}
	} else if code, ok := statusOfText(err); ok {
		err = &statusError{http: httpError(code, nil), err: err}
	}
	te := r.o.mapper.ClassifyContext(ctx, call.Tool, call.Idempotent, err)
	if t, ok := te.(*taxonomy.ToolError); ok && t.Code() == taxonomy.CodeUnmappedFailure && rejected(err) {
		// The SDK's transport did not deliver the request.
		return taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the request did not reach the MCP server").WithCause(err)
	}
	return te
}

// typedProtocolError returns the typed error a toolmw server sent as a
// JSON-RPC error's data (see ProtocolErrors).
func typedProtocolError(err error) (*taxonomy.ToolError, bool) {
	var we *jsonrpc.Error
	if !errors.As(err, &we) || len(we.Data) == 0 {
		return nil, false
	}
	info, ok := wire.InfoOf(we.Data)
	if !ok {
		return nil, false
	}
	te := wire.Adopt(info).WithCause(err)
	if info.RetryAfter > 0 {
		te = te.WithRetryAfter(durationOf(info.RetryAfter))
	}
	return te, true
}

// textOf joins the text of a result's content.
func textOf(res *sdk.CallToolResult) string {
	parts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		parts = append(parts, contentText(c))
	}
	return wire.JoinText(parts)
}

// contentText is one content item as text: its text, or a placeholder
// naming what it is.
func contentText(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return unenvelope(c.Text)
	case *sdk.EmbeddedResource:
		if c.Resource != nil && c.Resource.Text != "" {
			return unenvelope(c.Resource.Text)
		}
		return "[embedded resource]"
	case *sdk.ImageContent:
		return "[image: " + truncate(c.MIMEType, 64) + "]"
	case *sdk.AudioContent:
		return "[audio: " + truncate(c.MIMEType, 64) + "]"
	case *sdk.ResourceLink:
		return "[resource link]"
	case nil:
		return ""
	}
	return "[content]"
}

// unenvelope returns s without the untrusted-data envelope of a result
// when s is exactly one (a toolmw server wraps every text it sends), and s
// otherwise: what the Remote returns is wrapped again by ForModel, never
// twice.
func unenvelope(s string) string {
	if source, content, ok := toolmw.ParseEnvelope(s); ok && source == toolmw.SourceResult {
		return content
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return strings.ToValidUTF8(s[:i], "") + "…"
}
