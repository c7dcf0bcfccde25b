package cache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/cache"
	"github.com/toolmw/toolmw/middleware/fallback"
	"github.com/toolmw/toolmw/store/storetest"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	calls := 0
	rate := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		calls++
		return toolmw.Text(fmt.Sprintf("1 EUR = 11.%d NOK", calls)), nil
	}
	clk := clock.NewFake(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	tool := toolmw.MustWrap(toolmw.Spec{Name: "exchange_rate", Idempotent: true}, rate,
		cache.New(time.Minute, cache.WithSharedResults(), cache.WithClock(clk),
			cache.WithOnLookup(func(l cache.Lookup) { fmt.Println("  lookup:", l.Outcome, l.Source, l.Age) })))

	ask := func(args string) {
		res, _ := tool(context.Background(), json.RawMessage(args))
		fmt.Println(res.Content)
	}
	ask(`{"from":"EUR","to":"NOK"}`)
	clk.Advance(40 * time.Second)
	ask(`{"to":"NOK", "from":"EUR"}`) // the same arguments
	clk.Advance(30 * time.Second)
	ask(`{"from":"EUR","to":"NOK"}`) // past the TTL
	fmt.Println("calls:", calls)
	// Output:
	//   lookup: miss  0s
	// 1 EUR = 11.1 NOK
	//   lookup: hit memory 40s
	// 1 EUR = 11.1 NOK
	//   lookup: miss  0s
	// 1 EUR = 11.2 NOK
	// calls: 2
}

// A cache and a fallback given one store share their entries: here the
// result one replica's cache kept is the last good result another
// replica's fallback serves while its tool's circuit is open. Production
// code gives both layers a shared store, such as redisstate's Results.
func Example_sharedStore() {
	results := &storetest.MemResults{}
	spec := toolmw.Spec{Name: "exchange_rate", Idempotent: true}
	up := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("1 EUR = 11.5 NOK"), nil
	}
	down := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "the circuit is open")
	}
	replicaA := toolmw.MustWrap(spec, up, cache.New(time.Minute, cache.WithSharedResults(), cache.WithStore(results)))
	replicaB := toolmw.MustWrap(spec, down,
		fallback.New(fallback.WithLastGood(10*time.Minute), fallback.WithSharedResults(), fallback.WithStore(results)),
		cache.New(time.Minute, cache.WithSharedResults(), cache.WithStore(results)))

	args := json.RawMessage(`{"from":"EUR","to":"NOK"}`)
	res, _ := replicaA(context.Background(), args)
	fmt.Println("A:", res.Content)
	res, _ = replicaB(context.Background(), args) // B's cache finds A's result in the store
	fmt.Println("B:", res.Content)

	replicaC := toolmw.MustWrap(spec, down,
		fallback.New(fallback.WithLastGood(10*time.Minute), fallback.WithSharedResults(), fallback.WithStore(results)))
	res, _ = replicaC(context.Background(), args) // no cache: C's fallback serves it, marked
	m, orig, _ := fallback.Parse(res)
	fmt.Println("C:", m.Source, m.Kind, orig.Content)
	// Output:
	// A: 1 EUR = 11.5 NOK
	// B: 1 EUR = 11.5 NOK
	// C: last_good circuit-open 1 EUR = 11.5 NOK
}
