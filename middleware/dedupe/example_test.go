package dedupe_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/dedupe"
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
