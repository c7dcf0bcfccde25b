package langchaingo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/toolmwtest/canary"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// reply is one scripted answer of the model: tool calls (the OpenAI
// functions agent's shape), or text (a MRKL agent's "Action: …" or
// "Final Answer: …").
type reply struct {
	calls []llms.ToolCall
	text  string
}

// call makes a tool call of the model.
func call(id, name, args string) llms.ToolCall {
	return llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: args}}
}

// request is one request the scripted model received.
type request struct {
	Messages  []llms.MessageContent
	Functions []llms.FunctionDefinition
	Tools     []llms.Tool
}

// scripted is a chat model (llms.Model, the interface langchaingo's agents
// call) that answers with its script, one reply per request, in order,
// and records every request. langchaingo's own tests fake a model the same
// way (llms/fake answers with scripted texts); this one also answers with
// tool calls. It honours its context: a request made after it ended is an
// error. After the script it answers "Final Answer: done".
type scripted struct {
	mu       sync.Mutex
	script   []reply
	next     int
	requests []request
}

func newScripted(script ...reply) *scripted { return &scripted{script: script} }

func (m *scripted) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, request{Messages: msgs, Functions: o.Functions, Tools: o.Tools})
	r := reply{text: "Final Answer: done"}
	if m.next < len(m.script) {
		r = m.script[m.next]
		m.next++
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: r.text, ToolCalls: r.calls}}}, nil
}

func (m *scripted) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// received returns the requests so far.
func (m *scripted) received() []request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]request(nil), m.requests...)
}

// toolResponses returns the tool responses of the last request, in order:
// what the model was shown of every call of the run so far.
func (m *scripted) toolResponses() []llms.ToolCallResponse {
	rs := m.received()
	if len(rs) == 0 {
		return nil
	}
	var out []llms.ToolCallResponse
	for _, msg := range rs[len(rs)-1].Messages {
		for _, p := range msg.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				out = append(out, r)
			}
		}
	}
	return out
}

// text returns every request as text, for looking for what must not be
// there.
func (m *scripted) text(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, r := range m.received() {
		for _, msg := range r.Messages {
			for _, p := range msg.Parts {
				fmt.Fprintf(&b, "%s: %+v\n", msg.Role, p)
			}
		}
		js, err := json.Marshal(r.Functions)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(js)
		b.WriteByte('\n')
	}
	return b.String()
}

// recorder is a callbacks.Handler that records everything it is told, as
// text: what a log handler (callbacks.LogHandler) would print, and more.
type recorder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (r *recorder) add(event string, v ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.b.WriteString(event)
	for _, x := range v {
		if err, ok := x.(error); ok && err != nil {
			fmt.Fprintf(&r.b, " %v %+v %#v", err, err, err)
			continue
		}
		fmt.Fprintf(&r.b, " %+v", x)
	}
	r.b.WriteByte('\n')
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.b.String()
}

func (r *recorder) HandleText(_ context.Context, text string)          { r.add("text", text) }
func (r *recorder) HandleLLMStart(_ context.Context, prompts []string) { r.add("llm_start", prompts) }
func (r *recorder) HandleLLMGenerateContentStart(_ context.Context, ms []llms.MessageContent) {
	r.add("generate_start", ms)
}
func (r *recorder) HandleLLMGenerateContentEnd(_ context.Context, res *llms.ContentResponse) {
	r.add("generate_end", res)
}
func (r *recorder) HandleLLMError(_ context.Context, err error)           { r.add("llm_error", err) }
func (r *recorder) HandleChainStart(_ context.Context, in map[string]any) { r.add("chain_start", in) }
func (r *recorder) HandleChainEnd(_ context.Context, out map[string]any)  { r.add("chain_end", out) }
func (r *recorder) HandleChainError(_ context.Context, err error)         { r.add("chain_error", err) }
func (r *recorder) HandleToolStart(_ context.Context, input string)       { r.add("tool_start", input) }
func (r *recorder) HandleToolEnd(_ context.Context, output string)        { r.add("tool_end", output) }
func (r *recorder) HandleToolError(_ context.Context, err error)          { r.add("tool_error", err) }
func (r *recorder) HandleAgentAction(_ context.Context, a schema.AgentAction) {
	r.add("agent_action", a)
}
func (r *recorder) HandleAgentFinish(_ context.Context, f schema.AgentFinish) {
	r.add("agent_finish", f)
}
func (r *recorder) HandleRetrieverStart(_ context.Context, query string) {
	r.add("retriever_start", query)
}
func (r *recorder) HandleRetrieverEnd(_ context.Context, query string, docs []schema.Document) {
	r.add("retriever_end", query, docs)
}
func (r *recorder) HandleStreamingFunc(_ context.Context, chunk []byte) {
	r.add("stream", string(chunk))
}

// noCanary fails t when text holds a planted secret or the words of the
// texts they were hidden in.
func noCanary(t *testing.T, where, text string) {
	t.Helper()
	if family, found := canary.Find(text); family != "" {
		t.Errorf("%s holds the %s canary (%q)", where, family, found)
	}
	for _, w := range canary.HiddenText {
		if strings.Contains(text, w) {
			t.Errorf("%s holds %q, from an error's hidden text", where, w)
		}
	}
}
