package dedupe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/dedupe/dedupetest"
	"github.com/toolmw/toolmw/store"
)

func Example() {
	charges := 0
	pay := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		charges++
		return toolmw.Text(fmt.Sprintf("charge #%d accepted", charges)), nil
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, pay, dedupe.New())

	run := budget.WithRun(context.Background())
	// The model issues call_7, then issues it again.
	for range 2 {
		res, _ := tool(toolmw.WithCallID(run, "call_7"), json.RawMessage(`{"amount":10}`))
		fmt.Println(res.Content)
	}
	fmt.Println("charges:", charges)
	// Output:
	// charge #1 accepted
	// charge #1 accepted
	// charges: 1
}

// Two replicas share their call records in a Store (Redis, SQL, or here
// dedupetest's memory store): the run resumed on the second replica gets
// the first one's outcome, and the payment is made once.
func ExampleWithStore() {
	records := new(dedupetest.MemStore) // adapters/redisstate or adapters/sqlstore in production
	charges := 0
	pay := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		charges++
		return toolmw.Text(fmt.Sprintf("charge #%d accepted", charges)), nil
	}
	replicaA := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, pay, dedupe.New(dedupe.WithStore(records, store.WithTimeout(time.Second))))
	replicaB := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, pay, dedupe.New(dedupe.WithStore(records, store.WithTimeout(time.Second))))

	call := func(tool toolmw.Tool) {
		ctx := budget.WithRun(context.Background(), budget.WithID("run-2f6c"))
		res, err := tool(toolmw.WithCallID(ctx, "call_7"), json.RawMessage(`{"amount":10}`))
		fmt.Println(res.Content, err)
	}
	call(replicaA) // the first replica makes the call, then crashes
	call(replicaB) // the run resumes on the second
	fmt.Println("charges:", charges)
	// Output:
	// charge #1 accepted <nil>
	// charge #1 accepted <nil>
	// charges: 1
}
