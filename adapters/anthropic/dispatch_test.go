package anthropic_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/turn"
)

// newTools makes the adapter over box with o, as toolmwtest.TestAdapter
// asks.
func newTools(t *testing.T, box *toolmw.Toolbox, o turn.Options) *toolanthropic.Tools {
	opts := []toolanthropic.Option{toolanthropic.WithMaxParallel(o.MaxParallel)}
	if o.CountCalls {
		opts = append(opts, toolanthropic.WithCallsCounted())
	}
	tools, err := toolanthropic.New(box, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// TestAdapter runs the dispatch contract through Tools.Call.
func TestAdapter(t *testing.T) {
	toolmwtest.TestAdapter(t, func(t *testing.T, box *toolmw.Toolbox, o turn.Options) toolmwtest.Dispatch {
		tools := newTools(t, box, o)
		return func(ctx context.Context, calls []toolmwtest.ModelCall) ([]toolmwtest.Reply, error) {
			var blocks []anthropic.ContentBlockUnion
			for _, c := range calls {
				blocks = append(blocks, toolUse(c.ID, c.Name, c.Args))
			}
			tr, err := tools.Call(ctx, blocks)
			var out []toolmwtest.Reply
			for _, a := range tr.Calls {
				out = append(out, toolmwtest.Reply{CallID: a.ToolUseID, Text: a.Text, Err: a.Err})
			}
			return out, err
		}
	})
}

// toolUse is a tool_use block as the SDK decodes one; an empty input is
// sent without the input field.
func toolUse(id, name, input string) anthropic.ContentBlockUnion {
	block := map[string]any{"type": "tool_use", "id": id, "name": name, "caller": map[string]any{"type": "direct"}}
	if input != "" {
		block["input"] = json.RawMessage(input)
	}
	return decode(block)
}

// decode returns v as the SDK decodes its JSON.
func decode(v any) anthropic.ContentBlockUnion {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var u anthropic.ContentBlockUnion
	if err := json.Unmarshal(raw, &u); err != nil {
		panic(err)
	}
	return u
}

// TestToolsetMemberNotOffered: a toolset member's call is answered
// tool-not-found without reaching the box, and blocks other than tool_use
// are skipped.
func TestToolsetMemberNotOffered(t *testing.T) {
	box := toolmw.NewToolbox()
	if err := box.Register(toolmw.Spec{Name: "ping"}, toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) {
		return "pong", nil
	})); err != nil {
		t.Fatal(err)
	}
	tools := newTools(t, box, turn.Options{})
	member := decode(map[string]any{"type": "tool_use", "id": "c4", "name": "ping", "input": map[string]any{}, "toolset_name": "browser", "caller": map[string]any{"type": "direct"}})
	text := decode(map[string]any{"type": "text", "text": "calling"})
	tr, err := tools.Call(context.Background(), []anthropic.ContentBlockUnion{text, toolUse("c1", "ping", `{}`), member})
	if err != nil || len(tr.Calls) != 2 {
		t.Fatalf("turn = %v, %v; want two answers (the text block skipped)", tr, err)
	}
	for i, want := range []string{"pong", "tool-not-found tool_not_found: no tool named ping"} {
		if _, content := toolmwtest.Envelope(t, tr.Calls[i].Text); content != want {
			t.Errorf("call %s answered %q, want %q", tr.Calls[i].ToolUseID, content, want)
		}
	}
	if got := tools.Names(); len(got) != 1 || got[0] != "ping" {
		t.Errorf("Names() = %v, want [ping]", got)
	}
}

// TestOptions: invalid options and a nil box are definition errors.
func TestOptions(t *testing.T) {
	box := toolmw.NewToolbox()
	if _, err := toolanthropic.New(box, toolanthropic.WithMaxParallel(-1)); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
		t.Errorf("WithMaxParallel(-1): %v, want option_invalid", err)
	}
	if _, err := toolanthropic.New(nil); taxonomy.InfoOf(err).Kind != taxonomy.KindDefinitionInvalid {
		t.Errorf("New(nil): %v, want a definition error", err)
	}
	tools, err := toolanthropic.New(box, nil, toolanthropic.WithMaxParallel(0))
	if err != nil || len(tools.Params()) != 0 {
		t.Errorf("defaults: %v", err)
	}
	var nilTurn *toolanthropic.Turn
	if nilTurn.Blocks() != nil {
		t.Error("a nil Turn has answers")
	}
	tr, err := tools.Call(context.Background(), nil)
	if err != nil || len(tr.Calls) != 0 || len(tr.Blocks()) != 0 {
		t.Errorf("no calls: %v, %v", tr, err)
	}
}
