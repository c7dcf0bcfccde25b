package spend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/middleware/spend/spendtest"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	search := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("3 flights found"), nil
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search_flights"}, search,
		spend.New(spend.Fixed("search_flights", 0.40)))

	ctx := spend.ContextWithLimit(context.Background(), 1.00) // this run may spend 1.00
	for range 3 {
		res, err := tool(ctx, nil)
		if err != nil {
			info := taxonomy.InfoOf(err)
			fmt.Println(info.Kind, info.Code)
			fmt.Printf("limit %.2f, spent %.2f, left %.2f\n", info.Spend.Limit, info.Spend.Spent, info.Spend.Left)
			fmt.Println(info.Message)
			continue
		}
		fmt.Println(res.Content)
	}
	// Output:
	// 3 flights found
	// 3 flights found
	// budget-exceeded spend_limit
	// limit 1.00, spent 0.80, left 0.20
	// this call may cost up to 0.4, and the run has 0.2 of its spend limit left; nothing ran
}

// A metered tool reserves its maximum and is charged what its result says.
func ExampleMetered() {
	type usage struct {
		Cost float64 `json:"cost"`
	}
	summarise := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.JSON(usage{Cost: 0.12})
	}
	costOf := func(res toolmw.Result) float64 {
		var u usage
		if err := json.Unmarshal([]byte(res.Content), &u); err != nil {
			return -1 // unreadable: charged the maximum, and reported
		}
		return u.Cost
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "summarise"}, summarise,
		spend.New(spend.Metered("summarise", 0.50, costOf)))

	ctx := spend.ContextWithLimit(context.Background(), 1.00)
	if _, err := tool(ctx, nil); err != nil {
		fmt.Println(err)
	}
	acct, _ := spend.AccountFrom(ctx)
	fmt.Printf("spent %.2f, left %.2f\n", acct.Spent(), acct.Left())
	// Output:
	// spent 0.12, left 0.88
}

// Two replicas share a Store: the run's spend limit holds across them,
// each with its own Account of the same limit. The Store's failures would
// be reported as store.Errors.
func ExampleWithStore() {
	shared := &spendtest.MemStore{} // adapters/redisstate: Store.Spend()
	search := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("3 flights found"), nil
	}
	var replicas []toolmw.Tool
	for range 2 {
		replicas = append(replicas, toolmw.MustWrap(toolmw.Spec{Name: "search_flights"}, search,
			spend.New(spend.Fixed("search_flights", 0.40), spend.WithStore(shared,
				store.WithTimeout(100*time.Millisecond),
				store.WithOnError(func(e store.Error) { fmt.Println("store error:", e) })))))
	}
	for i := range 3 {
		// Each request of the run names it and carries its limit.
		ctx := budget.WithRun(spend.ContextWithLimit(context.Background(), 1.00), budget.WithID("run-7"))
		if _, err := replicas[i%2](ctx, nil); err != nil {
			fmt.Println(taxonomy.InfoOf(err).Message)
			continue
		}
		fmt.Println("searched")
	}
	// Output:
	// searched
	// searched
	// this call may cost up to 0.4, and the run has 0.2 of its spend limit left; nothing ran
}
