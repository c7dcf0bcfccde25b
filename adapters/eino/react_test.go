package eino_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	tooleino "github.com/toolmw/toolmw/adapters/eino"
	"github.com/toolmw/toolmw/middleware/approval"
)

// TestReactAgent: the scenario on the react agent (flow/agent/react),
// its graph exported into a graph compiled with a checkpoint store (the
// react agent compiles its own without one): the run pauses for the
// approval, and invoking the graph again with its checkpoint id resumes
// it; the gated tool runs once, the refusal and the unknown tool are tool
// results, the transient failure was retried.
func TestReactAgent(t *testing.T) {
	ctx := context.Background()
	desk := approval.NewDesk()
	tb := newTravelBox(t, desk, nil)
	m := newScripted(theTurn, say("Done."))
	tools, err := tooleino.New(tb.box)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{ToolCallingModel: m, ToolsConfig: tools.NodeConfig()})
	if err != nil {
		t.Fatal(err)
	}
	inner, opts := agent.ExportGraph()
	g := compose.NewGraph[[]*schema.Message, *schema.Message]()
	if err := g.AddGraphNode("react", inner, opts...); err != nil {
		t.Fatal(err)
	}
	_ = g.AddEdge(compose.START, "react")
	_ = g.AddEdge("react", compose.END)
	r, err := g.Compile(ctx, compose.WithCheckPointStore(newMemStore()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Invoke(ctx, []*schema.Message{schema.UserMessage("Refund or cancel BK-1.")}, compose.WithCheckPointID("react-1"))
	info, ok := compose.ExtractInterruptInfo(err)
	if !ok {
		t.Fatalf("the react run ended with %v, want an interrupt", err)
	}
	pending := tooleino.Approvals(info.InterruptContexts)
	if len(pending) != 1 || tb.cancels.Load() != 0 {
		t.Fatalf("paused for %+v after %d cancellations", pending, tb.cancels.Load())
	}
	req, err := desk.Get(ctx, pending[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := desk.Approve(ctx, req, time.Hour); err != nil {
		t.Fatal(err)
	}
	out, err := r.Invoke(ctx, nil, compose.WithCheckPointID("react-1"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Content != "Done." {
		t.Fatalf("the react agent answered %q", out.Content)
	}
	if r, f, c := tb.refusals.Load(), tb.fares.Load(), tb.cancels.Load(); r != 1 || f != 2 || c != 1 {
		t.Fatalf("executions: refund %d, fare %d, cancel %d; want 1, 2, 1", r, f, c)
	}
	results := toolMessages(m.last())
	if len(results) != 4 || !strings.Contains(results["call_cancel"].Content, "cancelled BK-1") ||
		!strings.Contains(results["call_teleport"].Content, "tool_not_found") {
		t.Fatalf("the model read %d results: %+v", len(results), results)
	}
}
