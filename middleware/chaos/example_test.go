package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/budget/budgettest"
	"github.com/toolmw/toolmw/middleware/chaos"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	// A supplier's search, healthy in this test.
	search := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("3 flights"), nil
	}
	// Rehearse a supplier that answers 429 to a third of the calls.
	throttled := taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeUpstreamRateLimited, "too many requests").
		WithRetryAfter(time.Millisecond)
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search_flights", Idempotent: true}, search,
		retry.New(retry.WithMaxAttempts(2), retry.WithBackoff(0, 0)),
		chaos.New(chaos.WithSeed(43), chaos.WithFault(chaos.Failure(throttled), 0.33),
			chaos.WithOnInject(func(i chaos.Injection) {
				fmt.Printf("injected %s into %s, attempt %d\n", i.Fault, i.CallID, i.Attempt)
			})))

	// Only this run rehearses: its context enables chaos.
	run := chaos.Enable(budget.WithRun(context.Background(), budget.WithID("rehearsal-1")))
	for _, id := range []string{"call_1", "call_2", "call_3", "call_4", "call_5"} {
		res, err := tool(toolmw.WithCallID(run, id), nil)
		if err != nil {
			fmt.Println(id, "failed:", taxonomy.InfoOf(err).Code)
			continue
		}
		fmt.Println(id, res.Content)
	}
	// Another run is left alone.
	_, err := tool(context.Background(), nil)
	fmt.Println("not rehearsing:", err)
	// Output:
	// injected failure into call_1, attempt 1
	// call_1 3 flights
	// call_2 3 flights
	// call_3 3 flights
	// call_4 3 flights
	// injected failure into call_5, attempt 1
	// injected failure into call_5, attempt 2
	// call_5 failed: upstream_rate_limited
	// not rehearsing: <nil>
}

// A shared store that is down, rehearsed: the run budget's store fails,
// and the call is decided on local state, as in a real outage.
func ExampleNewStoreFaults() {
	faults, err := chaos.NewStoreFaults(chaos.WithEnabled(true),
		chaos.WithStoreFault(chaos.StoreFailure(nil), 1, "run_budget"))
	if err != nil {
		fmt.Println(err)
		return
	}
	shared := faults.RunStore(&budgettest.MemRunStore{}) // Redis, in production
	ctx := budget.WithRun(context.Background(), budget.WithID("run-7"), budget.WithRunStore(shared))

	var seen toolmw.Call
	search := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		seen, _ = toolmw.CallFrom(ctx)
		return toolmw.Text("3 flights"), nil
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search_flights"}, search, retry.New())
	res, err := tool(ctx, nil)
	fmt.Println(res.Content, err)
	fmt.Println("degraded:", seen.Degraded, "chaos:", seen.Chaos)
	// Output:
	// 3 flights <nil>
	// degraded: run_budget chaos: store_failure
}
