package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
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

// pieceOf returns a run of 8 bytes of secret found in text, or "".
func pieceOf(text, secret string) string {
	for k := 0; k+8 <= len(secret); k++ {
		if strings.Contains(text, secret[k:k+8]) {
			return secret[k : k+8]
		}
	}
	return ""
}

// sinks returns everything an observed stack wrote: every log line at
// every level, every span (name, status, attributes, events) and every
// event.
func (o *observed) sinks(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(o.logs.String())
	for _, sp := range o.spans.Ended() {
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
	}
	js, _ := json.Marshal(o.eventList(t))
	b.Write(js)
	return b.String()
}

// TestIsErrorTextScrubbedThenCut: a remote tool's isError text with a
// token straddling the 4 KiB mark, behind JWTs the scrubber shortens,
// through the default stack with every sink on: no 8 bytes of the token
// reach the model, a log line at any level, a span or an event. Before,
// the text was cut at 4 KiB and then scrubbed, and the token's first 12
// bytes reached the model and the DEBUG log line.
func TestIsErrorTextScrubbedThenCut(t *testing.T) {
	ctx := context.Background()
	token := secrets[0].value
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U "
	text := strings.Repeat(jwt, 64)[:4096-12-1] + " " + token + " after"
	srv := newServer()
	srv.AddTool(&sdk.Tool{Name: "leaky", InputSchema: anyObject}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
	})
	o := newObserved()
	remote, err := toolmcp.NewRemote(ctx, connect(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	box, err := remote.Toolbox(o.stack(t).Middleware())
	if err != nil {
		t.Fatal(err)
	}
	res, err := box.Call(toolmw.WithCallID(ctx, "call_1"), "leaky", nil)
	if err == nil {
		t.Fatal("no error")
	}
	told := toolmw.ForModel(res, err)
	if p := pieceOf(told+o.sinks(t), token); p != "" {
		t.Fatalf("%q of the token survives; the model was told …%s", p, told[max(0, len(told)-120):])
	}
}

// TestUnknownToolNameNotEchoed: behind ProtocolErrors, a call of an
// unknown tool whose name carries a secret (a valid tool name: a token,
// or a token glued to a word) is answered without the name, in the message
// or in the record (data.tool); an ordinary name is still named.
func TestUnknownToolNameNotEchoed(t *testing.T) {
	ctx := context.Background()
	srv := newServer()
	srv.AddReceivingMiddleware(toolmcp.ProtocolErrors())
	cs := connect(t, srv)
	for _, name := range []string{
		secrets[0].value,
		"call_" + secrets[0].value,
		"x-" + secrets[1].value,
		"get" + secrets[1].value,
		secrets[2].value,
		"lookup_4556737586899855",
	} {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name})
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			t.Fatalf("%s: %v", name, err)
		}
		var info taxonomy.Info
		if err := json.Unmarshal(we.Data, &info); err != nil || info.Code != taxonomy.CodeToolNotFound {
			t.Fatalf("%s: data %s", name, we.Data)
		}
		secret := strings.TrimLeft(name, "calx_-get")
		if p := pieceOf(we.Message+string(we.Data), secret); p != "" || info.Tool != "" {
			t.Errorf("%q: the name is echoed (%q): message %q, data %s", name, p, we.Message, we.Data)
		}
	}
	_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_flights"})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, "no tool named search_flights") || !strings.Contains(string(we.Data), `"tool":"search_flights"`) {
		t.Fatalf("an ordinary name: %v", err)
	}
}
