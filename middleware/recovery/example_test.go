package recovery_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/recovery"
)

func Example() {
	debugLog := func(_ context.Context, e recovery.PanicEvent) {
		fmt.Printf("debug: %s (call %s, attempt %d) panicked: %v\n", e.Tool, e.CallID, e.Attempt, e.Value)
	}
	lookup := toolmw.MustWrap(toolmw.Spec{Name: "lookup"}, func(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
		var hits []string
		return toolmw.Text(hits[len(args)]), nil // a bug: panics
	}, recovery.New(recovery.WithOnPanic(debugLog)))

	ctx := toolmw.WithCallID(context.Background(), "call_1")
	res, err := lookup(ctx, json.RawMessage(`{}`))
	fmt.Println(err)
	fmt.Println(toolmw.ForModel(res, err))
	// Output:
	// debug: lookup (call call_1, attempt 1) panicked: runtime error: index out of range [2] with length 0
	// lookup: tool-failed tool_panicked: the tool panicked
	// <untrusted-data source="tool_error">tool-failed tool_panicked: the tool panicked</untrusted-data>
}
