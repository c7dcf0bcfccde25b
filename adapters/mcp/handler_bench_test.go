package mcp

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
)

// BenchmarkHandler measures the server side of the adapter without a
// transport: the SDK handler AddToolbox registers (the call id from _meta,
// the toolbox's call with its argument check against the schema, the
// result's rendering) against a hand-written handler building the same
// result. bench/mcp_test.go measures whole round trips.
func BenchmarkHandler(b *testing.B) {
	schemaDoc := json.RawMessage(`{"type":"object","properties":{"flight":{"type":"string"},"passenger":{"type":"string"}},"required":["flight","passenger"]}`)
	req := &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{
		Meta:      sdk.Meta{MetaCallID: "call_1"},
		Name:      "book_flight",
		Arguments: json.RawMessage(`{"flight":"TP1236","passenger":"Ada Lovelace"}`),
	}}
	tool := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("booked BK0001"), nil
	}
	run := func(b *testing.B, h sdk.ToolHandler) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			res, err := h(ctx, req)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	}
	b.Run("sdk-handler", func(b *testing.B) {
		run(b, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "booked BK0001"}}}, nil
		})
	})
	for _, c := range []struct {
		name   string
		schema json.RawMessage
		mws    []toolmw.Middleware
	}{
		{"adapter-no-schema", nil, nil}, // the glue alone
		{"adapter", schemaDoc, nil},     // and the arguments checked against the schema
		{"adapter-default-stack", schemaDoc, []toolmw.Middleware{middleware.Default().Middleware()}},
	} {
		b.Run(c.name, func(b *testing.B) {
			box := toolmw.NewToolbox(c.mws...)
			if err := box.Register(toolmw.Spec{Name: "book_flight", InputSchema: c.schema}, tool); err != nil {
				b.Fatal(err)
			}
			run(b, handler(box, "book_flight", CallIDFromMeta))
		})
	}
}
