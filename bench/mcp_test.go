package bench

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
	"github.com/toolmw/toolmw/middleware"
)

// The MCP round trip: one tools/call over the go-sdk's in-memory transport
// (net.Pipe, JSON-RPC encoding both ways, the SDK's dispatch), answered by
// a tool that returns a short text at once. What varies is the glue:
//
//   - sdk-handler: a handler written against the SDK by hand
//     (Server.AddTool), called with ClientSession.CallTool: the baseline.
//   - adapter-server: the tool published with adapters/mcp (AddTool, no
//     middleware): Wrap's argument check against the input schema, the
//     Call in the context, the result rendering.
//   - adapter-both: also called through a Remote (the client's argument
//     check, the call id in _meta, the result's conversion).
//   - adapter-both-default-stack: both sides behind middleware.Default(),
//     the whole production path.
//
// The adapter's added cost is each row minus sdk-handler.

const mcpResult = "booked BK0001 on TP1236"

var (
	mcpArgs   = json.RawMessage(`{"flight":"TP1236","passenger":"Ada Lovelace"}`)
	mcpSchema = json.RawMessage(`{"type":"object","properties":{"flight":{"type":"string"},"passenger":{"type":"string"}},"required":["flight","passenger"]}`)
)

func BenchmarkMCPRoundTrip(b *testing.B) {
	tool := func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text(mcpResult), nil }
	spec := toolmw.Spec{Name: "book_flight", InputSchema: mcpSchema}

	b.Run("sdk-handler", func(b *testing.B) {
		srv := sdk.NewServer(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
		srv.AddTool(&sdk.Tool{Name: "book_flight", InputSchema: mcpSchema}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: mcpResult}}}, nil
		})
		cs := mcpConnect(b, srv)
		benchSession(b, cs)
	})
	b.Run("adapter-server", func(b *testing.B) {
		srv := sdk.NewServer(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
		if err := toolmcp.AddTool(srv, spec, tool); err != nil {
			b.Fatal(err)
		}
		benchSession(b, mcpConnect(b, srv))
	})
	b.Run("adapter-both", func(b *testing.B) {
		srv := sdk.NewServer(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
		if err := toolmcp.AddTool(srv, spec, tool); err != nil {
			b.Fatal(err)
		}
		benchRemote(b, mcpConnect(b, srv))
	})
	b.Run("adapter-both-default-stack", func(b *testing.B) {
		srv := sdk.NewServer(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
		if err := toolmcp.AddTool(srv, spec, tool, middleware.Default().Middleware()); err != nil {
			b.Fatal(err)
		}
		benchRemote(b, mcpConnect(b, srv), middleware.Default().Middleware())
	})
}

// mcpConnect connects a client to srv in memory until the benchmark ends.
func mcpConnect(b *testing.B, srv *sdk.Server) *sdk.ClientSession {
	b.Helper()
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func benchSession(b *testing.B, cs *sdk.ClientSession) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "book_flight", Arguments: mcpArgs})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

func benchRemote(b *testing.B, cs *sdk.ClientSession, mws ...toolmw.Middleware) {
	ctx := context.Background()
	remote, err := toolmcp.NewRemote(ctx, cs)
	if err != nil {
		b.Fatal(err)
	}
	box, err := remote.Toolbox(mws...)
	if err != nil {
		b.Fatal(err)
	}
	ctx = toolmw.WithCallID(ctx, "call_1")
	b.ReportAllocs()
	for b.Loop() {
		res, err := box.Call(ctx, "book_flight", mcpArgs)
		if err != nil || res.Content != mcpResult {
			b.Fatal(err, res)
		}
	}
}
