package runlimit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/runlimit/runlimittest"
	"github.com/toolmw/toolmw/store"
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

// Two replicas share a Store: the run's Once tool runs once in all. The
// Store's failures would be reported as store.Errors.
func ExampleWithStore() {
	shared := &runlimittest.MemStore{} // adapters/redisstate: Store.RunCalls()
	cancels := 0
	cancel := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		cancels++
		return toolmw.Text("booking cancelled"), nil
	}
	var replicas []toolmw.Tool
	for range 2 {
		replicas = append(replicas, toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, cancel,
			runlimit.New(runlimit.Once("cancel_booking"), runlimit.WithStore(shared,
				store.WithTimeout(100*time.Millisecond),
				store.WithOnError(func(e store.Error) { fmt.Println("store error:", e) })))))
	}
	for _, replica := range replicas {
		// Each request of the run names it; each replica has its own Run.
		run := budget.WithRun(context.Background(), budget.WithID("run-7"))
		if _, err := replica(run, nil); err != nil {
			fmt.Println(taxonomy.InfoOf(err).Code)
		}
	}
	fmt.Println("cancellations:", cancels)
	// Output:
	// run_call_limit
	// cancellations: 1
}
