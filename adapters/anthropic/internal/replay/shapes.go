package replay

import "encoding/json"

// ToolUse is one tool_use block in a recorded reply.
type ToolUse struct {
	ID    string // the block's id, toolu_…
	Name  string // the tool's name
	Input string // the input, a JSON object ("" is sent as {})
}

// The recorded model.
const model = "claude-sonnet-5-5"

// ToolUses is a Messages API reply that says text (unless it is "") and
// asks for the calls (stop_reason "tool_use").
func ToolUses(text string, uses ...ToolUse) []byte {
	var content []any
	if text != "" {
		content = append(content, ordered{{"type", "text"}, {"text", text}})
	}
	for _, u := range uses {
		in := json.RawMessage(u.Input)
		if u.Input == "" {
			in = json.RawMessage(`{}`)
		}
		content = append(content, ordered{
			{"type", "tool_use"},
			{"id", u.ID},
			{"name", u.Name},
			{"input", in},
			{"caller", ordered{{"type", "direct"}}},
		})
	}
	return message("msg_01XFDUDYJgAACzvnptvVoYEL", content, "tool_use", 512, 96)
}

// Answer is a Messages API reply with the model's final text (stop_reason
// "end_turn").
func Answer(text string) []byte {
	return message("msg_01Aq9w938a90dw8q8a2ZzBcT", []any{ordered{{"type", "text"}, {"text", text}}}, "end_turn", 731, 42)
}

func message(id string, content []any, stop string, in, out int) []byte {
	return mustJSON(ordered{
		{"id", id},
		{"type", "message"},
		{"role", "assistant"},
		{"model", model},
		{"content", content},
		{"stop_reason", stop},
		{"stop_sequence", nil},
		{"usage", ordered{
			{"input_tokens", in},
			{"cache_creation_input_tokens", 0},
			{"cache_read_input_tokens", 0},
			{"cache_creation", ordered{{"ephemeral_5m_input_tokens", 0}, {"ephemeral_1h_input_tokens", 0}}},
			{"output_tokens", out},
			{"service_tier", "standard"},
		}},
	})
}

// ordered is a JSON object that keeps its keys in order, as the API writes
// them.
type ordered []kv

type kv struct {
	k string
	v any
}

func (o ordered) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, p := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(p.k)
		v, err := json.Marshal(p.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the shapes above are static: a failure is a bug here
	}
	return b
}
