package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
	"github.com/toolmw/toolmw/schema"
)

// TestNoSchemaIsAnyObject: a tool registered without an input schema
// takes any object (toolmw.AnyObjectSchema): the MCP server publishes it
// so, as Toolbox.Definitions shows it, and a toolmw client of that server
// calls it with arguments, which reach the tool.
func TestNoSchemaIsAnyObject(t *testing.T) {
	ctx := context.Background()
	box := toolmw.NewToolbox()
	var got json.RawMessage
	if err := box.Register(toolmw.Spec{Name: "bare"}, func(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
		got = args
		return toolmw.Text("ok"), nil
	}); err != nil {
		t.Fatal(err)
	}
	defs, err := box.Definitions(schema.MCP)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer()
	if err := toolmcp.AddToolbox(srv, box); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv)
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		published, _ := json.Marshal(tool.InputSchema)
		if string(published) != toolmw.AnyObjectSchema || string(defs[0].InputSchema) != toolmw.AnyObjectSchema {
			t.Fatalf("published %s, Definitions %s; want both %s", published, defs[0].InputSchema, toolmw.AnyObjectSchema)
		}
	}
	remote, err := toolmcp.NewRemote(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	client, err := remote.Toolbox()
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Call(ctx, "bare", json.RawMessage(`{"q":"rome","n":2}`))
	if err != nil || res.Content != "ok" || string(got) != `{"q":"rome","n":2}` {
		t.Fatalf("a call with arguments: %+v, %v; the tool got %s", res, err, got)
	}
}
