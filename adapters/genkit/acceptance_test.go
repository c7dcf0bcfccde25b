package genkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/status"
	"github.com/firebase/genkit/go/genkit"

	"github.com/toolmw/toolmw"
	toolgenkit "github.com/toolmw/toolmw/adapters/genkit"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
)

type bookingIn struct {
	Booking string `json:"booking"`
}

type ratesIn struct {
	Currency string `json:"currency"`
}

// TestAcceptance is the scenario on Genkit's real generate loop:
// a scripted model calls a refusing tool, a transiently failing one and an
// unknown one in one turn, then a tool that needs approval. The refusal
// reaches the model once as a tool response, the transient failure is
// retried inside toolmw (the model sees one success; the tool ran twice),
// the unknown tool is answered tool-not-found, and the generation is not
// aborted: it pauses at the approval (FinishReason interrupted), and once
// the reviewer approves, resuming with the saved history runs the tool
// once and the model answers.
func TestAcceptance(t *testing.T) {
	desk := approval.NewDesk()
	box := newBox(t, middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("refund"))})
	var cancels, rates, refunds atomic.Int32
	register(t, box, toolmw.Spec{Name: "cancel_booking", Description: "Cancels a booking."}, func(ctx context.Context, in bookingIn) (string, error) {
		cancels.Add(1)
		return "", taxonomy.Refusal("booking_not_cancellable", "the booking is non-refundable")
	})
	register(t, box, toolmw.Spec{Name: "get_rates", Description: "Exchange rates.", Idempotent: true}, func(ctx context.Context, in ratesIn) (string, error) {
		if rates.Add(1) == 1 {
			return "", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the rates service is down")
		}
		return "EUR 1.08", nil
	})
	register(t, box, toolmw.Spec{Name: "refund", Description: "Refunds a booking."}, func(ctx context.Context, in bookingIn) (string, error) {
		refunds.Add(1)
		return "refunded " + in.Booking, nil
	})
	tools, err := toolgenkit.New(box)
	if err != nil {
		t.Fatal(err)
	}

	g := newGenkit(t)
	model, m := script(t, g,
		calls(call("cancel_booking", "c1", map[string]any{"booking": "BK-1"}),
			call("get_rates", "c2", map[string]any{"currency": "EUR"}),
			call("teleport", "c3", map[string]any{"to": "Mars"})),
		calls(call("refund", "c4", map[string]any{"booking": "BK-1"})),
		answer("Refunded BK-1; it could not be cancelled."))
	ctx := budget.WithRun(context.Background(), budget.WithID("run_acceptance"))

	resp, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("Cancel BK-1, or refund it."),
		ai.WithUse(tools), ai.WithMaxTurns(5))
	if err != nil {
		t.Fatalf("the generation failed: %v", err)
	}
	if resp.FinishReason != ai.FinishReasonInterrupted || len(resp.Interrupts()) != 1 {
		t.Fatalf("finish %q with %d interrupts, want interrupted with 1", resp.FinishReason, len(resp.Interrupts()))
	}
	id, ok := toolgenkit.Pending(resp.Interrupts()[0])
	if !ok || refunds.Load() != 0 {
		t.Fatalf("the interrupt is not a pending approval (%v), or the refund ran (%d)", resp.Interrupts()[0].Metadata, refunds.Load())
	}

	// What the model read after the first turn.
	reqs := model.seen()
	if len(reqs) != 2 {
		t.Fatalf("the model was asked %d times, want 2", len(reqs))
	}
	got := answers(t, reqs[1])
	if src, content := toolmwtest.Envelope(t, outputText(t, got["c1"])); src != "tool_refusal" || content != "booking_not_cancellable: the booking is non-refundable" {
		t.Errorf("the refusal reads %s %q", src, content)
	}
	if src, content := toolmwtest.Envelope(t, outputText(t, got["c2"])); src != "tool_result" || content != "EUR 1.08" || rates.Load() != 2 {
		t.Errorf("the rates read %s %q after %d runs, want the result after 2", src, content, rates.Load())
	}
	if src, content := toolmwtest.Envelope(t, outputText(t, got["c3"])); src != "tool_error" || content != "tool-not-found tool_not_found: no tool named teleport" {
		t.Errorf("the unknown tool reads %s %q", src, content)
	}

	// The app saves the conversation; a reviewer approves; the app
	// resumes from what it saved.
	history := roundTrip(t, resp.History())
	req, err := desk.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if err := desk.Approve(context.Background(), req, time.Hour); err != nil {
		t.Fatal(err)
	}
	resp, err = genkit.Generate(ctx, g, ai.WithModel(m), ai.WithMessages(history...),
		ai.WithToolRestarts(toolgenkit.Restarts(history)...), ai.WithUse(tools), ai.WithMaxTurns(5))
	if err != nil {
		t.Fatalf("the resumed generation failed: %v", err)
	}
	if resp.Text() != "Refunded BK-1; it could not be cancelled." || refunds.Load() != 1 || cancels.Load() != 1 {
		t.Fatalf("resumed: %q, %d refunds, %d cancellations; want the answer, 1 and 1", resp.Text(), refunds.Load(), cancels.Load())
	}
	reqs = model.seen()
	if src, content := toolmwtest.Envelope(t, outputText(t, answers(t, reqs[2])["c4"])); src != "tool_result" || content != "refunded BK-1" {
		t.Errorf("the refund reads %s %q", src, content)
	}
	// The refusal is in the conversation once, as a tool response.
	final := 0
	for _, msg := range resp.History() {
		for _, p := range msg.Content {
			if p.IsToolResponse() && strings.Contains(outputText(t, p.ToolResponse), "booking_not_cancellable") {
				final++
			}
		}
	}
	if final != 1 {
		t.Errorf("the refusal is in the final conversation %d times, want 1", final)
	}
}

// register registers a Typed tool in box.
func register[In any](t *testing.T, box *toolmw.Toolbox, spec toolmw.Spec, f func(context.Context, In) (string, error)) {
	t.Helper()
	if err := box.Register(spec, toolmw.Typed(f)); err != nil {
		t.Fatal(err)
	}
}

// roundTrip returns msgs as they read back from JSON, as a saved history.
func roundTrip(t *testing.T, msgs []*ai.Message) []*ai.Message {
	t.Helper()
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	var out []*ai.Message
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestResumeStillPending: resumed before the reviewer decided, the call
// interrupts again, and Genkit returns the interrupted response with a
// FAILED_PRECONDITION error; nothing ran. Resumed again from that
// response's conversation once approved, the call runs once.
func TestResumeStillPending(t *testing.T) {
	desk := approval.NewDesk()
	box := newBox(t, middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("refund"))})
	var refunds atomic.Int32
	register(t, box, toolmw.Spec{Name: "refund"}, func(ctx context.Context, in bookingIn) (string, error) {
		refunds.Add(1)
		return "refunded " + in.Booking, nil
	})
	tools, err := toolgenkit.New(box)
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	_, m := script(t, g, calls(call("refund", "r1", map[string]any{"booking": "BK-2"})), answer("Done."))
	ctx := budget.WithRun(context.Background(), budget.WithID("run_still_pending"))
	resume := func(history []*ai.Message) (*ai.ModelResponse, error) {
		return genkit.Generate(ctx, g, ai.WithModel(m), ai.WithMessages(history...),
			ai.WithToolRestarts(toolgenkit.Restarts(history)...), ai.WithUse(tools))
	}
	resp, err := resume([]*ai.Message{ai.NewUserTextMessage("Refund BK-2.")})
	if err != nil || resp.FinishReason != ai.FinishReasonInterrupted {
		t.Fatalf("%v, finish %q", err, resp.FinishReason)
	}
	resp, err = resume(roundTrip(t, resp.History()))
	if !errors.Is(err, status.ErrFailedPrecondition) || resp == nil || resp.FinishReason != ai.FinishReasonInterrupted || refunds.Load() != 0 {
		t.Fatalf("resumed while pending: %v, %+v, %d refunds", err, resp, refunds.Load())
	}
	id, ok := toolgenkit.Pending(resp.Interrupts()[0])
	if !ok {
		t.Fatal("the call no longer waits for its approval")
	}
	req, err := desk.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if err := desk.Approve(context.Background(), req, time.Hour); err != nil {
		t.Fatal(err)
	}
	resp, err = resume(roundTrip(t, resp.History()))
	if err != nil || resp.Text() != "Done." || refunds.Load() != 1 {
		t.Fatalf("resumed after the approval: %v, %q, %d refunds", err, resp.Text(), refunds.Load())
	}
}

// TestDenied: a call the reviewer denies, resumed, is answered
// approval-denied as a tool response, and the tool never runs; the
// generation goes on.
func TestDenied(t *testing.T) {
	desk := approval.NewDesk()
	box := newBox(t, middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("refund"))})
	var refunds atomic.Int32
	register(t, box, toolmw.Spec{Name: "refund"}, func(ctx context.Context, in bookingIn) (string, error) {
		refunds.Add(1)
		return "refunded", nil
	})
	tools, err := toolgenkit.New(box)
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	model, m := script(t, g, calls(call("refund", "r1", map[string]any{"booking": "BK-3"})), answer("It was not allowed."))
	ctx := budget.WithRun(context.Background(), budget.WithID("run_denied"))
	resp, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("Refund BK-3."), ai.WithUse(tools))
	if err != nil || resp.FinishReason != ai.FinishReasonInterrupted {
		t.Fatalf("%v, finish %q", err, resp.FinishReason)
	}
	id, _ := toolgenkit.Pending(resp.Interrupts()[0])
	req, err := desk.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if err := desk.Deny(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	history := roundTrip(t, resp.History())
	resp, err = genkit.Generate(ctx, g, ai.WithModel(m), ai.WithMessages(history...),
		ai.WithToolRestarts(toolgenkit.Restarts(history)...), ai.WithUse(tools))
	if err != nil || resp.Text() != "It was not allowed." || refunds.Load() != 0 {
		t.Fatalf("resumed: %v, %q, %d refunds", err, resp.Text(), refunds.Load())
	}
	src, content := toolmwtest.Envelope(t, outputText(t, answers(t, model.seen()[1])["r1"]))
	if src != "tool_error" || !strings.HasPrefix(content, "approval-denied approval_denied") {
		t.Errorf("the denied call reads %s %q", src, content)
	}
}
