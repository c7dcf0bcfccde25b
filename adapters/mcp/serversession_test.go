//lint:file-ignore SA1019 the tests drive the logging and sampling of MCP 2025-11-25, which the SDK deprecates from protocol 2026-07-28 on

package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
	"github.com/toolmw/toolmw/taxonomy"
)

// askVersion is a protocol version in which a server may still send
// requests of its own during a call.
const askVersion = "2025-11-25"

// sent records the notifications a server sends, as it sends them: the
// server's sending middleware runs inside NotifyProgress and Log, so the
// record is complete when the call returns.
type sent struct {
	mu     sync.Mutex
	params map[string][]any
}

func (s *sent) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		s.mu.Lock()
		if s.params == nil {
			s.params = map[string][]any{}
		}
		s.params[method] = append(s.params[method], req.GetParams())
		s.mu.Unlock()
		return next(ctx, method, req)
	}
}

func (s *sent) of(method string) []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.params[method]
}

// sessionServer publishes tool as "tool" and records what the server sends.
func sessionServer(t *testing.T, tool toolmw.Tool) (*sdk.Server, *sent) {
	t.Helper()
	srv := newServer()
	rec := &sent{}
	srv.AddSendingMiddleware(rec.middleware)
	if err := toolmcp.AddTool(srv, toolmw.Spec{Name: "tool"}, tool); err != nil {
		t.Fatal(err)
	}
	return srv, rec
}

// connectAs connects a client with opts, on protocol version (the SDK's
// latest when "").
func connectAs(t *testing.T, srv *sdk.Server, opts *sdk.ClientOptions, version string) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1.0.0"}, opts).
		Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// textOfCall calls "tool" with params and returns its text, unwrapped.
func textOfCall(t *testing.T, cs *sdk.ClientSession, params *sdk.CallToolParams) string {
	t.Helper()
	params.Name = "tool"
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("isError: %s", res.Content[0].(*sdk.TextContent).Text)
	}
	return unwrapped(t, res.Content[0].(*sdk.TextContent).Text)
}

// TestSessionProgress: a tool's progress reaches the client with the
// request's progress token, and nothing is sent for a request without one.
func TestSessionProgress(t *testing.T) {
	var errs []error
	srv, rec := sessionServer(t, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		for _, p := range []float64{0, 50, 100} {
			errs = append(errs, toolmw.ReportProgress(ctx, p, 100, "step"))
		}
		return toolmw.Text("done"), nil
	})
	cs := connect(t, srv)

	textOfCall(t, cs, &sdk.CallToolParams{})
	if n := len(rec.of("notifications/progress")); n != 0 || errors.Join(errs...) != nil {
		t.Fatalf("without a token: %d notifications sent, errors %v", n, errs)
	}

	params := &sdk.CallToolParams{}
	params.SetProgressToken("job-7")
	textOfCall(t, cs, params)
	got := rec.of("notifications/progress")
	if len(got) != 3 || errors.Join(errs...) != nil {
		t.Fatalf("with a token: %d notifications, errors %v", len(got), errs)
	}
	for i, want := range []float64{0, 50, 100} {
		p := got[i].(*sdk.ProgressNotificationParams)
		if p.ProgressToken != "job-7" || p.Progress != want || p.Total != 100 || p.Message != "step" {
			t.Fatalf("notification %d: %+v", i, p)
		}
	}
}

// TestSessionLog: a tool's log lines reach the client at or above the
// level it set, none before it sets one; a level MCP does not know is info.
func TestSessionLog(t *testing.T) {
	srv, rec := sessionServer(t, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		for _, level := range []string{"debug", "info", "error", "shouting"} {
			if err := toolmw.LogToClient(ctx, level, map[string]any{"level": level}); err != nil {
				return toolmw.Result{}, err
			}
		}
		return toolmw.Text("done"), nil
	})
	cs := connectAs(t, srv, nil, askVersion)
	textOfCall(t, cs, &sdk.CallToolParams{})
	if n := len(rec.of("notifications/message")); n != 0 {
		t.Fatalf("%d log lines sent before the client set a level", n)
	}
	if err := cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	textOfCall(t, cs, &sdk.CallToolParams{})
	var levels []string
	for _, p := range rec.of("notifications/message") {
		levels = append(levels, string(p.(*sdk.LoggingMessageParams).Level))
	}
	if len(levels) != 3 || levels[0] != "info" || levels[1] != "error" || levels[2] != "info" {
		t.Fatalf("levels sent %v, want [info error info]", levels)
	}
}

// elicitTool asks the user for a username and answers with the reply.
func elicitTool(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	ans, err := toolmw.Elicit(ctx, toolmw.Elicitation{
		Message: "Who are you?",
		Schema:  json.RawMessage(`{"type":"object","properties":{"username":{"type":"string","default":"anon"}},"required":["username"]}`),
	})
	if err != nil {
		return toolmw.Result{}, err
	}
	name, _ := ans.Content["username"].(string)
	return toolmw.Text(ans.Action + " " + name), nil
}

// TestSessionElicit: a tool's question reaches the client as a form
// elicitation with its schema, and the answer comes back; a client without
// the capability, or on a protocol that forbids asking during a call, is
// session_unsupported.
func TestSessionElicit(t *testing.T) {
	srv, _ := sessionServer(t, elicitTool)
	var asked *sdk.ElicitParams
	cs := connectAs(t, srv, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked = req.Params
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada"}}, nil
		},
	}, askVersion)
	if got := textOfCall(t, cs, &sdk.CallToolParams{}); got != "accept ada" {
		t.Fatalf("answer %q", got)
	}
	schema, _ := json.Marshal(asked.RequestedSchema)
	if asked.Mode != "form" || asked.Message != "Who are you?" ||
		!sameJSON(string(schema), `{"type":"object","properties":{"username":{"type":"string","default":"anon"}},"required":["username"]}`) {
		t.Fatalf("asked %+v, schema %s", asked, schema)
	}

	for name, cs := range map[string]*sdk.ClientSession{
		"no capability": connectAs(t, srv, nil, askVersion),
		"latest version": connectAs(t, srv, &sdk.ClientOptions{ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return nil, errors.New("not asked")
		}}, ""),
	} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "tool"})
		if err != nil {
			t.Fatal(err)
		}
		if info, _ := recordOf(res); !res.IsError || info.Code != taxonomy.CodeSessionUnsupported {
			t.Fatalf("%s: %+v (%+v)", name, res, info)
		}
	}
}

// TestSessionUnsupportedWrapsSentinel: the error a tool gets from a client
// that cannot be asked is toolmw.ErrSessionUnsupported (errors.Is), and a
// client that fails the request is upstream_error.
func TestSessionUnsupportedWrapsSentinel(t *testing.T) {
	var errs = map[string]error{}
	var mu sync.Mutex
	srv, _ := sessionServer(t, func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		var in struct{ Name string }
		json.Unmarshal(args, &in)
		_, err := toolmw.Sample(ctx, toolmw.SampleRequest{Messages: []toolmw.SampleMessage{{Role: "user", Text: "hi"}}})
		mu.Lock()
		errs[in.Name] = err
		mu.Unlock()
		return toolmw.Text("done"), nil
	})
	for name, opts := range map[string]*sdk.ClientOptions{
		"unsupported": nil,
		"failing": {CreateMessageHandler: func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return nil, errors.New("the model is down")
		}},
	} {
		cs := connectAs(t, srv, opts, askVersion)
		textOfCall(t, cs, &sdk.CallToolParams{Arguments: map[string]any{"Name": name}})
	}
	if err := errs["unsupported"]; !errors.Is(err, toolmw.ErrSessionUnsupported) {
		t.Fatalf("unsupported: %v", err)
	}
	if info := taxonomy.InfoOf(errs["failing"]); info.Code != taxonomy.CodeUpstreamError || info.Retryable {
		t.Fatalf("failing: %+v", info)
	}
}

// TestSessionSample: a tool's sampling request reaches the client with its
// messages, system prompt and a maxTokens (1024 when it sets none), and the
// completion comes back.
func TestSessionSample(t *testing.T) {
	srv, _ := sessionServer(t, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		out, err := toolmw.Sample(ctx, toolmw.SampleRequest{
			SystemPrompt: "be brief",
			Messages:     []toolmw.SampleMessage{{Role: "user", Text: "capital of France?"}},
		})
		if err != nil {
			return toolmw.Result{}, err
		}
		return toolmw.Text(out.Role + "|" + out.Text + "|" + out.Model + "|" + out.StopReason), nil
	})
	var asked *sdk.CreateMessageParams
	cs := connectAs(t, srv, &sdk.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			asked = req.Params
			return &sdk.CreateMessageResult{Role: "assistant", Content: &sdk.TextContent{Text: "Paris"}, Model: "m1", StopReason: "endTurn"}, nil
		},
	}, askVersion)
	if got := textOfCall(t, cs, &sdk.CallToolParams{}); got != "assistant|Paris|m1|endTurn" {
		t.Fatalf("completion %q", got)
	}
	if asked.MaxTokens != 1024 || asked.SystemPrompt != "be brief" || len(asked.Messages) != 1 ||
		asked.Messages[0].Role != "user" || asked.Messages[0].Content.(*sdk.TextContent).Text != "capital of France?" {
		t.Fatalf("asked %+v", asked)
	}
}

// TestSessionOverHTTP: progress, a log line and a question travel over
// streamable HTTP on 127.0.0.1 within one call.
func TestSessionOverHTTP(t *testing.T) {
	srv, _ := sessionServer(t, func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		if err := toolmw.ReportProgress(ctx, 1, 2, "half"); err != nil {
			return toolmw.Result{}, err
		}
		if err := toolmw.LogToClient(ctx, "warning", "careful"); err != nil {
			return toolmw.Result{}, err
		}
		return elicitTool(ctx, args)
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	progress, logs := make(chan string, 8), make(chan string, 8)
	client := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1.0.0"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"username": "grace"}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress <- req.Params.Message
		},
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			logs <- string(req.Params.Level)
		},
	})
	ctx := context.Background()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: hs.URL}, &sdk.ClientSessionOptions{ProtocolVersion: askVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	params := &sdk.CallToolParams{}
	params.SetProgressToken(7)
	if got := textOfCall(t, cs, params); got != "accept grace" {
		t.Fatalf("answer %q", got)
	}
	// The client may hand notifications to its handlers after the answer:
	// wait for them (the timeout only bounds a failure).
	for what, c := range map[string]chan string{"half": progress, "warning": logs} {
		select {
		case got := <-c:
			if got != what {
				t.Fatalf("got %q, want %q", got, what)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %q notification", what)
		}
	}
}
