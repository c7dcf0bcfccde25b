package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

// CancelIn is the input of the example's cancel_booking tool.
type CancelIn struct {
	Reference string `json:"reference" jsonschema:"the booking reference"`
}

// A toolmw tool published on an MCP server, and the server's tools used by
// an agent as toolmw tools behind the default stack: the remote refusal
// reaches the model as the same envelope, typed on both sides.
func Example() {
	ctx := context.Background()

	// The server: a Typed tool behind the default stack.
	srv := sdk.NewServer(&sdk.Implementation{Name: "booking", Version: "1.0.0"}, nil)
	srv.AddReceivingMiddleware(toolmcp.ProtocolErrors())
	cancel := toolmw.Typed(func(_ context.Context, in CancelIn) (string, error) {
		if in.Reference == "BK0001" {
			return "", taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
		}
		return "cancelled " + in.Reference, nil
	})
	spec := toolmw.Spec{Name: "cancel_booking", Description: "Cancel a booking."}
	if err := toolmcp.AddTool(srv, spec, cancel, middleware.Default().Middleware()); err != nil {
		fmt.Println(err)
		return
	}

	// The agent: connected in memory here; over stdio or HTTP alike.
	clientTransport, serverTransport := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverTransport, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1.0.0"}, nil).Connect(ctx, clientTransport, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	remote, err := toolmcp.NewRemote(ctx, cs, toolmcp.WithPrefix("booking_"))
	if err != nil {
		fmt.Println(err)
		return
	}
	// One breaker for every tool of this server.
	perServer := breaker.NewBreaker("booking")
	box, err := remote.Toolbox(middleware.Default(middleware.WithBreaker(breaker.WithShared(perServer))).Middleware())
	if err != nil {
		fmt.Println(err)
		return
	}
	defs, _ := box.Definitions(schema.OpenAIStrict)
	fmt.Printf("%s: %s\n", defs[0].Name, defs[0].InputSchema)

	for _, ref := range []string{"BK0002", "BK0001"} {
		res, err := box.Call(toolmw.WithCallID(ctx, "call_"+ref), "booking_cancel_booking", json.RawMessage(`{"reference":"`+ref+`"}`))
		info := taxonomy.InfoOf(err)
		fmt.Println(toolmw.ForModel(res, err), info.Kind, info.Retryable)
	}
	// Output:
	// booking_cancel_booking: {"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"reference":{"description":"the booking reference","type":"string"}},"required":["reference"],"type":"object"}
	// <untrusted-data source="tool_result">cancelled BK0002</untrusted-data>  false
	// <untrusted-data source="tool_refusal">booking_not_cancellable: this fare is non-refundable</untrusted-data> tool-refused false
}
