package anthropic_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/toolmwtest"
)

// newRunner is the SDK's tool runner with tools, on client, asked
// question: the way its users build it.
func newRunner(client anthropic.Client, tools []anthropic.BetaTool, messages ...anthropic.BetaMessageParam) *anthropic.BetaToolRunner {
	return client.Beta.Messages.NewToolRunner(tools, anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model:     anthropic.ModelClaudeSonnet5_5,
			MaxTokens: 1024,
			Messages:  messages,
		},
	})
}

// ask is the first message of a conversation.
func ask(question string) anthropic.BetaMessageParam {
	return anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(question))
}

// fastStack is middleware.Default with a retry that waits a millisecond,
// and more layers inserted before retry.
func fastStack(t *testing.T, before ...middleware.Layer) toolmw.Middleware {
	t.Helper()
	stack := middleware.Default(middleware.WithRetry(retry.WithBackoff(time.Millisecond, time.Millisecond)))
	for _, l := range before {
		var err error
		if stack, err = stack.InsertBefore(middleware.Retry, l); err != nil {
			t.Fatal(err)
		}
	}
	return stack.Middleware()
}

// wireResult is one tool_result block as the replay server received it.
type wireResult struct {
	request int // the request it came in, from 0
	isError bool
	text    string // its one text block
	content []any  // its content blocks
}

// wireResults returns the tool_result blocks of the request bodies, by
// tool_use id, in the order they came.
func wireResults(t *testing.T, bodies [][]byte) map[string][]wireResult {
	t.Helper()
	out := map[string][]wireResult{}
	for i, body := range bodies {
		req := toolmwtest.DecodeJSON(t, body)
		msgs, _ := req["messages"].([]any)
		for _, m := range msgs {
			m := m.(map[string]any)
			if m["role"] != "user" {
				continue
			}
			blocks, _ := m["content"].([]any)
			for _, b := range blocks {
				b := b.(map[string]any)
				if b["type"] != "tool_result" {
					continue
				}
				r := wireResult{request: i}
				r.isError, _ = b["is_error"].(bool)
				r.content, _ = b["content"].([]any)
				if len(r.content) == 1 {
					if c := r.content[0].(map[string]any); c["type"] == "text" {
						r.text = c["text"].(string)
					}
				}
				id := b["tool_use_id"].(string)
				out[id] = append(out[id], r)
			}
		}
	}
	return out
}

// onlyResult returns the one tool_result of id, failing t when there is
// not exactly one.
func onlyResult(t *testing.T, results map[string][]wireResult, id string) wireResult {
	t.Helper()
	rs := results[id]
	if len(rs) != 1 {
		t.Fatalf("%d tool_results for %s, want 1: %+v", len(rs), id, rs)
	}
	return rs[0]
}

// envelopeAfter parses text as "Error: " and an envelope, the runner's
// shape of a failure, or as an envelope alone.
func envelopeAfter(t *testing.T, prefix, text string) (source, content string) {
	t.Helper()
	if len(text) < len(prefix) || text[:len(prefix)] != prefix {
		t.Fatalf("tool_result text %q does not start with %q", text, prefix)
	}
	return toolmwtest.Envelope(t, text[len(prefix):])
}

// callIDs records the call id each layer-visible call had, by tool.
type callIDs struct {
	mu  sync.Mutex
	ids map[string][]string
}

// layer is a middleware that records the call ids of the calls it sees.
func (c *callIDs) layer() middleware.Layer {
	return middleware.Layer{Name: "record-ids", Middleware: func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			call, _ := toolmw.CallFrom(ctx)
			c.mu.Lock()
			if c.ids == nil {
				c.ids = map[string][]string{}
			}
			c.ids[call.Tool] = append(c.ids[call.Tool], call.ID)
			c.mu.Unlock()
			return next(ctx, args)
		}
	}}
}

func (c *callIDs) of(tool string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ids[tool]...)
}
