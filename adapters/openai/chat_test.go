package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolmw/toolmw"
	toolopenai "github.com/toolmw/toolmw/adapters/openai"
	"github.com/toolmw/toolmw/adapters/openai/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
)

type searchIn struct {
	Query string `json:"query" jsonschema:"What to look for"`
	Limit *int   `json:"limit,omitempty" jsonschema:"How many hits, at most"`
}

type bookIn struct {
	Fare string `json:"fare"`
}

// longID is a call id SafeCallID replaces (over 128 bytes): the layers see
// the replacement, the model must get its own id back.
var longID = "call_" + strings.Repeat("Zx9", 50)

// wireBox is a box with the default stack and tools that succeed, refuse,
// and fail with secrets in their errors.
func wireBox(t *testing.T, seen *sync.Map) *toolmw.Toolbox {
	t.Helper()
	box := toolmw.NewToolbox(middleware.Default().Middleware())
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(box.Register(toolmw.Spec{Name: "search", Description: "Search the catalogue", Idempotent: true},
		toolmw.Typed(func(ctx context.Context, in searchIn) (string, error) {
			c, _ := toolmw.CallFrom(ctx)
			seen.Store(c.ID, true)
			return "3 hits for " + in.Query, nil
		})))
	must(box.Register(toolmw.Spec{Name: "book", Description: "Book a fare"},
		toolmw.Typed(func(ctx context.Context, in bookIn) (string, error) {
			c, _ := toolmw.CallFrom(ctx)
			seen.Store(c.ID, true)
			return "", taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
		})))
	must(box.Register(toolmw.Spec{Name: "leak_untyped", Description: "Fails with a secret in an untyped error"},
		toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) {
			return "", fmt.Errorf("upstream refused token %s for %s", secrets[0], secrets[4])
		})))
	must(box.Register(toolmw.Spec{Name: "leak_typed", Description: "Fails with secrets in a typed error's message"},
		toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) {
			return "", taxonomy.Failure("upstream_rejected", "the upstream rejected key "+secrets[1]+" and "+secrets[3]).
				WithCause(errors.New(secrets[2]))
		})))
	must(box.Register(toolmw.Spec{Name: "leak_panic", Description: "Panics with a secret"},
		toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) {
			panic("credentials " + secrets[2])
		})))
	return box
}

var wireCalls = []replay.ToolCall{
	{ID: "call_S1a2B3c4D5e6F7g8H9i0J1k2", Name: "search", Arguments: `{"query":"lisbon flights","limit":null}`},
	{ID: longID, Name: "book", Arguments: `{"fare":"BASIC"}`},
	{ID: "call_L3a4K5u6N7t8Y9p0E1d2X3z4", Name: "leak_untyped", Arguments: `{}`},
	{ID: "call_L4t5Y6p7E8d9X0z1A2b3C4d5", Name: "leak_typed", Arguments: ``},
	{ID: "call_P5a6N7i8C9k0Q1w2E3r4T5y6", Name: "leak_panic", Arguments: `{}`},
	// The model passes a secret in a field the tool does not have.
	{ID: "call_U6n7K8n9O0w1N2f3I4e5L6d7", Name: "search", Arguments: `{"query":"x","api_key":"` + secrets[0] + `"}`},
	{ID: "call_G7h8O9s0T1t2O3o4L5x6Y7z8", Name: "ghost_tool", Arguments: `{}`},
}

// wantTexts are the sources and contents of ForModel's answers to
// wireCalls, in order.
var wantTexts = []struct{ source, prefix string }{
	{toolmw.SourceResult, "3 hits for lisbon flights"},
	{toolmw.SourceRefusal, "booking_not_cancellable: this fare is non-refundable"},
	{toolmw.SourceError, "tool-failed unmapped_failure"},
	{toolmw.SourceError, "tool-failed upstream_rejected: the upstream rejected key [REDACTED:"},
	{toolmw.SourceError, "tool-failed tool_panicked"},
	{toolmw.SourceError, "tool-args-invalid args_invalid"},
	{toolmw.SourceError, "tool-not-found tool_not_found: no tool named ghost_tool"},
}

// TestChatWire runs the loop with the real SDK client against the replay of
// Chat Completions and checks what the SDK sent: the tool definitions
// (names, descriptions, strict schemas, "strict": true), then one tool
// message per call with the model's original call id and ForModel's
// envelope, in the model's order, and no planted secret anywhere.
func TestChatWire(t *testing.T) {
	var seen sync.Map
	box := wireBox(t, &seen)
	rp := replay.New("/v1/chat/completions", replay.ChatToolCalls(wireCalls...), replay.ChatAnswer("Done."))
	client := serve(t, rp)
	tools, err := toolopenai.New(box)
	if err != nil {
		t.Fatal(err)
	}
	turns, answer, err := chatLoop(budget.WithRun(context.Background()), client, tools, "Find and book a fare to Lisbon.")
	if err != nil || answer != "Done." || len(turns) != 2 {
		t.Fatalf("loop = %d turns, %q, %v; want 2 turns, Done., nil", len(turns), answer, err)
	}
	reqs := rp.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	noSecrets(t, reqs)

	// The definitions, as sent.
	defs, err := box.Definitions(schema.OpenAIStrict)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range reqs {
		req := toolmwtest.DecodeJSON(t, body)
		sent := req["tools"].([]any)
		if len(sent) != len(defs) {
			t.Fatalf("%d tools sent, want %d", len(sent), len(defs))
		}
		for i, d := range defs {
			tool := sent[i].(map[string]any)
			fn := tool["function"].(map[string]any)
			if tool["type"] != "function" || fn["name"] != d.Name || fn["description"] != d.Description || fn["strict"] != true {
				t.Errorf("tool %d sent as %v, want function %s (%q) with strict true", i, tool, d.Name, d.Description)
			}
			if !toolmwtest.SameJSON(t, fn["parameters"], d.InputSchema) {
				t.Errorf("tool %s: parameters %v, want the OpenAIStrict rendering %s", d.Name, fn["parameters"], d.InputSchema)
			}
		}
	}
	// The search tool in strict form: both fields required, the optional
	// one nullable, and the properties in the Go field order.
	if !strings.Contains(string(reqs[0]), `"properties":{"query":{"type":"string","description":"What to look for"},"limit":{"type":["integer","null"]`) ||
		!strings.Contains(string(reqs[0]), `"required":["query","limit"]`) {
		t.Errorf("search's strict schema is not on the wire as rendered:\n%s", reqs[0])
	}

	// The answers: after the user message and the assistant's calls, one
	// tool message per call, in the model's order.
	msgs := toolmwtest.DecodeJSON(t, reqs[1])["messages"].([]any)
	if len(msgs) != 2+len(wireCalls) {
		t.Fatalf("%d messages in the second request, want %d", len(msgs), 2+len(wireCalls))
	}
	asst := msgs[1].(map[string]any)
	if asst["role"] != "assistant" || len(asst["tool_calls"].([]any)) != len(wireCalls) {
		t.Fatalf("message 2 = %v, want the assistant's %d calls", asst, len(wireCalls))
	}
	for i, c := range wireCalls {
		m := msgs[2+i].(map[string]any)
		if m["role"] != "tool" || m["tool_call_id"] != c.ID {
			t.Errorf("message %d: role %v, tool_call_id %.40v; want tool, %.40s", 3+i, m["role"], m["tool_call_id"], c.ID)
		}
		source, content := toolmwtest.Envelope(t, m["content"].(string))
		if source != wantTexts[i].source || !strings.HasPrefix(content, wantTexts[i].prefix) {
			t.Errorf("call %s: model told %s %q, want %s %q…", c.Name, source, content, wantTexts[i].source, wantTexts[i].prefix)
		}
		if m["content"] != turns[0].Calls[i].Text {
			t.Errorf("call %s: the wire carries %q, the Turn %q", c.Name, m["content"], turns[0].Calls[i].Text)
		}
	}
	// The layers saw the replacement of the oversize id, never the id.
	if _, ok := seen.Load(longID); ok {
		t.Error("a tool saw the oversize call id as given")
	}
	if _, ok := seen.Load(toolmw.SafeCallID(longID)); !ok {
		t.Error("the book tool did not see SafeCallID of its call id")
	}
	if _, ok := seen.Load(wireCalls[0].ID); !ok {
		t.Error("the search tool did not see the model's call id")
	}
	// The loop keeps the typed errors.
	for i, want := range []taxonomy.Kind{"", taxonomy.KindRefused, taxonomy.KindFailed, taxonomy.KindFailed, taxonomy.KindFailed, taxonomy.KindArgsInvalid, taxonomy.KindNotFound} {
		if got := taxonomy.InfoOf(turns[0].Calls[i].Err).Kind; got != want {
			t.Errorf("call %d: kind %q, want %q", i, got, want)
		}
	}
}

// TestResponsesWire is TestChatWire on the Responses API: function tools
// with "strict": true and the strict schemas, then function_call_output
// items with the original call ids and ForModel's envelopes, in order.
func TestResponsesWire(t *testing.T) {
	var seen sync.Map
	box := wireBox(t, &seen)
	rp := replay.New("/v1/responses", replay.ResponseToolCalls(wireCalls...), replay.ResponseAnswer("Done."))
	client := serve(t, rp)
	tools, err := toolopenai.New(box)
	if err != nil {
		t.Fatal(err)
	}
	turns, answer, err := responsesLoop(budget.WithRun(context.Background()), client, tools, "Find and book a fare to Lisbon.")
	if err != nil || answer != "Done." || len(turns) != 2 {
		t.Fatalf("loop = %d turns, %q, %v; want 2 turns, Done., nil", len(turns), answer, err)
	}
	reqs := rp.Requests()
	noSecrets(t, reqs)
	defs, _ := box.Definitions(schema.OpenAIStrict)
	sent := toolmwtest.DecodeJSON(t, reqs[0])["tools"].([]any)
	if len(sent) != len(defs) {
		t.Fatalf("%d tools sent, want %d", len(sent), len(defs))
	}
	for i, d := range defs {
		tool := sent[i].(map[string]any)
		if tool["type"] != "function" || tool["name"] != d.Name || tool["description"] != d.Description || tool["strict"] != true {
			t.Errorf("tool %d sent as %v, want function %s with strict true", i, tool, d.Name)
		}
		if !toolmwtest.SameJSON(t, tool["parameters"], d.InputSchema) {
			t.Errorf("tool %s: parameters %v, want %s", d.Name, tool["parameters"], d.InputSchema)
		}
	}
	second := toolmwtest.DecodeJSON(t, reqs[1])
	if second["previous_response_id"] != "resp_68f0a1b2c3d4e5f60718293a4b5c6d7e" {
		t.Errorf("previous_response_id = %v", second["previous_response_id"])
	}
	items := second["input"].([]any)
	if len(items) != len(wireCalls) {
		t.Fatalf("%d input items, want %d", len(items), len(wireCalls))
	}
	for i, c := range wireCalls {
		it := items[i].(map[string]any)
		if it["type"] != "function_call_output" || it["call_id"] != c.ID {
			t.Errorf("item %d: %v %.40v; want function_call_output for %.40s", i, it["type"], it["call_id"], c.ID)
		}
		source, content := toolmwtest.Envelope(t, it["output"].(string))
		if source != wantTexts[i].source || !strings.HasPrefix(content, wantTexts[i].prefix) {
			t.Errorf("call %s: model told %s %q, want %s %q…", c.Name, source, content, wantTexts[i].source, wantTexts[i].prefix)
		}
	}
}

// TestNonStrict: WithStrict(false) sends "strict": false explicitly and the
// Plain rendering without "$schema"; a box strict mode cannot describe is
// an error naming the tool unless it is sent non-strict.
func TestNonStrict(t *testing.T) {
	box := toolmw.NewToolbox()
	if err := box.Register(toolmw.Spec{Name: "tag", Description: "Tag a file"},
		toolmw.Typed(func(ctx context.Context, in struct {
			Labels map[string]string `json:"labels"`
		}) (string, error) {
			return fmt.Sprint(len(in.Labels)), nil
		})); err != nil {
		t.Fatal(err)
	}
	_, err := toolopenai.New(box)
	if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindDefinitionInvalid || info.Code != taxonomy.CodeSchemaNotStrict || info.Tool != "tag" {
		t.Fatalf("New(box with a map) = %v (%+v), want a schema_not_strict definition error naming tag", err, info)
	}
	tools, err := toolopenai.New(box, toolopenai.WithStrict(false))
	if err != nil {
		t.Fatal(err)
	}
	rpc := replay.New("/v1/chat/completions", replay.ChatAnswer("ok"))
	if _, _, err := chatLoop(context.Background(), serve(t, rpc), tools, "tag it"); err != nil {
		t.Fatal(err)
	}
	rpr := replay.New("/v1/responses", replay.ResponseAnswer("ok"))
	if _, _, err := responsesLoop(context.Background(), serve(t, rpr), tools, "tag it"); err != nil {
		t.Fatal(err)
	}
	plain, _ := box.Definitions(schema.Plain)
	var want map[string]json.RawMessage
	if err := json.Unmarshal(plain[0].InputSchema, &want); err != nil {
		t.Fatal(err)
	}
	if _, ok := want["$schema"]; !ok {
		t.Fatal("the Plain rendering has no $schema: the test needs one to see it dropped")
	}
	delete(want, "$schema")
	chat := toolmwtest.DecodeJSON(t, rpc.Requests()[0])["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)
	resp := toolmwtest.DecodeJSON(t, rpr.Requests()[0])["tools"].([]any)[0].(map[string]any)
	for api, fn := range map[string]map[string]any{"chat": chat, "responses": resp} {
		if s, ok := fn["strict"]; !ok || s != false {
			t.Errorf("%s: strict = %v (present %v), want false sent explicitly", api, s, ok)
		}
		if !toolmwtest.SameJSON(t, fn["parameters"], want) {
			t.Errorf("%s: parameters %v, want the Plain rendering without $schema", api, fn["parameters"])
		}
	}
}
