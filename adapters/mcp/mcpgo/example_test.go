package mcpgo_test

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/adapters/mcp/mcpgo"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/taxonomy"
)

// An mcp-go server whose tool calls run through toolmw's default stack: a
// refusal reaches the client as an isError result carrying ForModel's
// envelope and the typed record, and a Go error's text stays on the server.
func ExampleMiddleware() {
	mw, err := mcpgo.Middleware(middleware.Default().Middleware())
	if err != nil {
		fmt.Println(err)
		return
	}
	s := server.NewMCPServer("booking", "1.0.0", server.WithToolHandlerMiddleware(mw))
	s.AddTool(mcp.NewTool("cancel_booking", mcp.WithString("reference", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.GetString("reference", "") == "BK0001" {
				return nil, taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
			}
			return nil, fmt.Errorf("ledger at db://admin:hunter2@ledger refused")
		})

	// A client over pipes, as over stdio.
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	stdio := server.NewStdioServer(s)
	stdio.SetErrorLogger(log.New(io.Discard, "", 0))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = stdio.Listen(ctx, sr, sw) }()
	defer func() { cancel(); sr.Close(); sw.Close(); <-done }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1.0.0"}, nil).
		Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	for _, ref := range []string{"BK0001", "BK0002"} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "cancel_booking", Arguments: map[string]any{"reference": ref}})
		if err != nil {
			fmt.Println(err)
			return
		}
		record := res.Meta["toolmw/error"].(map[string]any)
		fmt.Println(res.IsError, res.Content[0].(*sdk.TextContent).Text, record["kind"], record["code"])
	}
	// Output:
	// true <untrusted-data source="tool_refusal">booking_not_cancellable: this fare is non-refundable</untrusted-data> tool-refused booking_not_cancellable
	// true <untrusted-data source="tool_error">tool-failed unmapped_failure</untrusted-data> tool-failed unmapped_failure
}
