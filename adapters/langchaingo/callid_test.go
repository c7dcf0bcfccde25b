package langchaingo_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/toolmw/toolmw"
	toollangchaingo "github.com/toolmw/toolmw/adapters/langchaingo"
	"github.com/toolmw/toolmw/budget"
)

// ids is a box with one tool, echo, that records the call id each call
// carries.
type ids struct {
	mu  sync.Mutex
	got []string
	box *toolmw.Toolbox
}

func newIDs(t *testing.T) *ids {
	t.Helper()
	x := &ids{box: toolmw.NewToolbox()}
	must(t, x.box.Register(toolmw.Spec{Name: "echo"}, func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		c, _ := toolmw.CallFrom(ctx)
		x.mu.Lock()
		x.got = append(x.got, c.ID)
		x.mu.Unlock()
		return toolmw.Text("ok"), nil
	}))
	return x
}

func (x *ids) take() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := x.got
	x.got = nil
	return out
}

// call makes one call of echo with input through the adapter's tool.
func (x *ids) call(t *testing.T, ctx context.Context, lc *toollangchaingo.Tools, input string) {
	t.Helper()
	if _, err := lc.Tools()[0].Call(ctx, input); err != nil {
		t.Fatal(err)
	}
}

// TestCallIDs: the executor does not pass the model's call id to a tool,
// so the adapter derives one from the call: the same tool and arguments
// (as JSON values: spacing and member order do not count) and how many
// such calls the run made before. Two identical calls of one run differ;
// a second pass over the run's input (a new run with the same id, or the
// same run after a Stop or at the agent's first Plan) gives the same ids
// again; another run id, or another key, gives others; without a run each
// id is random. Every id passes toolmw.SafeCallID unchanged.
func TestCallIDs(t *testing.T) {
	x := newIDs(t)
	lc, err := toollangchaingo.New(x.box)
	if err != nil {
		t.Fatal(err)
	}
	pass := func(ctx context.Context) []string {
		x.call(t, ctx, lc, `{"a":1,"b":[2,3]}`)
		x.call(t, ctx, lc, ` { "b": [2, 3], "a": 1 } `) // the same value
		x.call(t, ctx, lc, "```json\n{\"a\":1,\"b\":[2,3]}\n```")
		x.call(t, ctx, lc, `{"a":2}`)
		return x.take()
	}
	first := pass(budget.WithRun(context.Background(), budget.WithID("run_ids")))
	for i, id := range first {
		if !strings.HasPrefix(id, toollangchaingo.CallIDPrefix) || len(id) != len(toollangchaingo.CallIDPrefix)+32 || toolmw.SafeCallID(id) != id {
			t.Errorf("id %d: %q", i, id)
		}
		for j := range i {
			if first[j] == id {
				t.Errorf("calls %d and %d share id %s", j, i, id)
			}
		}
	}
	if again := pass(budget.WithRun(context.Background(), budget.WithID("run_ids"))); strings.Join(again, " ") != strings.Join(first, " ") {
		t.Errorf("a new run with the same id gave %v, want %v", again, first)
	}
	other := pass(budget.WithRun(context.Background(), budget.WithID("run_other")))
	if other[0] == first[0] {
		t.Error("another run id gave the same id")
	}
	keyed, err := toollangchaingo.New(x.box, toollangchaingo.WithCallIDKey([]byte("0123456789abcdef")))
	if err != nil {
		t.Fatal(err)
	}
	x.call(t, budget.WithRun(context.Background(), budget.WithID("run_ids")), keyed, `{"a":1,"b":[2,3]}`)
	if k := x.take(); k[0] == first[0] {
		t.Error("a call id key changed nothing")
	}
	x.call(t, context.Background(), lc, `{"a":1}`)
	x.call(t, context.Background(), lc, `{"a":1}`)
	if r := x.take(); r[0] == r[1] || !strings.HasPrefix(r[0], toollangchaingo.CallIDPrefix) {
		t.Errorf("without a run: %v, want two random ids", r)
	}
	// A run without an id keys its ids by a nonce of its own.
	anon1, anon2 := budget.WithRun(context.Background()), budget.WithRun(context.Background())
	x.call(t, anon1, lc, `{}`)
	x.call(t, anon2, lc, `{}`)
	if r := x.take(); r[0] == r[1] {
		t.Error("two runs without ids share a call id")
	}
}

// TestPassesStartAtZero: in the same run (the same context), the agent's
// first Plan of each executor.Call starts counting again, so running the
// same input again gives its calls the ids they had. A model that makes
// the same call twice in one pass gets two ids.
func TestPassesStartAtZero(t *testing.T) {
	x := newIDs(t)
	lc, err := toollangchaingo.New(x.box)
	if err != nil {
		t.Fatal(err)
	}
	ctx := budget.WithRun(context.Background(), budget.WithID("run_passes"))
	script := func() *scripted {
		return newScripted(
			reply{calls: []llms.ToolCall{call("c1", "echo", `{"__arg1":"{\"x\":1}"}`)}},
			reply{calls: []llms.ToolCall{call("c2", "echo", `{"__arg1":"{\"x\":1}"}`)}},
			reply{text: "done"})
	}
	var passes [][]string
	for range 2 {
		executor := agents.NewExecutor(toollangchaingo.Agent(agents.NewOpenAIFunctionsAgent(script(), lc.Tools())))
		if _, err := chains.Run(ctx, executor, "echo twice"); err != nil {
			t.Fatal(err)
		}
		passes = append(passes, x.take())
	}
	if len(passes[0]) != 2 || passes[0][0] == passes[0][1] {
		t.Fatalf("one pass: %v, want two ids", passes[0])
	}
	if strings.Join(passes[0], " ") != strings.Join(passes[1], " ") {
		t.Fatalf("the second pass gave %v, want %v", passes[1], passes[0])
	}
}
