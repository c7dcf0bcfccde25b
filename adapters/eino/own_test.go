package eino_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/toolmw/toolmw"
	tooleino "github.com/toolmw/toolmw/adapters/eino"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

// ownTools are the scenario's tools written for Eino (utils.InferTool), as
// an Eino user has them already; the counters count their executions.
type ownTools struct {
	tools                    []tool.BaseTool
	refusals, fares, cancels atomic.Int32
}

func newOwnTools(t testing.TB) *ownTools {
	t.Helper()
	o := &ownTools{}
	add := func(name, desc string, f func(context.Context, booking) (string, error)) {
		tl, err := utils.InferTool(name, desc, f)
		if err != nil {
			t.Fatal(err)
		}
		o.tools = append(o.tools, tl)
	}
	add("refund_booking", "Refunds a booking.", func(ctx context.Context, in booking) (string, error) {
		o.refusals.Add(1)
		return "", taxonomy.Refusal("booking_not_refundable", "this fare is non-refundable")
	})
	add("lookup_fare", "Looks up a booking's fare.", func(ctx context.Context, in booking) (string, error) {
		if o.fares.Add(1) == 1 {
			return "", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the fares service is down")
		}
		return "fare of " + in.Booking + ": 120 EUR", nil
	})
	add("cancel_booking", "Cancels a booking.", func(ctx context.Context, in booking) (string, error) {
		o.cancels.Add(1)
		return "cancelled " + in.Booking, nil
	})
	return o
}

// approvalStack is the default stack with the approval layer for
// cancel_booking, and no backoff between retries.
func approvalStack(t testing.TB, desk *approval.Desk) toolmw.Middleware {
	t.Helper()
	stack, err := middleware.Default(middleware.WithRetry(retry.WithBackoff(0, 0))).InsertBefore(middleware.Retry,
		middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("cancel_booking"))})
	if err != nil {
		t.Fatal(err)
	}
	return stack.Middleware()
}

// TestOwnToolsAcceptance is the scenario with the user's own Eino tools
// under a toolmw stack (Middleware as the agent's WrapToolCall): the
// same outcome as through a Toolbox.
func TestOwnToolsAcceptance(t *testing.T) {
	ctx := context.Background()
	desk := approval.NewDesk()
	own := newOwnTools(t)
	wrap := mustMiddleware(t, approvalStack(t, desk), tooleino.WithSpecs(toolmw.Spec{Name: "lookup_fare", Idempotent: true}))
	m := newScripted(theTurn, say("Done."))
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "travel", Description: "Handles bookings.", Model: m,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: own.tools, UnknownToolsHandler: tooleino.UnknownTool}},
		Middlewares: []adk.AgentMiddleware{{WrapToolCall: wrap}},
	})
	if err != nil {
		t.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, CheckPointStore: newMemStore()})
	events := drainEvents(t, runner.Query(ctx, "Refund or cancel BK-1.", adk.WithCheckPointID("own-1")))
	if err := eventErr(events); err != nil {
		t.Fatalf("the run ended with %v, want a pause", err)
	}
	intr := interrupted(events)
	if intr == nil {
		t.Fatal("the run did not pause")
	}
	pending := tooleino.Approvals(intr.InterruptContexts)
	if len(pending) != 1 || pending[0].Tool != "cancel_booking" || own.cancels.Load() != 0 {
		t.Fatalf("paused for %+v after %d cancellations, want cancel_booking and none", pending, own.cancels.Load())
	}
	// The tool events ADK emitted carry the envelopes, never the raw error.
	for _, ev := range events {
		if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Role == schema.Tool {
			envelope(t, ev.Output.MessageOutput.Message.Content)
		}
	}
	req, err := desk.Get(ctx, pending[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := desk.Approve(ctx, req, time.Hour); err != nil {
		t.Fatal(err)
	}
	it, err := runner.Resume(ctx, "own-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := eventErr(drainEvents(t, it)); err != nil {
		t.Fatal(err)
	}
	if r, f, c := own.refusals.Load(), own.fares.Load(), own.cancels.Load(); r != 1 || f != 2 || c != 1 {
		t.Fatalf("executions: refund %d, fare %d, cancel %d; want 1, 2, 1", r, f, c)
	}
	results := toolMessages(m.last())
	for id, w := range map[string]string{
		"call_refund":   "booking_not_refundable: this fare is non-refundable",
		"call_fare":     "fare of BK-1: 120 EUR",
		"call_cancel":   "cancelled BK-1",
		"call_teleport": "tool-not-found tool_not_found: no tool named teleport",
	} {
		if results[id] == nil {
			t.Fatalf("no result for %s", id)
		}
		if _, content := envelope(t, results[id].Content); content != w {
			t.Errorf("%s: the model read %q, want %q", id, content, w)
		}
	}
	if all := strings.Join(m.received(t), "\n"); strings.Contains(all, "LocalFunc") || strings.Contains(all, "fares service") {
		t.Error("the model saw an error's raw text")
	}
}

// TestOwnToolInterruptPassesThrough: an Eino interrupt the user's own tool
// returns (its own human-in-the-loop) passes through the stack untouched:
// not retried, not shown to the model; the run pauses on it, and resumes.
func TestOwnToolInterruptPassesThrough(t *testing.T) {
	ctx := context.Background()
	var runs atomic.Int32
	confirm, err := utils.InferTool("confirm", "Asks the user.", func(ctx context.Context, in booking) (string, error) {
		runs.Add(1)
		if was, _, _ := tool.GetInterruptState[any](ctx); !was {
			return "", tool.Interrupt(ctx, "please confirm "+in.Booking)
		}
		return "confirmed " + in.Booking, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wrap := mustMiddleware(t, middleware.Default(middleware.WithRetry(retry.WithBackoff(0, 0))).Middleware(),
		tooleino.WithSpecs(toolmw.Spec{Name: "confirm", Idempotent: true}))
	m := newScripted(calls("call_1", "confirm", `{"booking":"BK-9"}`), say("ok"))
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "a", Description: "d", Model: m,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{confirm}}},
		Middlewares: []adk.AgentMiddleware{{WrapToolCall: wrap}},
	})
	if err != nil {
		t.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, CheckPointStore: newMemStore()})
	events := drainEvents(t, runner.Query(ctx, "go", adk.WithCheckPointID("c")))
	intr := interrupted(events)
	if intr == nil || runs.Load() != 1 {
		t.Fatalf("the tool's interrupt: %v, %d runs; want a pause after one run", eventErr(events), runs.Load())
	}
	found := false
	for _, c := range intr.InterruptContexts {
		found = found || c.Info == "please confirm BK-9"
	}
	if !found || len(tooleino.Approvals(intr.InterruptContexts)) != 0 {
		t.Fatalf("the interrupt's contexts are not the tool's own")
	}
	it, err := runner.Resume(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if err := eventErr(drainEvents(t, it)); err != nil {
		t.Fatal(err)
	}
	if _, content := envelope(t, toolMessages(m.last())["call_1"].Content); content != "confirmed BK-9" || runs.Load() != 2 {
		t.Fatalf("resumed: %q after %d runs", content, runs.Load())
	}
}

// TestOwnToolsPerToolState: the stack wraps each tool once, by name, so
// its per-tool state lives across ToolsNodes (here a breaker that opens
// after one failure of flaky and stays closed for steady), and a bad tool
// name or more tools than WithMaxTools end the run with a definition
// error.
func TestOwnToolsPerToolState(t *testing.T) {
	ctx := context.Background()
	var flakyRuns atomic.Int32
	mk := func(name string, fail bool) tool.BaseTool {
		tl, err := utils.InferTool(name, "d", func(ctx context.Context, in booking) (string, error) {
			if fail {
				flakyRuns.Add(1)
				return "", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down")
			}
			return "ok", nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	stack := middleware.Default(middleware.WithRetry(retry.WithMaxAttempts(1)),
		middleware.WithBreaker(breakerOne()...)).Middleware()
	wrap := mustMiddleware(t, stack, tooleino.WithMaxTools(2))
	node := func(tools ...tool.BaseTool) *compose.ToolsNode {
		n, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: tools, ToolCallMiddlewares: []compose.ToolMiddleware{wrap}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	msg := func(name string) *schema.Message {
		return schema.AssistantMessage("", []schema.ToolCall{{ID: "c_" + name, Function: schema.FunctionCall{Name: name, Arguments: "{}"}}})
	}
	if out, err := node(mk("flaky", true)).Invoke(ctx, msg("flaky")); err != nil || !strings.Contains(out[0].Content, "upstream_unavailable") {
		t.Fatalf("first node: %v %v", out, err)
	}
	// A new node, the same tool name: its breaker is open.
	_, err := node(mk("flaky", true), mk("steady", false)).Invoke(ctx, msg("flaky"))
	if err == nil || !errors.Is(err, taxonomy.ErrCircuitOpen) {
		t.Fatalf("the second node's call of flaky ended with %v, want the circuit-open stop", err)
	}
	if flakyRuns.Load() != 1 {
		t.Fatalf("flaky ran %d times, want once: its breaker is per tool name, across nodes", flakyRuns.Load())
	}
	if out, err := node(mk("steady", false)).Invoke(ctx, msg("steady")); err != nil || !strings.Contains(out[0].Content, "ok") {
		t.Fatalf("steady: %v %v", out, err)
	}
	// A third name is one more than WithMaxTools(2).
	_, err = node(mk("third", false)).Invoke(ctx, msg("third"))
	if !errors.Is(err, taxonomy.ErrDefinitionInvalid) {
		t.Fatalf("a third tool ended with %v, want tool-definition-invalid", err)
	}
}
