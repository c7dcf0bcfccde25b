package langchaingo_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolmw/toolmw"
	toollangchaingo "github.com/toolmw/toolmw/adapters/langchaingo"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// leakyTool is a langchaingo tool of the user's own that fails with err.
type leakyTool struct {
	name string
	err  error
}

func (l leakyTool) Name() string      { return l.name }
func (leakyTool) Description() string { return "A tool written for langchaingo." }
func (l leakyTool) Call(context.Context, string) (string, error) {
	return "", l.err
}

type caseIn struct {
	Case string `json:"case"`
}

// TestCanaries plants each canary secret in every way a tool can fail
// with it (canary.All: untyped errors, causes and wrappers of typed errors,
// typed messages), in a box tool and in a langchaingo tool of the user's
// through Wrap, and runs an agent that calls them all. Nothing of a secret
// reaches any request the model received, the executor's callbacks (a
// handler recording everything it is told, on the executor, the agent and
// the tools), the executor's intermediate steps, nor the stack's log; nor
// do the words of the hidden texts, but in the log's debug detail (toolmw's
// logging layer shows a cause scrubbed there). The run is not aborted.
func TestCanaries(t *testing.T) {
	for _, secret := range canary.Secrets {
		t.Run(secret.Family, func(t *testing.T) {
			failures := canary.All(secret.Value)
			cases := slices.Sorted(func(yield func(string) bool) {
				for k := range failures {
					if !yield(k) {
						return
					}
				}
			})
			logs := &syncBuffer{}
			mw := middleware.Default(middleware.WithSlog(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
				middleware.WithRetry(retry.WithBackoff(0, 0))).Middleware()
			box := toolmw.NewToolbox(mw)
			for i := range cases {
				// A tool per case: each has a circuit of its own, which
				// one failure does not open.
				must(t, box.Register(toolmw.Spec{Name: fmt.Sprintf("leaky_%d", i), Description: "Fails."},
					toolmw.Typed(func(ctx context.Context, in caseIn) (string, error) {
						return "", failures[in.Case]
					})))
			}
			rec := &recorder{}
			lc, err := toollangchaingo.New(box, toollangchaingo.WithCallbacksHandler(rec))
			must(t, err)
			var userTools []tools.Tool
			var calls []llms.ToolCall
			for i, c := range cases {
				calls = append(calls, call(fmt.Sprintf("c%d", i), fmt.Sprintf("leaky_%d", i), fmt.Sprintf(`{"__arg1":"{\"case\":\"%s\"}"}`, c)))
				w, err := toollangchaingo.Wrap(leakyTool{name: fmt.Sprintf("legacy %d", i), err: failures[c]}, mw,
					toollangchaingo.WithCallbacksHandler(rec))
				must(t, err)
				userTools = append(userTools, w)
				calls = append(calls, call(fmt.Sprintf("w%d", i), fmt.Sprintf("legacy_%d", i), `{"__arg1":"Oslo"}`))
				calls[len(calls)-1].FunctionCall.Name = fmt.Sprintf("legacy %d", i)
			}
			model := newScripted(reply{calls: calls}, reply{text: "all failed"})
			agent := agents.NewOpenAIFunctionsAgent(model, append(lc.Tools(), userTools...), agents.WithCallbacksHandler(rec))
			executor := agents.NewExecutor(toollangchaingo.Agent(agent), agents.WithCallbacksHandler(rec), agents.WithReturnIntermediateSteps())
			out, err := chains.Call(budget.WithRun(context.Background()), executor, map[string]any{"input": "fail in every way"})
			if err != nil || out["output"] != "all failed" {
				t.Fatalf("the run ended with %v, %v", out, err)
			}
			got := model.toolResponses()
			if len(got) != 2*len(cases) {
				t.Fatalf("the model was shown %d results, want %d", len(got), 2*len(cases))
			}
			for _, r := range got {
				if _, _, ok := toolmw.ParseEnvelope(r.Content); !ok {
					t.Errorf("result %s is not an envelope: %q", r.ToolCallID, r.Content)
				}
			}
			noCanary(t, "the model's requests", model.text(t))
			noCanary(t, "the callbacks", rec.String())
			noCanary(t, "the intermediate steps", fmt.Sprintf("%+v", out["intermediateSteps"]))
			// toolmw's own log at debug level shows a failure's cause,
			// scrubbed (package logging): the secrets must not be there,
			// the hidden texts may.
			if family, found := canary.Find(logs.String()); family != "" {
				t.Errorf("the log holds the %s canary (%q)", family, found)
			}
			if !strings.Contains(rec.String(), "tool_end <untrusted-data") || !strings.Contains(logs.String(), "legacy_0") {
				t.Errorf("the callbacks or the log saw no call:\n%s\n%s", rec.String(), logs.String())
			}
		})
	}
}
