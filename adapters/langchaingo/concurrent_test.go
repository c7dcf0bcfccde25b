package langchaingo_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	toollangchaingo "github.com/toolmw/toolmw/adapters/langchaingo"
	"github.com/toolmw/toolmw/budget"
)

// TestConcurrentRuns: one Tools serves many executors at once, each in
// its own run; every run gets its own answers and ids (run under -race).
func TestConcurrentRuns(t *testing.T) {
	x := newIDs(t)
	lc, err := toollangchaingo.New(x.box)
	must(t, err)
	const runs = 8
	var wg sync.WaitGroup
	errs := make([]error, runs)
	for i := range runs {
		wg.Go(func() {
			model := newScripted(
				reply{calls: []llms.ToolCall{call("c1", "echo", `{"__arg1":"{}"}`), call("c2", "echo", `{"__arg1":"{}"}`)}},
				reply{text: "done"})
			ctx := budget.WithRun(context.Background(), budget.WithID(fmt.Sprintf("run_%d", i)))
			out, err := chains.Run(ctx, agents.NewExecutor(toollangchaingo.Agent(agents.NewOpenAIFunctionsAgent(model, lc.Tools()))), "echo")
			if err == nil && out != "done" {
				err = fmt.Errorf("answer %q", out)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("run %d: %v", i, err)
		}
	}
	seen := map[string]bool{}
	for _, id := range x.take() {
		if seen[id] {
			t.Errorf("id %s seen twice", id)
		}
		seen[id] = true
	}
	if len(seen) != 2*runs {
		t.Errorf("%d distinct ids, want %d", len(seen), 2*runs)
	}
}
