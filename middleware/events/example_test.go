package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	print := events.SinkFunc(func(e events.Event) {
		b, _ := json.Marshal(e)
		fmt.Println(string(b))
	})
	em := events.NewEmitter(print, events.WithClock(clock.NewFake(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))))

	cancel := func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, cancel, em.Middleware())

	_, _ = tool(toolmw.WithCallID(context.Background(), "call_42"), nil)
	_ = em.Flush(context.Background()) // at shutdown: deliver what is queued
	// Output:
	// {"type":"tool_error","time":"2025-01-02T03:04:05Z","tool":"cancel_booking","call_id":"call_42","outcome":"refused","kind":"tool-refused","code":"booking_not_cancellable","retryable":false,"attempts":1,"told":"\u003cuntrusted-data source=\"tool_refusal\"\u003ebooking_not_cancellable: this fare is non-refundable\u003c/untrusted-data\u003e"}
}
