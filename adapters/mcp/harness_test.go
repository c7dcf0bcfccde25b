package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
	"github.com/toolmw/toolmw/adapters/mcp/mcpgo"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/taxonomy"
)

// The servers and transports every acceptance case runs over.
type serverKind string

const (
	goSDK serverKind = "go-sdk"
	mcpGo serverKind = "mcp-go"
)

type transportKind string

const (
	inMemory   transportKind = "memory"
	streamable transportKind = "http"
)

var matrix = []struct {
	server    serverKind
	transport transportKind
}{
	{goSDK, inMemory}, {goSDK, streamable}, {mcpGo, inMemory}, {mcpGo, streamable},
}

// Planted secrets: made-up values in the shapes the scrubber knows, and
// their distinctive parts, none of which may appear where telemetry or the
// model can see them.
var secrets = []struct{ value, body string }{
	{"ghp_" + "Zx81kQ2mVb7TnR4wLp0sYd6hJc3fGe9aUi5o", "Zx81kQ2mVb7TnR4wLp0sYd6hJc3fGe9aUi5o"},
	{"AKIA" + "ZQXW4E5R6T7Y8U9I", "ZQXW4E5R6T7Y8U9I"},
	{"sk_live_" + "51HdX9pQ2wErTyUiOpAsDfGh", "51HdX9pQ2wErTyUiOpAsDfGh"},
	{"hunter2-canary-" + "passphrase", "hunter2-canary"},
}

// leakedIn returns the first planted secret found in text, or "".
func leakedIn(text string) string {
	for _, s := range secrets {
		if strings.Contains(text, s.body) {
			return s.value
		}
	}
	return ""
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// observed is what one side's stack reports: logs, spans and events.
type observed struct {
	logs    *syncBuffer
	logger  *slog.Logger
	spans   *tracetest.SpanRecorder
	tp      *sdktrace.TracerProvider
	emitter *events.Emitter
	mu      sync.Mutex
	events  []events.Event
}

func newObserved() *observed {
	o := &observed{logs: &syncBuffer{}, spans: tracetest.NewSpanRecorder()}
	o.logger = slog.New(slog.NewJSONHandler(o.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(o.spans))
	o.emitter = events.NewEmitter(events.SinkFunc(func(e events.Event) {
		o.mu.Lock()
		o.events = append(o.events, e)
		o.mu.Unlock()
	}))
	return o
}

// stack is the default stack reporting to o, with opts.
func (o *observed) stack(t *testing.T, opts ...middleware.Option) middleware.Stack {
	t.Helper()
	all := append([]middleware.Option{
		middleware.WithSlog(o.logger),
		middleware.WithTracing(tracing.WithTracerProvider(o.tp)),
	}, opts...)
	s, err := middleware.Default(all...).Replace(middleware.Events, o.emitter.Middleware())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (o *observed) eventList(t *testing.T) []events.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := o.emitter.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]events.Event(nil), o.events...)
}

// leaks lists where a planted secret appears: a log line at WARN or
// above, a span's name, attributes, events or status, or an event.
func (o *observed) leaks(t *testing.T, side string) []string {
	t.Helper()
	var found []string
	for _, line := range strings.Split(o.logs.String(), "\n") {
		if line == "" {
			continue
		}
		var rec struct{ Level string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%s log line is not JSON: %q", side, line)
		}
		if rec.Level == "WARN" || rec.Level == "ERROR" {
			if s := leakedIn(line); s != "" {
				found = append(found, side+" log: "+line)
			}
		}
	}
	for _, sp := range o.spans.Ended() {
		var b strings.Builder
		b.WriteString(sp.Name() + " " + sp.Status().Description)
		for _, a := range sp.Attributes() {
			b.WriteString(" " + string(a.Key) + "=" + a.Value.String())
		}
		for _, e := range sp.Events() {
			b.WriteString(" " + e.Name)
			for _, a := range e.Attributes {
				b.WriteString(" " + string(a.Key) + "=" + a.Value.String())
			}
		}
		if s := leakedIn(b.String()); s != "" {
			found = append(found, side+" span: "+b.String())
		}
	}
	for _, e := range o.eventList(t) {
		js, _ := json.Marshal(e)
		if s := leakedIn(string(js)); s != "" {
			found = append(found, side+" event: "+string(js))
		}
	}
	return found
}

// tools is the server's tools and what they saw.
type tools struct {
	mu        sync.Mutex
	runs      map[string]int                // executions per tool
	ids       []string                      // call ids echo saw
	started   chan string                   // slow has started
	cancelled chan string                   // slow saw its context end
	down      atomic.Pointer[chan struct{}] // closed when the server process dies
	requests  atomic.Int32                  // tools/call requests the server received
}

func newTools() *tools {
	ts := &tools{runs: map[string]int{}, started: make(chan string, 16), cancelled: make(chan string, 16)}
	ts.revive()
	return ts
}

// die ends every call in flight, as the death of the server's process
// does; revive makes the next incarnation.
func (ts *tools) die() { close(*ts.down.Load()) }

func (ts *tools) revive() {
	ch := make(chan struct{})
	ts.down.Store(&ch)
}

func (ts *tools) ran(name string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.runs[name]++
	return ts.runs[name]
}

func (ts *tools) runsOf(name string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.runs[name]
}

// BookArgs is the input of the server's book tool.
type BookArgs struct {
	Flight string `json:"flight" jsonschema:"the flight number"`
	Seats  int    `json:"seats" jsonschema:"how many seats"`
}

// toolSpec is one server tool: its spec and its implementation.
type toolSpec struct {
	spec toolmw.Spec
	tool toolmw.Tool
}

// list returns the server's tools.
func (ts *tools) list() []toolSpec {
	return []toolSpec{
		{toolmw.Spec{Name: "echo", Description: "Echo the arguments and the call id.", Idempotent: true, ResultJSON: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
			func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				ts.ran("echo")
				c, _ := toolmw.CallFrom(ctx)
				ts.mu.Lock()
				ts.ids = append(ts.ids, c.ID)
				ts.mu.Unlock()
				return toolmw.JSON(map[string]any{"call_id": c.ID, "args": args})
			}},
		{toolmw.Spec{Name: "flaky", Description: "Fails transiently on every other call."},
			func(context.Context, json.RawMessage) (toolmw.Result, error) {
				if ts.ran("flaky")%2 == 1 {
					return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the supplier is busy")
				}
				return toolmw.Text("ok after a retry"), nil
			}},
		{toolmw.Spec{Name: "refuse", Description: "Refuses."},
			func(context.Context, json.RawMessage) (toolmw.Result, error) {
				ts.ran("refuse")
				return toolmw.Result{}, taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
			}},
		{toolmw.Spec{Name: "leak", Description: "Fails with secrets in an untyped error."},
			func(context.Context, json.RawMessage) (toolmw.Result, error) {
				ts.ran("leak")
				return toolmw.Result{}, fmt.Errorf("POST https://api.example.com/book?token=%s: 401 (key %s, auth %s, password=%s)",
					secrets[0].value, secrets[1].value, secrets[2].value, secrets[3].value)
			}},
		{toolmw.Spec{Name: "boom", Description: "Panics."},
			func(context.Context, json.RawMessage) (toolmw.Result, error) {
				ts.ran("boom")
				panic("db password=" + secrets[3].value + " token " + secrets[0].value)
			}},
		{toolmw.Spec{Name: "book", Description: "Book seats."},
			toolmw.Typed(func(_ context.Context, in BookArgs) (string, error) {
				ts.ran("book")
				return fmt.Sprintf("booked %d on %s", in.Seats, in.Flight), nil
			})},
		{toolmw.Spec{Name: "slow", Description: "Runs until cancelled."},
			func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
				ts.ran("slow")
				down := *ts.down.Load()
				ts.started <- "slow"
				select {
				case <-ctx.Done():
					ts.cancelled <- "slow"
					return toolmw.Result{}, ctx.Err()
				case <-down:
					return toolmw.Result{}, errors.New("the process died")
				}
			}},
	}
}

// config varies a fixture.
type config struct {
	timeout   time.Duration // the client's per-attempt timeout (default 5 s)
	openFor   time.Duration // the client breaker's open period (default 1 min)
	reconnect bool          // the Remote may dial a new session
	noStatus  bool          // the client's HTTP transport is not wrapped with HTTPTransport
}

// fixture is a server of one kind over one transport, a go-sdk client and a
// Remote of the server's tools in a toolbox behind the client's stack.
type fixture struct {
	t         *testing.T
	kind      serverKind
	transport transportKind
	cfg       config
	tools     *tools
	srv       *observed
	cli       *observed
	wire      *syncBuffer // what the server sent
	breaker   *breaker.Breaker
	attempts  atomic.Int32 // the attempts of the last call through the box

	// A 429-style answer for the next limited tools/call requests.
	limited    atomic.Int32
	retryAfter string // the Retry-After header, in seconds

	sdkServer *sdk.Server
	mcpServer *server.MCPServer
	gotErrors chan error // go-sdk: the typed errors the server's own middleware saw

	mu    sync.Mutex
	live  func() (sdk.Transport, error) // a client transport to the running server
	serve func()                        // HTTP: start the server again
	kill  func()                        // the server dies

	client *sdk.Client
	cs     *sdk.ClientSession
	remote *toolmcp.Remote
	box    *toolmw.Toolbox
	httpTr *http.Transport
}

func newFixture(t *testing.T, kind serverKind, tk transportKind, cfg config) *fixture {
	t.Helper()
	if cfg.timeout == 0 {
		cfg.timeout = 5 * time.Second
	}
	if cfg.openFor == 0 {
		cfg.openFor = time.Minute
	}
	f := &fixture{
		t: t, kind: kind, transport: tk, cfg: cfg,
		tools: newTools(), srv: newObserved(), cli: newObserved(), wire: &syncBuffer{},
		gotErrors: make(chan error, 64), httpTr: &http.Transport{},
	}
	t.Cleanup(f.close)
	switch kind {
	case goSDK:
		f.buildSDKServer()
	case mcpGo:
		f.buildMCPGoServer()
	}
	f.start()
	f.connect()
	return f
}

func (f *fixture) serverStack() middleware.Stack {
	return f.srv.stack(f.t,
		middleware.WithTimeout(5*time.Second),
		middleware.WithRetry(retry.WithBackoff(time.Millisecond, 5*time.Millisecond)))
}

func (f *fixture) buildSDKServer() {
	box := toolmw.NewToolbox(f.serverStack().Middleware())
	for _, ts := range f.tools.list() {
		if err := box.Register(ts.spec, ts.tool); err != nil {
			f.t.Fatal(err)
		}
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1.0.0"}, &sdk.ServerOptions{Logger: f.srv.logger})
	srv.AddReceivingMiddleware(f.seeErrors, toolmcp.ProtocolErrors(), f.rateLimit)
	if err := toolmcp.AddToolbox(srv, box, toolmcp.WithHints("echo", toolmcp.Hints{ReadOnly: true})); err != nil {
		f.t.Fatal(err)
	}
	f.sdkServer = srv
}

// seeErrors is the go-sdk server's own middleware: it counts tools/call
// requests and records the typed error of each isError result.
func (f *fixture) seeErrors(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/call" {
			f.tools.requests.Add(1)
		}
		res, err := next(ctx, method, req)
		if r, ok := res.(*sdk.CallToolResult); ok && r != nil && err == nil && r.IsError {
			select {
			case f.gotErrors <- r.GetError():
			default:
			}
		}
		return res, err
	}
}

// rateLimit answers limited tools/call requests with a typed rate-limited
// error, as a server-wide limiter would.
func (f *fixture) rateLimit(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/call" && f.limited.Add(-1) >= 0 {
			d, _ := time.ParseDuration(f.retryAfter + "s")
			return nil, taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeRateLimited, "too many calls").WithRetryAfter(d)
		}
		return next(ctx, method, req)
	}
}

func (f *fixture) buildMCPGoServer() {
	mw, err := mcpgo.Middleware(f.serverStack().Middleware())
	if err != nil {
		f.t.Fatal(err)
	}
	hooks := &server.Hooks{}
	hooks.AddBeforeCallTool(func(context.Context, any, *gomcp.CallToolRequest) { f.tools.requests.Add(1) })
	s := server.NewMCPServer("test", "1.0.0", server.WithToolHandlerMiddleware(mw), server.WithHooks(hooks))
	for _, ts := range f.tools.list() {
		opts := []gomcp.ToolOption{gomcp.WithDescription(ts.spec.Description)}
		if ts.spec.Idempotent {
			opts = append(opts, gomcp.WithIdempotentHintAnnotation(true), gomcp.WithReadOnlyHintAnnotation(true))
		}
		if ts.spec.Name == "book" {
			opts = append(opts,
				gomcp.WithString("flight", gomcp.Required(), gomcp.Description("the flight number")),
				gomcp.WithNumber("seats", gomcp.Required(), gomcp.Description("how many seats")))
		}
		tool := ts.tool
		s.AddTool(gomcp.NewTool(ts.spec.Name, opts...), func(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
			res, err := tool(ctx, req.Params.RawArguments)
			if err != nil {
				return nil, err
			}
			if res.JSON {
				return gomcp.NewToolResultStructured(json.RawMessage(res.Content), res.Content), nil
			}
			return gomcp.NewToolResultText(res.Content), nil
		})
	}
	// A handler that reports a failure in its own words, with a key in them.
	s.AddTool(gomcp.NewTool("oops", gomcp.WithDescription("Reports a failure.")), func(context.Context, gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
		f.tools.ran("oops")
		return gomcp.NewToolResultError("the supplier rejected key " + secrets[1].value), nil
	})
	f.mcpServer = s
}

// start starts the server on the fixture's transport.
func (f *fixture) start() {
	switch {
	case f.kind == goSDK && f.transport == inMemory:
		f.live = func() (sdk.Transport, error) {
			ct, st := sdk.NewInMemoryTransports()
			conn := &abrupt{Transport: st}
			ss, err := f.sdkServer.Connect(context.Background(), &sdk.LoggingTransport{Transport: conn, Writer: serverWrites{f.wire}}, nil)
			if err != nil {
				return nil, err
			}
			f.onKill(func() {
				conn.kill() // no goodbye: the pipe just breaks
				ss.Close()
			})
			return ct, nil
		}
	case f.kind == mcpGo && f.transport == inMemory:
		f.live = func() (sdk.Transport, error) {
			sr, cw := io.Pipe()
			cr, sw := io.Pipe()
			stdio := server.NewStdioServer(f.mcpServer)
			stdio.SetErrorLogger(log.New(io.Discard, "", 0))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = stdio.Listen(ctx, sr, io.MultiWriter(sw, f.wire))
			}()
			f.onKill(func() {
				cancel()
				sr.Close()
				sw.Close()
				<-done
			})
			return &sdk.IOTransport{Reader: cr, Writer: cw}, nil
		}
	default:
		// Each serve is a new server process on the same address: a fresh
		// handler that knows no session of the last one.
		addr := "127.0.0.1:0"
		var url string
		f.serve = func() {
			var h http.Handler
			path := ""
			if f.kind == goSDK {
				h = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return f.sdkServer }, nil)
			} else {
				h = server.NewStreamableHTTPServer(f.mcpServer)
				path = "/mcp"
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				f.t.Fatal(err)
			}
			addr = ln.Addr().String()
			hs := httptest.NewUnstartedServer(f.front(h))
			hs.Listener.Close()
			hs.Listener = ln
			hs.Start()
			url = hs.URL + path
			f.onKill(func() {
				hs.CloseClientConnections()
				f.tools.die() // the calls in flight end with the process
				hs.Close()
				f.tools.revive()
				if f.sdkServer != nil {
					// The process is gone, and its sessions with it.
					for ss := range f.sdkServer.Sessions() {
						ss.Close()
					}
				}
			})
		}
		f.serve()
		f.live = func() (sdk.Transport, error) {
			var rt http.RoundTripper = f.httpTr
			if !f.cfg.noStatus {
				rt = toolmcp.HTTPTransport(f.httpTr)
			}
			return &sdk.StreamableClientTransport{
				Endpoint:             url,
				HTTPClient:           &http.Client{Transport: rt},
				DisableStandaloneSSE: true,
				MaxRetries:           -1,
			}, nil
		}
	}
}

// abrupt is a transport whose connection kill breaks without a goodbye.
type abrupt struct {
	sdk.Transport
	mu   sync.Mutex
	conn sdk.Connection
}

func (a *abrupt) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := a.Transport.Connect(ctx)
	a.mu.Lock()
	a.conn = c
	a.mu.Unlock()
	return c, err
}

func (a *abrupt) kill() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conn != nil {
		a.conn.Close()
	}
}

// onKill adds fn to what kill does.
func (f *fixture) onKill(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	prev := f.kill
	f.kill = func() {
		if prev != nil {
			prev()
		}
		fn()
	}
}

// stop kills the running server.
func (f *fixture) stop() {
	f.mu.Lock()
	kill := f.kill
	f.kill = nil
	f.mu.Unlock()
	if kill != nil {
		kill()
	}
}

// serverWrites keeps the lines a LoggingTransport logs for what the server
// wrote.
type serverWrites struct{ w io.Writer }

func (s serverWrites) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, []byte("write:")) {
		return s.w.Write(p)
	}
	return len(p), nil
}

// front is the HTTP server in front of h: it answers limited tools/call
// requests with 429 and keeps what the server sent.
func (f *fixture) front(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && f.limited.Load() > 0 {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) && f.limited.Add(-1) >= 0 {
				w.Header().Set("Retry-After", f.retryAfter)
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
		}
		h.ServeHTTP(&tee{ResponseWriter: w, wire: f.wire}, r)
	})
}

// tee copies a response's body to wire.
type tee struct {
	http.ResponseWriter
	wire io.Writer
}

func (t *tee) Write(p []byte) (int, error) {
	_, _ = t.wire.Write(p)
	return t.ResponseWriter.Write(p)
}

func (t *tee) Flush() {
	if fl, ok := t.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

func (t *tee) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// connect connects the client and builds the Remote and its toolbox.
func (f *fixture) connect() {
	ctx := context.Background()
	f.client = sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1.0.0"}, &sdk.ClientOptions{Logger: f.cli.logger})
	tr, err := f.live()
	if err != nil {
		f.t.Fatal(err)
	}
	f.cs, err = f.client.Connect(ctx, tr, nil)
	if err != nil {
		f.t.Fatalf("connect: %v", err)
	}
	var opts []toolmcp.RemoteOption
	if f.cfg.reconnect {
		opts = append(opts, toolmcp.WithReconnect(func(ctx context.Context) (*sdk.ClientSession, error) {
			tr, err := f.live()
			if err != nil {
				return nil, err
			}
			return f.client.Connect(ctx, tr, nil)
		}))
	}
	f.remote, err = toolmcp.NewRemote(ctx, f.cs, opts...)
	if err != nil {
		f.t.Fatalf("NewRemote: %v", err)
	}
	f.breaker = breaker.NewBreaker("test-server", breaker.WithConsecutiveFailures(3), breaker.WithOpenFor(f.cfg.openFor))
	stack := f.cli.stack(f.t,
		middleware.WithTimeout(f.cfg.timeout),
		middleware.WithRetry(retry.WithBackoff(time.Millisecond, 10*time.Millisecond)),
		middleware.WithBreaker(breaker.WithShared(f.breaker)),
	)
	stack, err = stack.InsertBefore(middleware.Tracing, middleware.Layer{Name: "attempts", Middleware: f.countAttempts})
	if err != nil {
		f.t.Fatal(err)
	}
	f.box, err = f.remote.Toolbox(stack.Middleware())
	if err != nil {
		f.t.Fatal(err)
	}
}

// countAttempts records how many attempts each call made.
func (f *fixture) countAttempts(next toolmw.Tool) toolmw.Tool {
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		res, err := next(ctx, args)
		c, _ := toolmw.CallFrom(ctx)
		f.attempts.Store(int32(c.Attempt))
		return res, err
	}
}

func (f *fixture) close() {
	if f.cs != nil {
		f.cs.Close()
	}
	if f.remote != nil {
		f.remote.Close()
	}
	f.stop()
	f.httpTr.CloseIdleConnections()
	_ = f.srv.tp.Shutdown(context.Background())
	_ = f.cli.tp.Shutdown(context.Background())
}

// call calls a tool through the client's toolbox, with a deadline.
func (f *fixture) call(name, args string) (toolmw.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return f.box.Call(toolmw.WithCallID(ctx, "call_"+name), name, json.RawMessage(args))
}

// raw calls a tool with the bare client session, bypassing the Remote.
func (f *fixture) raw(name string, args any) (*sdk.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return f.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
}

// wants checks err's record.
func wantInfo(t *testing.T, err error, kind taxonomy.Kind, code string) taxonomy.Info {
	t.Helper()
	info := taxonomy.InfoOf(err)
	if info.Kind != kind || info.Code != code {
		t.Fatalf("got %s/%s (%v), want %s/%s", info.Kind, info.Code, err, kind, code)
	}
	return info
}

// textOf is a raw result's text.
func textOf(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range res.Content {
		tc, ok := c.(*sdk.TextContent)
		if !ok {
			t.Fatalf("content %T, want text", c)
		}
		parts = append(parts, tc.Text)
	}
	return strings.Join(parts, "\n")
}

// waitFor waits for a value on ch.
func waitFor(t *testing.T, ch <-chan string, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
