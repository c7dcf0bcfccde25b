package anthropic_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
)

type searchIn struct {
	Query string            `json:"query" jsonschema:"What to look for"`
	Seats uint8             `json:"seats" jsonschema:"Seats to hold"`
	Tags  map[string]string `json:"tags,omitempty"`
}

type bookIn struct {
	Fare string `json:"fare"`
}

// longID is a tool_use id SafeCallID replaces (over 128 bytes): the layers
// see the replacement, the model must get its own id back.
var longID = "toolu_" + strings.Repeat("Qm7", 50)

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
			return fmt.Sprintf("3 hits for %s, %d seats", in.Query, in.Seats), nil
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

var wireUses = []replay.ToolUse{
	{ID: "toolu_01S1a2B3c4D5e6F7g8H9i0J1", Name: "search", Input: `{"query":"lisbon flights","seats":2}`},
	{ID: longID, Name: "book", Input: `{"fare":"BASIC"}`},
	{ID: "toolu_01L3a4K5u6N7t8Y9p0E1d2X3", Name: "leak_untyped", Input: `{}`},
	{ID: "toolu_01L4t5Y6p7E8d9X0z1A2b3C4", Name: "leak_typed"},
	{ID: "toolu_01P5a6N7i8C9k0Q1w2E3r4T5", Name: "leak_panic", Input: `{}`},
	// The model passes a secret in a field the tool does not have.
	{ID: "toolu_01U6n7K8n9O0w1N2f3I4e5L6", Name: "search", Input: `{"query":"x","seats":1,"api_key":"` + secrets[0] + `"}`},
	{ID: "toolu_01G7h8O9s0T1t2O3o4L5x6Y7", Name: "ghost_tool", Input: `{}`},
}

// wantResults are the sources, content prefixes and is_error flags of the
// answers to wireUses, in order.
var wantResults = []struct {
	source, prefix string
	isError        bool
}{
	{toolmw.SourceResult, "3 hits for lisbon flights, 2 seats", false},
	{toolmw.SourceRefusal, "booking_not_cancellable: this fare is non-refundable", true},
	{toolmw.SourceError, "tool-failed unmapped_failure", true},
	{toolmw.SourceError, "tool-failed upstream_rejected: the upstream rejected key [REDACTED:", true},
	{toolmw.SourceError, "tool-failed tool_panicked", true},
	{toolmw.SourceError, "tool-args-invalid args_invalid", true},
	{toolmw.SourceError, "tool-not-found tool_not_found: no tool named ghost_tool", true},
}

// TestMessagesWire runs the loop with the real SDK client against the
// replay of the Messages API and checks what the SDK sent: the tool
// definitions (names, descriptions, input schemas in the Anthropic
// profile), then one user message of tool_result blocks, in the model's
// order, each with the original tool_use id, ForModel's envelope and
// is_error from the outcome, and no planted secret anywhere.
func TestMessagesWire(t *testing.T) {
	var seen sync.Map
	box := wireBox(t, &seen)
	rp := replay.New("/v1/messages", replay.ToolUses("Let me look.", wireUses...), replay.Answer("Done."))
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	turns, answer, err := loop(budget.WithRun(context.Background()), serve(t, rp), tools, "Find and book a fare to Lisbon.")
	if err != nil || answer != "Done." || len(turns) != 2 {
		t.Fatalf("loop = %d turns, %q, %v; want 2 turns, Done., nil", len(turns), answer, err)
	}
	reqs := rp.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	noSecrets(t, reqs)

	defs, err := box.Definitions(schema.Anthropic)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range reqs {
		sent := toolmwtest.DecodeJSON(t, body)["tools"].([]any)
		if len(sent) != len(defs) {
			t.Fatalf("%d tools sent, want %d", len(sent), len(defs))
		}
		for i, d := range defs {
			tool := sent[i].(map[string]any)
			if tool["name"] != d.Name || tool["description"] != d.Description {
				t.Errorf("tool %d sent as %v, want %s (%q)", i, tool, d.Name, d.Description)
			}
			if _, ok := tool["strict"]; ok {
				t.Errorf("tool %s: strict sent, want it left to the API's default", d.Name)
			}
			if !toolmwtest.SameJSON(t, tool["input_schema"], d.InputSchema) {
				t.Errorf("tool %s: input_schema %v, want the Anthropic rendering %s", d.Name, tool["input_schema"], d.InputSchema)
			}
		}
	}
	// The Anthropic profile on the wire: the bounds of seats moved into its
	// description, the map an open object, properties in the field order.
	for _, want := range []string{
		`"properties":{"query":{"type":"string","description":"What to look for"},"seats":{"type":"integer","description":"Seats to hold (minimum: 0, maximum: 255)"},"tags":{"type":["object","null"],"additionalProperties":{"type":"string"}}}`,
		`"required":["query","seats"]`,
		`"additionalProperties":false`,
	} {
		if !strings.Contains(string(reqs[0]), want) {
			t.Errorf("search's input_schema lacks %s:\n%s", want, reqs[0])
		}
	}

	msgs := toolmwtest.DecodeJSON(t, reqs[1])["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("%d messages in the second request, want user, assistant, user", len(msgs))
	}
	asst, answers := msgs[1].(map[string]any), msgs[2].(map[string]any)
	if asst["role"] != "assistant" || len(asst["content"].([]any)) != 1+len(wireUses) {
		t.Fatalf("message 2 = %v, want the assistant's text and %d tool_use blocks", asst, len(wireUses))
	}
	blocks := answers["content"].([]any)
	if answers["role"] != "user" || len(blocks) != len(wireUses) {
		t.Fatalf("message 3 = %v, want a user message of %d tool_result blocks", answers, len(wireUses))
	}
	for i, u := range wireUses {
		b := blocks[i].(map[string]any)
		if b["type"] != "tool_result" || b["tool_use_id"] != u.ID {
			t.Errorf("block %d: %v for %.40v; want tool_result for %.40s", i, b["type"], b["tool_use_id"], u.ID)
		}
		if isErr, ok := b["is_error"]; !ok || isErr != wantResults[i].isError {
			t.Errorf("call %s: is_error %v (sent %v), want %v sent explicitly", u.Name, isErr, ok, wantResults[i].isError)
		}
		text := resultText(t, b)
		source, content := toolmwtest.Envelope(t, text)
		if source != wantResults[i].source || !strings.HasPrefix(content, wantResults[i].prefix) {
			t.Errorf("call %s: model told %s %q, want %s %q…", u.Name, source, content, wantResults[i].source, wantResults[i].prefix)
		}
		if strings.HasPrefix(text, "Error:") || text != turns[0].Calls[i].Text {
			t.Errorf("call %s: the wire carries %q, the Turn %q", u.Name, text, turns[0].Calls[i].Text)
		}
	}
	if _, ok := seen.Load(longID); ok {
		t.Error("a tool saw the oversize tool_use id as given")
	}
	if _, ok := seen.Load(toolmw.SafeCallID(longID)); !ok {
		t.Error("the book tool did not see SafeCallID of its tool_use id")
	}
	if _, ok := seen.Load(wireUses[0].ID); !ok {
		t.Error("the search tool did not see the model's tool_use id")
	}
	for i, want := range []taxonomy.Kind{"", taxonomy.KindRefused, taxonomy.KindFailed, taxonomy.KindFailed, taxonomy.KindFailed, taxonomy.KindArgsInvalid, taxonomy.KindNotFound} {
		if got := taxonomy.InfoOf(turns[0].Calls[i].Err).Kind; got != want {
			t.Errorf("call %d: kind %q, want %q", i, got, want)
		}
	}
}
