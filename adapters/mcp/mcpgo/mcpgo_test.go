package mcpgo_test

import (
	"context"
	"errors"
	"io"
	"log"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/adapters/mcp/mcpgo"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/redact"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// connect serves s over pipes, as over stdio, to a go-sdk client.
func connect(t *testing.T, s *server.MCPServer) *sdk.ClientSession {
	t.Helper()
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	stdio := server.NewStdioServer(s)
	stdio.SetErrorLogger(log.New(io.Discard, "", 0))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = stdio.Listen(ctx, sr, sw)
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1.0.0"}, nil).
		Connect(context.Background(), &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		sr.Close()
		sw.Close()
		<-done
	})
	return cs
}

func call(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestMiddlewareRejects(t *testing.T) {
	_, err := mcpgo.Middleware(middleware.Default(middleware.WithTimeout(-time.Second)).Middleware())
	if te, ok := taxonomy.From(err); !ok || te.Code() != taxonomy.CodeOptionInvalid {
		t.Fatalf("got %v", err)
	}
}

// Without a stack the rules still hold: a panic is typed and its value
// withheld, an error is an isError envelope, a result passes through with
// its rich content.
func TestNoStack(t *testing.T) {
	mw, err := mcpgo.Middleware(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewMCPServer("test", "1.0.0", server.WithToolHandlerMiddleware(mw))
	s.AddTool(mcp.NewTool("boom"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		panic("password=hunter2-canary")
	})
	s.AddTool(mcp.NewTool("fail"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("token hunter2-canary rejected")
	})
	s.AddTool(mcp.NewTool("chart"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("the chart"), mcp.NewImageContent("AQID", "image/png")}}, nil
	})
	cs := connect(t, s)

	res := call(t, cs, "boom", map[string]any{})
	if !res.IsError || text(res) != `<untrusted-data source="tool_error">tool-failed tool_panicked: the tool panicked</untrusted-data>` {
		t.Fatalf("boom: %+v %q", res, text(res))
	}
	res = call(t, cs, "fail", map[string]any{})
	if !res.IsError || strings.Contains(text(res), "hunter2") || !strings.Contains(text(res), "unmapped_failure") {
		t.Fatalf("fail: %q", text(res))
	}
	if m, ok := res.Meta["toolmw/error"].(map[string]any); !ok || m["kind"] != "tool-failed" {
		t.Fatalf("fail's _meta %v", res.Meta)
	}
	res = call(t, cs, "chart", map[string]any{})
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("chart: %+v", res)
	}
	if img, ok := res.Content[1].(*sdk.ImageContent); !ok || img.MIMEType != "image/png" {
		t.Fatalf("chart's image: %#v", res.Content[1])
	}
}

// A layer that changes the result (redact scrubbing results) is what the
// client gets; the schema check can be switched off per tool.
func TestStackShapesResult(t *testing.T) {
	stack := middleware.Default()
	stack, err := stack.Replace(middleware.Redact, redact.New(redact.WithResults()))
	if err != nil {
		t.Fatal(err)
	}
	mw, err := mcpgo.Middleware(stack.Middleware(), mcpgo.WithSpec(func(tool mcp.Tool, spec *toolmw.Spec) {
		if tool.Name == "loose" {
			spec.InputSchema = nil
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewMCPServer("test", "1.0.0", server.WithToolHandlerMiddleware(mw))
	handler := func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("mail jane.canary@example.com, args " + string(req.Params.RawArguments)), nil
	}
	s.AddTool(mcp.NewTool("strict", mcp.WithNumber("n", mcp.Required())), handler)
	s.AddTool(mcp.NewTool("loose", mcp.WithNumber("n", mcp.Required())), handler)
	cs := connect(t, s)

	res := call(t, cs, "strict", map[string]any{"n": 1})
	if res.IsError || strings.Contains(text(res), "jane.canary") || !strings.Contains(text(res), "[REDACTED:email]") {
		t.Fatalf("strict: %q", text(res))
	}
	res = call(t, cs, "strict", map[string]any{"n": "one"})
	if !res.IsError || !strings.Contains(text(res), "tool-args-invalid") {
		t.Fatalf("strict, bad args: %q", text(res))
	}
	res = call(t, cs, "loose", map[string]any{"n": "one"})
	if res.IsError {
		t.Fatalf("loose: %q", text(res))
	}
}

// A tool's spec comes from its mcp-go definition: a model-safe name, the
// description, idempotency from the hints; the request's call id and the
// per-tool state last across calls.
func TestSpecFromDefinition(t *testing.T) {
	seen := make(chan toolmw.Call, 4)
	mw, err := mcpgo.Middleware(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewMCPServer("test", "1.0.0", server.WithToolHandlerMiddleware(mw))
	s.AddTool(mcp.NewTool("flights.search", mcp.WithDescription("Find flights."), mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c, _ := toolmw.CallFrom(ctx)
			seen <- c
			return mcp.NewToolResultText("found"), nil
		})
	cs := connect(t, s)
	ctx := context.Background()
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "flights.search", Meta: sdk.Meta{"toolmw/call_id": "call_9"}}); err != nil {
		t.Fatal(err)
	}
	c := <-seen
	if c.Tool != "flights_search" || c.ID != "call_9" || !c.Idempotent || c.Spec.Description != "Find flights." {
		t.Fatalf("the handler saw %+v", c)
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "flights.search", Meta: sdk.Meta{"progressToken": "tok-2"}}); err != nil {
		t.Fatal(err)
	}
	if c2 := <-seen; c2.Spec != c.Spec || c2.ID != "tok-2" {
		t.Fatalf("second call: %+v (spec %p, first %p)", c2, c2.Spec, c.Spec)
	}
}
