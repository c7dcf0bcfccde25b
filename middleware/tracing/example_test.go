package tracing_test

import (
	"context"
	"encoding/json"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	cancel := func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking", Description: "Cancels a booking."}, cancel, tracing.New(tracing.WithTracerProvider(tp), tracing.WithCodes("booking_not_cancellable")))

	ctx := toolmw.WithCallID(context.Background(), "call_42")
	_, _ = tool(ctx, json.RawMessage(`{"booking":"ABC123"}`))

	s := spans.GetSpans()[0]
	fmt.Println(s.Name)
	for _, kv := range s.Attributes {
		fmt.Printf("%s=%s\n", kv.Key, kv.Value.String())
	}
	// A refusal is an answer, not an error of the call: the code is in
	// toolmw.error.code, and neither error.type nor the status says error.
	fmt.Println("status:", s.Status.Code)
	// Output:
	// execute_tool cancel_booking
	// gen_ai.operation.name=execute_tool
	// gen_ai.tool.name=cancel_booking
	// gen_ai.tool.type=function
	// gen_ai.tool.description=Cancels a booking.
	// gen_ai.tool.call.id=call_42
	// toolmw.outcome=refused
	// toolmw.attempts=1
	// toolmw.error.kind=tool-refused
	// toolmw.error.code=booking_not_cancellable
	// toolmw.retryable=false
	// status: Unset
}
