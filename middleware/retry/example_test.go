package retry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	// A supplier API that is briefly unavailable twice, then answers.
	failures := 2
	search := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		call, _ := toolmw.CallFrom(ctx)
		fmt.Println("attempt", call.Attempt)
		if failures > 0 {
			failures--
			return toolmw.Result{}, taxonomy.Transient("supplier_unavailable", "supplier is down")
		}
		return toolmw.Text("3 flights"), nil
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search_flights"}, search,
		retry.New(retry.WithMaxAttempts(3), retry.WithBackoff(time.Millisecond, 10*time.Millisecond)))

	res, err := tool(context.Background(), nil)
	fmt.Println(res.Content, err)
	// Output:
	// attempt 1
	// attempt 2
	// attempt 3
	// 3 flights <nil>
}

// A refusal is an answer: it is returned at once, never retried.
func Example_refusal() {
	cancel := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		fmt.Println("cancelling")
		return toolmw.Result{}, taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, cancel, retry.New())

	_, err := tool(context.Background(), nil)
	fmt.Println(err)
	// Output:
	// cancelling
	// cancel_booking: tool-refused booking_not_cancellable: this fare is non-refundable
}

// A RetryAfter that would end past the deadline is not slept through.
func Example_deadline() {
	busy := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Transient("supplier_busy", "try later").WithRetryAfter(20 * time.Second)
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search_flights"}, busy, retry.New())

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := tool(ctx, nil)
	info := taxonomy.InfoOf(err)
	fmt.Println(info.Kind, info.Code, info.Retryable, time.Duration(info.RetryAfter))
	// Output:
	// tool-failed retry_wait_past_deadline false 20s
}
