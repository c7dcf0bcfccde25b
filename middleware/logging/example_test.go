package logging_test

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/logging"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	clk := clock.NewFake(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	logger := zerolog.New(os.Stdout).Level(zerolog.InfoLevel)

	cancel := func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		clk.Advance(120 * time.Millisecond)
		return toolmw.Result{}, taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, cancel, logging.New(logger, logging.WithClock(clk)))

	_, _ = tool(toolmw.WithCallID(context.Background(), "call_42"), nil)
	// Output:
	// {"level":"info","tool":"cancel_booking","call_id":"call_42","outcome":"declined","kind":"tool-refused","code":"booking_not_cancellable","retryable":false,"attempts":1,"duration_ms":120,"message":"tool call"}
}
