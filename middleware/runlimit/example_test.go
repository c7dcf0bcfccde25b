package runlimit_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	cancels := 0
	cancel := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		cancels++
		return toolmw.Text("booking cancelled"), nil
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, cancel,
		runlimit.New(runlimit.Once("cancel_booking")))

	run := budget.WithRun(context.Background())
	// The model cancels, then, re-planning, tries to cancel again.
	for range 2 {
		res, err := tool(run, json.RawMessage(`{"booking":"B-1"}`))
		if err != nil {
			info := taxonomy.InfoOf(err)
			fmt.Println(info.Kind, info.Code, "retry:", !info.Final && info.Retryable)
			continue
		}
		fmt.Println(res.Content)
	}
	fmt.Println("cancellations:", cancels)
	// Output:
	// booking cancelled
	// run-limit-exceeded run_call_limit retry: false
	// cancellations: 1
}
