package logging_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/logging"
	"github.com/toolmw/toolmw/taxonomy"
)

// cancelBooking is the examples' tool: it takes 120ms and refuses.
func cancelBooking(clk *clock.Fake) toolmw.Tool {
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		clk.Advance(120 * time.Millisecond)
		return toolmw.Result{}, taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
	}
}

// A zerolog logger at INFO: one line per call, the refusal's kind and code
// but not its message.
func Example() {
	clk := clock.NewFake(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	logger := zerolog.New(os.Stdout).Level(zerolog.InfoLevel)

	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, cancelBooking(clk), logging.New(logger, logging.WithClock(clk)))

	_, _ = tool(toolmw.WithCallID(context.Background(), "call_42"), nil)
	// Output:
	// {"level":"info","tool":"cancel_booking","call_id":"call_42","outcome":"refused","kind":"tool-refused","code":"booking_not_cancellable","retryable":false,"attempts":1,"duration_ms":120,"message":"tool call"}
}

// The same tool logged through log/slog: the same fields at the same level,
// in slog's spelling. (The time is left out here only to keep the output
// stable; with a fake clock it would be the clock's.)
func ExampleNewSlog() {
	clk := clock.NewFake(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	noTime := func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			return slog.Attr{}
		}
		return a
	}
	logger := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: noTime}))

	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, cancelBooking(clk), logging.NewSlog(logger, logging.WithClock(clk)))

	_, _ = tool(toolmw.WithCallID(context.Background(), "call_42"), nil)
	// Output:
	// {"level":"INFO","msg":"tool call","tool":"cancel_booking","call_id":"call_42","outcome":"refused","kind":"tool-refused","code":"booking_not_cancellable","retryable":false,"attempts":1,"duration_ms":120}
}

// At DEBUG a failure gets a second line with the error's text, scrubbed:
// here the text of an untyped error that holds an e-mail address and a
// database password.
func ExampleNew_debug() {
	clk := clock.NewFake(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	logger := zerolog.New(os.Stdout) // at DEBUG, zerolog's default

	charge := func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		clk.Advance(3 * time.Millisecond)
		return toolmw.Result{}, errors.New("charge for jane@example.com: postgres://app:s3cr3t-pw@db:5432/ledger refused")
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "charge_card"}, charge, logging.New(logger, logging.WithClock(clk)))

	_, _ = tool(context.Background(), nil)
	// Output:
	// {"level":"error","tool":"charge_card","outcome":"failed","kind":"tool-failed","code":"unmapped_failure","retryable":false,"attempts":1,"duration_ms":3,"message":"tool call"}
	// {"level":"debug","tool":"charge_card","code":"unmapped_failure","error":"charge for [REDACTED:email]: postgres://[REDACTED:db_credentials]@db:5432/ledger refused","message":"tool call error detail"}
}

// Levels are slog levels for both backends; LevelOff writes no line. Here
// refusals are logged only when debugging, and permission denials as
// errors.
func ExampleWithLevel() {
	clk := clock.NewFake(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	logger := zerolog.New(os.Stdout).Level(zerolog.InfoLevel)
	mw := logging.New(logger, logging.WithClock(clk),
		logging.WithSuccessLevel(logging.LevelOff),
		logging.WithLevel(taxonomy.KindRefused, slog.LevelDebug),
		logging.WithLevel(taxonomy.KindNotPermitted, slog.LevelError),
	)
	refuse := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, cancelBooking(clk), mw)
	deny := toolmw.MustWrap(toolmw.Spec{Name: "delete_account"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.NotPermitted(taxonomy.CodeNotPermitted, "support agents may not delete accounts")
	}, mw)

	_, _ = refuse(context.Background(), nil)
	_, _ = deny(context.Background(), nil)
	// Output:
	// {"level":"error","tool":"delete_account","outcome":"not_permitted","kind":"tool-not-permitted","code":"not_permitted","retryable":false,"attempts":1,"duration_ms":0,"message":"tool call"}
}

// A bad option value is a typed error at start-up, from Validate and from
// Wrap.
func ExampleValidate() {
	opt := logging.WithSuccessLevel(slog.LevelWarn)
	fmt.Println(logging.Validate(opt))

	_, err := toolmw.Wrap(toolmw.Spec{Name: "cancel_booking"}, cancelBooking(clock.NewFake(time.Time{})), logging.NewSlog(slog.Default(), opt))
	fmt.Println(errors.Is(err, taxonomy.ErrDefinitionInvalid))
	// Output:
	// tool-definition-invalid option_invalid: logging: WithSuccessLevel(WARN): a success is logged at INFO or below, or not at all (LevelOff)
	// true
}
