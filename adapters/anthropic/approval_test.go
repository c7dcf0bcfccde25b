package anthropic_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
)

// TestApprovalPausesTheTurn: a tool_use of a gated tool stops the turn
// with an approval-pending Stop naming the request, and nothing ran; once
// a reviewer approves, the same content run again with the same run runs
// the tool once and answers the block.
func TestApprovalPausesTheTurn(t *testing.T) {
	var cancels atomic.Int32
	desk := approval.NewDesk()
	stack, err := middleware.Default().InsertBefore(middleware.Retry,
		middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("cancel_booking"))})
	if err != nil {
		t.Fatal(err)
	}
	box := toolmw.NewToolbox(stack.Middleware())
	if err := box.Register(toolmw.Spec{Name: "cancel_booking"}, toolmw.Typed(func(ctx context.Context, in struct {
		Booking string `json:"booking"`
	}) (string, error) {
		cancels.Add(1)
		return "cancelled " + in.Booking, nil
	})); err != nil {
		t.Fatal(err)
	}
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	rp := replay.New("/v1/messages", replay.ToolUses("", replay.ToolUse{ID: "toolu_01Cancel00000000000001", Name: "cancel_booking", Input: `{"booking":"BK-1042"}`}))
	ctx := budget.WithRun(context.Background(), budget.WithID("run_7f3a"))
	client := serve(t, rp)
	msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{
		Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024, Tools: tools.Params(),
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Cancel BK-1042."))},
	})
	if err != nil {
		t.Fatal(err)
	}

	_, err = tools.Call(ctx, msg.Content)
	var stop *toolanthropic.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindApprovalPending || len(stop.Approvals) != 1 || cancels.Load() != 0 {
		t.Fatalf("turn ended with %v after %d cancellations, want an approval-pending Stop and none", err, cancels.Load())
	}
	req, err := desk.Get(context.Background(), stop.Approvals[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := desk.Approve(context.Background(), req, time.Hour); err != nil {
		t.Fatal(err)
	}
	turn, err := tools.Call(ctx, msg.Content)
	if err != nil || cancels.Load() != 1 || len(turn.Calls) != 1 || turn.Calls[0].Err != nil {
		t.Fatalf("the resumed turn: %v, %d cancellations", err, cancels.Load())
	}
}
