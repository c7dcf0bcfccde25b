package openai_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolmw/toolmw"
	toolopenai "github.com/toolmw/toolmw/adapters/openai"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/turn"
)

type cityIn struct {
	City string `json:"city"`
}

// newTools makes the adapter over box with o, as toolmwtest.TestAdapter
// asks.
func newTools(t *testing.T, box *toolmw.Toolbox, o turn.Options) *toolopenai.Tools {
	opts := []toolopenai.Option{toolopenai.WithMaxParallel(o.MaxParallel)}
	if o.CountCalls {
		opts = append(opts, toolopenai.WithCallsCounted())
	}
	tools, err := toolopenai.New(box, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// replies returns a Turn's answers as toolmwtest reads them.
func replies(tr *toolopenai.Turn) []toolmwtest.Reply {
	var out []toolmwtest.Reply
	for _, a := range tr.Calls {
		out = append(out, toolmwtest.Reply{CallID: a.CallID, Text: a.Text, Err: a.Err})
	}
	return out
}

// TestAdapterChat runs the dispatch contract through CallChat.
func TestAdapterChat(t *testing.T) {
	toolmwtest.TestAdapter(t, func(t *testing.T, box *toolmw.Toolbox, o turn.Options) toolmwtest.Dispatch {
		tools := newTools(t, box, o)
		return func(ctx context.Context, calls []toolmwtest.ModelCall) ([]toolmwtest.Reply, error) {
			var cs []openai.ChatCompletionMessageToolCallUnion
			for _, c := range calls {
				cs = append(cs, fnCall(c.ID, c.Name, c.Args))
			}
			tr, err := tools.CallChat(ctx, cs)
			return replies(tr), err
		}
	})
}

// TestAdapterResponses runs the dispatch contract through CallResponses.
func TestAdapterResponses(t *testing.T) {
	toolmwtest.TestAdapter(t, func(t *testing.T, box *toolmw.Toolbox, o turn.Options) toolmwtest.Dispatch {
		tools := newTools(t, box, o)
		return func(ctx context.Context, calls []toolmwtest.ModelCall) ([]toolmwtest.Reply, error) {
			var items []responses.ResponseOutputItemUnion
			for _, c := range calls {
				items = append(items, decode[responses.ResponseOutputItemUnion](t, map[string]any{
					"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Name, "arguments": c.Args}))
			}
			tr, err := tools.CallResponses(ctx, items)
			return replies(tr), err
		}
	})
}

// decode returns v as the SDK decodes its JSON.
func decode[T any](t *testing.T, v any) T {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// fnCall is a function tool call as the SDK decodes one.
func fnCall(id, name, args string) openai.ChatCompletionMessageToolCallUnion {
	var u openai.ChatCompletionMessageToolCallUnion
	raw, _ := json.Marshal(map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}})
	if err := json.Unmarshal(raw, &u); err != nil {
		panic(err)
	}
	return u
}

// TestCustomCallNotOffered: a custom tool call is answered tool-not-found
// without reaching the box, which serves function tools only.
func TestCustomCallNotOffered(t *testing.T) {
	box := toolmw.NewToolbox()
	if err := box.Register(toolmw.Spec{Name: "ping"}, toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) {
		t.Error("the custom call reached the tool")
		return "pong", nil
	})); err != nil {
		t.Fatal(err)
	}
	tools := newTools(t, box, turn.Options{})
	custom := decode[openai.ChatCompletionMessageToolCallUnion](t, map[string]any{"id": "c4", "type": "custom", "custom": map[string]any{"name": "ping", "input": "hi"}})
	tr, err := tools.CallChat(context.Background(), []openai.ChatCompletionMessageToolCallUnion{custom})
	if err != nil || len(tr.Calls) != 1 {
		t.Fatalf("turn = %v, %v", tr, err)
	}
	if _, content := toolmwtest.Envelope(t, tr.Calls[0].Text); content != "tool-not-found tool_not_found: no tool named ping" {
		t.Errorf("custom call answered %q", content)
	}
	if got := tools.Names(); len(got) != 1 || got[0] != "ping" {
		t.Errorf("Names() = %v, want [ping]", got)
	}
}

// TestOptions: invalid options and a nil box are definition errors.
func TestOptions(t *testing.T) {
	box := toolmw.NewToolbox()
	if _, err := toolopenai.New(box, toolopenai.WithMaxParallel(-1)); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
		t.Errorf("WithMaxParallel(-1): %v, want option_invalid", err)
	}
	if _, err := toolopenai.New(nil); taxonomy.InfoOf(err).Kind != taxonomy.KindDefinitionInvalid {
		t.Errorf("New(nil): %v, want a definition error", err)
	}
	tools, err := toolopenai.New(box, nil, toolopenai.WithMaxParallel(0))
	if err != nil || !tools.Strict() || len(tools.ForChat()) != 0 {
		t.Errorf("defaults: %v, strict %v", err, tools.Strict())
	}
	var nilTurn *toolopenai.Turn
	if nilTurn.Messages() != nil || nilTurn.Items() != nil {
		t.Error("a nil Turn has answers")
	}
	tr, err := tools.CallChat(context.Background(), nil)
	if err != nil || len(tr.Calls) != 0 || len(tr.Messages()) != 0 {
		t.Errorf("no calls: %v, %v", tr, err)
	}
}
