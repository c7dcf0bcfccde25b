package eino_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/toolmw/toolmw"
	tooleino "github.com/toolmw/toolmw/adapters/eino"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

// booking is the input of the booking tools.
type booking struct {
	Booking string `json:"booking" jsonschema:"The booking reference"`
}

// travelBox is the acceptance scenario's box: a refusing tool, a tool that
// fails once with a transient error, and a tool that needs approval, under
// the default stack with the approval layer. The counters count the tools'
// executions.
type travelBox struct {
	box                      *toolmw.Toolbox
	desk                     *approval.Desk
	refusals, fares, cancels atomic.Int32
}

func newTravelBox(t testing.TB, desk *approval.Desk, cancel func(ctx context.Context, in booking) (string, error)) *travelBox {
	t.Helper()
	tb := &travelBox{desk: desk}
	stack, err := middleware.Default(middleware.WithRetry(retry.WithBackoff(0, 0))).InsertBefore(middleware.Retry,
		middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("cancel_booking"))})
	if err != nil {
		t.Fatal(err)
	}
	tb.box = toolmw.NewToolbox(stack.Middleware())
	register := func(spec toolmw.Spec, f func(context.Context, booking) (string, error)) {
		if err := tb.box.Register(spec, toolmw.Typed(f)); err != nil {
			t.Fatal(err)
		}
	}
	register(toolmw.Spec{Name: "refund_booking", Description: "Refunds a booking."}, func(ctx context.Context, in booking) (string, error) {
		tb.refusals.Add(1)
		return "", taxonomy.Refusal("booking_not_refundable", "this fare is non-refundable")
	})
	register(toolmw.Spec{Name: "lookup_fare", Description: "Looks up a booking's fare.", Idempotent: true}, func(ctx context.Context, in booking) (string, error) {
		if tb.fares.Add(1) == 1 {
			return "", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the fares service is down")
		}
		return "fare of " + in.Booking + ": 120 EUR", nil
	})
	if cancel == nil {
		cancel = func(ctx context.Context, in booking) (string, error) { return "cancelled " + in.Booking, nil }
	}
	register(toolmw.Spec{Name: "cancel_booking", Description: "Cancels a booking."}, func(ctx context.Context, in booking) (string, error) {
		tb.cancels.Add(1)
		return cancel(ctx, in)
	})
	return tb
}

// theTurn is the model's first turn of the scenario: the four calls at
// once.
var theTurn = calls(
	"call_refund", "refund_booking", `{"booking":"BK-1"}`,
	"call_fare", "lookup_fare", `{"booking":"BK-1"}`,
	"call_cancel", "cancel_booking", `{"booking":"BK-1"}`,
	"call_teleport", "teleport", `{"to":"Mars"}`,
)

// newAgent builds the agent the ADK's usual way, with the box's tools:
// the README's glue.
func newAgent(t testing.TB, box tooleino.Box, m *scripted) *adk.ChatModelAgent {
	t.Helper()
	ctx := context.Background()
	tools, err := tooleino.New(box)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:        "travel",
		Description: "Handles bookings.",
		Instruction: "You handle travel bookings.",
		Model:       m,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: tools.NodeConfig()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return agent
}

// TestAcceptance is the scenario on the ADK's ChatModelAgent and
// Runner with a checkpoint store: one model turn calls a refusing tool, a
// transiently failing tool, a tool that needs approval and an unknown tool.
// The run pauses (an interrupt naming the approval) with nothing of the
// gated tool run; a reviewer approves; Runner.Resume makes the gated call
// again, which runs once. The model then sees four tool results: the
// refusal once, the fare (the tool ran twice, retried inside toolmw), the
// cancellation, and the unknown tool answered typed. The run is never
// aborted.
func TestAcceptance(t *testing.T) {
	ctx := context.Background()
	desk := approval.NewDesk()
	tb := newTravelBox(t, desk, nil)
	m := newScripted(theTurn, say("Done: refund refused, fare 120 EUR, booking cancelled."))
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: newAgent(t, tb.box, m), CheckPointStore: newMemStore()})

	events := drainEvents(t, runner.Query(ctx, "Refund or cancel BK-1.", adk.WithCheckPointID("conv-1")))
	if err := eventErr(events); err != nil {
		t.Fatalf("the run ended with %v, want a pause", err)
	}
	intr := interrupted(events)
	if intr == nil {
		t.Fatal("the run did not pause")
	}
	pending := tooleino.Approvals(intr.InterruptContexts)
	if len(pending) != 1 || pending[0].Tool != "cancel_booking" || pending[0].CallID != "call_cancel" || !strings.HasPrefix(pending[0].ID, "apr_") {
		t.Fatalf("the interrupt names %+v, want the cancel_booking call", pending)
	}
	if tb.cancels.Load() != 0 {
		t.Fatal("the gated tool ran before its approval")
	}
	if n := len(m.received(t)); n != 1 {
		t.Fatalf("the model was asked %d times before the pause, want 1", n)
	}

	req, err := desk.Get(ctx, pending[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(req.Summary, "BK-1") {
		t.Errorf("the request's summary %q does not show the booking", req.Summary)
	}
	if err := desk.Approve(ctx, req, time.Hour); err != nil {
		t.Fatal(err)
	}
	it, err := runner.Resume(ctx, "conv-1")
	if err != nil {
		t.Fatal(err)
	}
	events = drainEvents(t, it)
	if err := eventErr(events); err != nil {
		t.Fatalf("the resumed run ended with %v", err)
	}
	if intr := interrupted(events); intr != nil {
		t.Fatalf("the resumed run paused again: %+v", intr)
	}
	final := events[len(events)-1].Output.MessageOutput.Message
	if final.Role != schema.Assistant || !strings.HasPrefix(final.Content, "Done") {
		t.Fatalf("the last event is %+v, want the model's answer", final)
	}

	if r, f, c := tb.refusals.Load(), tb.fares.Load(), tb.cancels.Load(); r != 1 || f != 2 || c != 1 {
		t.Fatalf("executions: refund %d, fare %d, cancel %d; want 1, 2 (one retry), 1", r, f, c)
	}
	results := toolMessages(m.last())
	if len(results) != 4 {
		t.Fatalf("the model received %d tool results, want 4", len(results))
	}
	want := map[string][2]string{
		"call_refund":   {toolmw.SourceRefusal, "booking_not_refundable: this fare is non-refundable"},
		"call_fare":     {toolmw.SourceResult, "fare of BK-1: 120 EUR"},
		"call_cancel":   {toolmw.SourceResult, "cancelled BK-1"},
		"call_teleport": {toolmw.SourceError, "tool-not-found tool_not_found: no tool named teleport"},
	}
	for id, w := range want {
		source, content := envelope(t, results[id].Content)
		if source != w[0] || content != w[1] {
			t.Errorf("%s: the model read %s %q, want %s %q", id, source, content, w[0], w[1])
		}
	}
	// The refusal reached the model once, as one tool result.
	all := strings.Join(m.received(t), "\n")
	if n := strings.Count(all, "booking_not_refundable"); n != 1 {
		t.Errorf("the refusal reached the model %d times, want 1", n)
	}
	if strings.Contains(all, "fares service is down") {
		t.Error("the model saw the transient failure that toolmw retried")
	}
}

// TestApprovalPendingAndDenied: resuming before the reviewer decides
// pauses the run again on the same request; once denied, the resumed call
// is answered approval-denied, a tool result, and the tool never runs.
func TestApprovalPendingAndDenied(t *testing.T) {
	ctx := context.Background()
	desk := approval.NewDesk()
	tb := newTravelBox(t, desk, nil)
	m := newScripted(calls("call_cancel", "cancel_booking", `{"booking":"BK-7"}`), say("Not cancelled."))
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: newAgent(t, tb.box, m), CheckPointStore: newMemStore()})
	intr := interrupted(drainEvents(t, runner.Query(ctx, "Cancel BK-7.", adk.WithCheckPointID("conv-7"))))
	if intr == nil {
		t.Fatal("the run did not pause")
	}
	first := tooleino.Approvals(intr.InterruptContexts)
	it, err := runner.Resume(ctx, "conv-7")
	if err != nil {
		t.Fatal(err)
	}
	intr = interrupted(drainEvents(t, it))
	if intr == nil {
		t.Fatal("resumed before a decision, the run did not pause again")
	}
	again := tooleino.Approvals(intr.InterruptContexts)
	if len(first) != 1 || len(again) != 1 || again[0] != first[0] {
		t.Fatalf("paused again on %+v, want the same request as %+v", again, first)
	}
	req, err := desk.Get(ctx, first[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := desk.Deny(ctx, req); err != nil {
		t.Fatal(err)
	}
	it, err = runner.Resume(ctx, "conv-7")
	if err != nil {
		t.Fatal(err)
	}
	if err := eventErr(drainEvents(t, it)); err != nil {
		t.Fatal(err)
	}
	source, content := envelope(t, toolMessages(m.last())["call_cancel"].Content)
	if source != toolmw.SourceError || !strings.HasPrefix(content, "approval-denied approval_denied") || tb.cancels.Load() != 0 {
		t.Fatalf("the denied call: %s %q after %d runs", source, content, tb.cancels.Load())
	}
}
