package fallback_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/fallback"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	// The supplier answers once, then its circuit is open.
	up := true
	search := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		if up {
			return toolmw.Text("3 flights from 89 EUR"), nil
		}
		return toolmw.Result{}, taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "the supplier's circuit is open")
	}
	clk := clock.NewFake(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search_flights", Idempotent: true}, search,
		fallback.New(fallback.WithLastGood(10*time.Minute), fallback.WithSharedResults(), fallback.WithClock(clk)))

	args := json.RawMessage(`{"from":"OSL","to":"LHR"}`)
	res, _ := tool(context.Background(), args)
	fmt.Println(res.Content)

	up = false
	clk.Advance(90 * time.Second)
	res, err := tool(context.Background(), json.RawMessage(`{"to":"LHR", "from":"OSL"}`)) // the same arguments
	fmt.Println(res.Content, err)

	m, orig, _ := fallback.Parse(res)
	fmt.Println(m.Source, m.Kind, m.Age, orig.Content)
	// Output:
	// 3 flights from 89 EUR
	// [toolmw fallback source=last_good kind=circuit-open code=circuit_open age=90s] The tool is unavailable right now; this is its last good result for the same arguments, 90s old, not a fresh one.
	// 3 flights from 89 EUR <nil>
	// last_good circuit-open 1m30s 3 flights from 89 EUR
}

func Example_function() {
	busy := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeRateLimited, "no token")
	}
	noData := func(_ context.Context, _ toolmw.Call, _ json.RawMessage, _ error) (toolmw.Result, error) {
		return toolmw.JSON(map[string]any{"flights": []string{}, "hint": "ask again in a minute"})
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search_flights"}, busy, fallback.New(fallback.WithFunc(noData)))
	res, err := tool(context.Background(), nil)
	fmt.Println(res.Content, res.JSON, err)
	// Output:
	// {"toolmw_fallback":{"source":"function","kind":"rate-limited","code":"rate_limited","note":"The tool is rate-limited right now; this is a substitute, not the tool's result."},"result":{"flights":[],"hint":"ask again in a minute"}} true <nil>
}
