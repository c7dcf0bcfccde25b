package openai_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/toolmw/toolmw"
	toolopenai "github.com/toolmw/toolmw/adapters/openai"
	"github.com/toolmw/toolmw/adapters/openai/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/taxonomy"
)

type bookingIn struct {
	Booking string `json:"booking"`
}

// TestApprovalPausesTheLoop: the model asks to cancel a booking (gated by
// the approval layer) and look up a city in one turn. The turn stops with
// an approval-pending Stop naming the request; the loop does not answer
// the model. A reviewer approves; the same message is run again with the
// same run and call ids: the cancellation runs once, the lookup is answered
// from dedupe's record, and the loop goes on to the model's answer.
func TestApprovalPausesTheLoop(t *testing.T) {
	var cancels, lookups atomic.Int32
	desk := approval.NewDesk()
	stack, err := middleware.Default().InsertBefore(middleware.Retry,
		middleware.Layer{Name: middleware.Dedupe, Middleware: dedupe.New()})
	if err != nil {
		t.Fatal(err)
	}
	stack, err = stack.InsertBefore(middleware.Retry,
		middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("cancel_booking"))})
	if err != nil {
		t.Fatal(err)
	}
	box := toolmw.NewToolbox(stack.Middleware())
	if err := box.Register(toolmw.Spec{Name: "cancel_booking"}, toolmw.Typed(func(ctx context.Context, in bookingIn) (string, error) {
		cancels.Add(1)
		return "cancelled " + in.Booking, nil
	})); err != nil {
		t.Fatal(err)
	}
	if err := box.Register(toolmw.Spec{Name: "lookup", Idempotent: true}, toolmw.Typed(func(ctx context.Context, in cityIn) (string, error) {
		lookups.Add(1)
		return "lookup " + in.City, nil
	})); err != nil {
		t.Fatal(err)
	}
	rp := replay.New("/v1/chat/completions",
		replay.ChatToolCalls(
			replay.ToolCall{ID: "call_c1", Name: "cancel_booking", Arguments: `{"booking":"BK-1042"}`},
			replay.ToolCall{ID: "call_l1", Name: "lookup", Arguments: `{"city":"Oslo"}`}),
		replay.ChatAnswer("Cancelled, and Oslo looked up."))
	tools, err := toolopenai.New(box)
	if err != nil {
		t.Fatal(err)
	}
	client := serve(t, rp)
	ctx := budget.WithRun(context.Background(), budget.WithID("run_7f3a"))
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT5_4Mini,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Cancel BK-1042 and look up Oslo.")},
		Tools:    tools.ForChat(),
	}
	reply, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	msg := reply.Choices[0].Message

	_, err = tools.CallChat(ctx, msg.ToolCalls)
	var stop *toolopenai.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindApprovalPending || len(stop.Approvals) != 1 || !errors.Is(err, taxonomy.ErrApprovalPending) {
		t.Fatalf("turn ended with %v, want an approval-pending Stop with one approval", err)
	}
	if cancels.Load() != 0 || lookups.Load() != 1 {
		t.Fatalf("before the decision: %d cancellations, %d lookups; want 0 and 1", cancels.Load(), lookups.Load())
	}

	req, err := desk.Get(context.Background(), stop.Approvals[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := desk.Approve(context.Background(), req, time.Hour); err != nil {
		t.Fatal(err)
	}

	turn, err := tools.CallChat(ctx, msg.ToolCalls) // the same message, run again
	if err != nil {
		t.Fatalf("the resumed turn: %v", err)
	}
	if cancels.Load() != 1 || lookups.Load() != 1 {
		t.Fatalf("after the decision: %d cancellations, %d lookups; want 1 and 1 (dedupe answers the lookup)", cancels.Load(), lookups.Load())
	}
	for _, c := range turn.Calls {
		if c.Err != nil {
			t.Errorf("call %s: %v", c.CallID, c.Err)
		}
	}
	params.Messages = append(params.Messages, msg.ToParam())
	params.Messages = append(params.Messages, turn.Messages()...)
	final, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := final.Choices[0].Message.Content; got != "Cancelled, and Oslo looked up." {
		t.Errorf("answer %q", got)
	}
}
