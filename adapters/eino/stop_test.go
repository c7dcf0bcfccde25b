package eino_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/toolmw/toolmw"
	tooleino "github.com/toolmw/toolmw/adapters/eino"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// runAgent runs an ADK agent with the box's tools and the script, and
// returns the run's error (the error event's).
func runAgent(t *testing.T, ctx context.Context, box tooleino.Box, m *scripted, opts ...tooleino.Option) error {
	t.Helper()
	tools, err := tooleino.New(box, opts...)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "a", Description: "d", Model: m,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: tools.NodeConfig()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return eventErr(drainEvents(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "go")))
}

// TestRunBudgetStopsTheRun: a call refused by the run budget ends the ADK
// run with the *turn.Stop, reachable with errors.As through Eino's
// wrapping, and the model is not asked again.
func TestRunBudgetStopsTheRun(t *testing.T) {
	var runs atomic.Int32
	box := toolmw.NewToolbox()
	if err := box.Register(toolmw.Spec{Name: "lookup"}, toolmw.Typed(func(ctx context.Context, _ struct{}) (string, error) {
		runs.Add(1)
		return "found", nil
	})); err != nil {
		t.Fatal(err)
	}
	m := newScripted(calls("c1", "lookup", `{}`), calls("c2", "lookup", `{}`), say("unreachable"))
	ctx := budget.WithRun(context.Background(), budget.WithToolMaxAttempts("lookup", 1))
	err := runAgent(t, ctx, box, m, tooleino.WithCallsCounted())
	var stop *turn.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindRunLimitExceeded || !errors.Is(err, taxonomy.ErrRunLimitExceeded) {
		t.Fatalf("the run ended with %v, want a run-limit-exceeded *turn.Stop", err)
	}
	if runs.Load() != 1 || len(m.received(t)) != 2 {
		t.Fatalf("%d runs, %d model calls; want 1 and 2", runs.Load(), len(m.received(t)))
	}
}

// TestCancelledRunStopsTyped: a run whose context is cancelled during a
// call ends with a cancelled *turn.Stop; errors.Is sees context.Canceled.
func TestCancelledRunStopsTyped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen atomic.Bool
	box := toolmw.NewToolbox(middleware.Default(middleware.WithRetry(retry.WithBackoff(0, 0))).Middleware())
	if err := box.Register(toolmw.Spec{Name: "slow"}, toolmw.Typed(func(tctx context.Context, _ struct{}) (string, error) {
		cancel() // the user gives up while the tool runs
		<-tctx.Done()
		seen.Store(true)
		return "", tctx.Err()
	})); err != nil {
		t.Fatal(err)
	}
	err := runAgent(t, ctx, box, newScripted(calls("c1", "slow", `{}`), say("unreachable")))
	var stop *turn.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("the run ended with %v, want a cancelled *turn.Stop", err)
	}
	if !seen.Load() {
		t.Fatal("the tool's context did not end with the run's")
	}
}

// TestCircuitOpenStopsTheRun: a call that meets its tool's open circuit
// ends the run with a circuit-open *turn.Stop.
func TestCircuitOpenStopsTheRun(t *testing.T) {
	box := toolmw.NewToolbox(middleware.Default(middleware.WithRetry(retry.WithMaxAttempts(1)), middleware.WithBreaker(breakerOne()...)).Middleware())
	if err := box.Register(toolmw.Spec{Name: "flights"}, toolmw.Typed(func(ctx context.Context, _ struct{}) (string, error) {
		return "", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down")
	})); err != nil {
		t.Fatal(err)
	}
	m := newScripted(calls("c1", "flights", `{}`), calls("c2", "flights", `{}`), say("unreachable"))
	err := runAgent(t, context.Background(), box, m)
	var stop *turn.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindCircuitOpen || stop.RetryAfter <= 0 {
		t.Fatalf("the run ended with %v, want a circuit-open *turn.Stop with a wait", err)
	}
	// The first failure reached the model as a tool result.
	if _, content := envelope(t, toolMessages(m.last())["c1"].Content); content != "tool-failed upstream_unavailable: down" {
		t.Fatalf("the model read %q", content)
	}
}

// TestStopThroughAComposeGraph: in a compose graph of a ToolsNode, the
// Stop is what Invoke returns, as errors.As sees it.
func TestStopThroughAComposeGraph(t *testing.T) {
	ctx := context.Background()
	box := toolmw.NewToolbox()
	if err := box.Register(toolmw.Spec{Name: "lookup"}, toolmw.Typed(func(ctx context.Context, _ struct{}) (string, error) {
		return "found", nil
	})); err != nil {
		t.Fatal(err)
	}
	tools, err := tooleino.New(box, tooleino.WithCallsCounted())
	if err != nil {
		t.Fatal(err)
	}
	nc := tools.NodeConfig()
	node, err := compose.NewToolNode(ctx, &nc)
	if err != nil {
		t.Fatal(err)
	}
	g := compose.NewGraph[*schema.Message, []*schema.Message]()
	_ = g.AddToolsNode("tools", node)
	_ = g.AddEdge(compose.START, "tools")
	_ = g.AddEdge("tools", compose.END)
	r, err := g.Compile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rctx := budget.WithRun(ctx, budget.WithToolMaxAttempts("lookup", 1))
	if _, err := r.Invoke(rctx, callOf("c1", "lookup")); err != nil {
		t.Fatal(err)
	}
	_, err = r.Invoke(rctx, callOf("c2", "lookup"))
	var stop *turn.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindRunLimitExceeded {
		t.Fatalf("Invoke returned %v, want the *turn.Stop", err)
	}
}
