package replay

import "encoding/json"

// ToolCall is one function call in a recorded reply.
type ToolCall struct {
	ID        string // the call id (Chat Completions "id", Responses "call_id")
	Name      string // the function's name
	Arguments string // the arguments, a JSON document as a string
}

// The recorded model and fingerprint.
const (
	model       = "gpt-5.4-mini-2026-03-17"
	fingerprint = "fp_b3f1157249"
	created     = 1765432100
)

// ChatToolCalls is a Chat Completions reply whose message asks for calls
// (finish_reason "tool_calls", content null).
func ChatToolCalls(calls ...ToolCall) []byte {
	tcs := make([]any, len(calls))
	for i, c := range calls {
		tcs[i] = ordered{
			{"id", c.ID},
			{"type", "function"},
			{"function", ordered{{"name", c.Name}, {"arguments", c.Arguments}}},
		}
	}
	return chatCompletion("chatcmpl-CrPl4yT0qXwZ8vB2nM6kJ1hG5fDsA", ordered{
		{"role", "assistant"},
		{"content", nil},
		{"tool_calls", tcs},
		{"refusal", nil},
		{"annotations", []any{}},
	}, "tool_calls", 84, 46)
}

// ChatAnswer is a Chat Completions reply with the model's final text
// (finish_reason "stop").
func ChatAnswer(text string) []byte {
	return chatCompletion("chatcmpl-CrPl6Qe3wRt9yUi1oPa7sDf2gHjKl", ordered{
		{"role", "assistant"},
		{"content", text},
		{"refusal", nil},
		{"annotations", []any{}},
	}, "stop", 171, 38)
}

func chatCompletion(id string, message ordered, finish string, in, out int) []byte {
	return mustJSON(ordered{
		{"id", id},
		{"object", "chat.completion"},
		{"created", created},
		{"model", model},
		{"choices", []any{ordered{
			{"index", 0},
			{"message", message},
			{"logprobs", nil},
			{"finish_reason", finish},
		}}},
		{"usage", ordered{
			{"prompt_tokens", in},
			{"completion_tokens", out},
			{"total_tokens", in + out},
			{"prompt_tokens_details", ordered{{"cached_tokens", 0}, {"audio_tokens", 0}}},
			{"completion_tokens_details", ordered{
				{"reasoning_tokens", 0}, {"audio_tokens", 0},
				{"accepted_prediction_tokens", 0}, {"rejected_prediction_tokens", 0},
			}},
		}},
		{"service_tier", "default"},
		{"system_fingerprint", fingerprint},
	})
}

// ResponseToolCalls is a Responses API reply whose output is function_call
// items.
func ResponseToolCalls(calls ...ToolCall) []byte {
	items := make([]any, len(calls))
	for i, c := range calls {
		items[i] = ordered{
			{"id", "fc_68f0a1" + c.ID},
			{"type", "function_call"},
			{"status", "completed"},
			{"arguments", c.Arguments},
			{"call_id", c.ID},
			{"name", c.Name},
		}
	}
	return response("resp_68f0a1b2c3d4e5f60718293a4b5c6d7e", items, 291, 52)
}

// ResponseAnswer is a Responses API reply whose output is one assistant
// message with the model's final text.
func ResponseAnswer(text string) []byte {
	return response("resp_68f0a1b2c3d4e5f60718293a4b5c6d7f", []any{ordered{
		{"id", "msg_68f0a1c9d8e7f6a5b4c3d2e1f0a9b8c7"},
		{"type", "message"},
		{"status", "completed"},
		{"content", []any{ordered{
			{"type", "output_text"},
			{"annotations", []any{}},
			{"logprobs", []any{}},
			{"text", text},
		}}},
		{"role", "assistant"},
	}}, 402, 41)
}

func response(id string, output []any, in, out int) []byte {
	return mustJSON(ordered{
		{"id", id},
		{"object", "response"},
		{"created_at", created},
		{"status", "completed"},
		{"background", false},
		{"error", nil},
		{"incomplete_details", nil},
		{"instructions", nil},
		{"max_output_tokens", nil},
		{"max_tool_calls", nil},
		{"model", model},
		{"output", output},
		{"parallel_tool_calls", true},
		{"previous_response_id", nil},
		{"reasoning", ordered{{"effort", nil}, {"summary", nil}}},
		{"service_tier", "default"},
		{"store", true},
		{"temperature", 1.0},
		{"text", ordered{{"format", ordered{{"type", "text"}}}, {"verbosity", "medium"}}},
		{"tool_choice", "auto"},
		{"tools", []any{}},
		{"top_logprobs", 0},
		{"top_p", 1.0},
		{"truncation", "disabled"},
		{"usage", ordered{
			{"input_tokens", in},
			{"input_tokens_details", ordered{{"cached_tokens", 0}}},
			{"output_tokens", out},
			{"output_tokens_details", ordered{{"reasoning_tokens", 0}}},
			{"total_tokens", in + out},
		}},
		{"user", nil},
		{"metadata", ordered{}},
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
