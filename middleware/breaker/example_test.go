package breaker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/breaker/breakertest"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	// One breaker for every tool behind the payments API.
	clk := clock.NewFake(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	payments := breaker.NewBreaker("payments",
		breaker.WithClock(clk),
		breaker.WithOpenFor(30*time.Second),
		breaker.WithOnStateChange(func(e breaker.StateChangeEvent) {
			fmt.Printf("%s breaker %s: %v -> %v after %d failures in a row\n",
				e.Time.Format(time.TimeOnly), e.Name, e.From, e.To, e.Counts.ConsecutiveFailures)
		}))
	mw := breaker.New(breaker.WithShared(payments))

	charge := toolmw.MustWrap(toolmw.Spec{Name: "charge"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "payments API unreachable")
	}, mw)
	refund := toolmw.MustWrap(toolmw.Spec{Name: "refund"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("refunded"), nil
	}, mw)

	ctx := context.Background()
	for range breaker.DefaultConsecutiveFailures {
		charge(ctx, nil)
	}
	clk.Advance(10 * time.Second)
	_, err := refund(ctx, nil)
	te, _ := taxonomy.From(err)
	fmt.Println(err)
	fmt.Println("retryable:", te.Retryable(), "retry after:", te.RetryAfter())
	// Output:
	// 03:04:05 breaker payments: closed -> open after 5 failures in a row
	// refund: circuit-open circuit_open: the circuit breaker is open: the dependency keeps failing and calls are paused
	// retryable: true retry after: 20s
}

// Three replicas share one breaker through a Store (here the in-memory one
// of package breakertest; adapters/redisstate has one on Redis): an outage seen
// by one opens the breaker for all within one cache period. The options of
// package store set how each replica uses the Store.
func ExampleWithStore() {
	clk := clock.NewFake(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	shared := breakertest.NewMemStore(clk)
	search := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "search API unreachable")
	}
	var replicas []toolmw.Tool
	for range 3 {
		replicas = append(replicas, toolmw.MustWrap(toolmw.Spec{Name: "search"}, search,
			breaker.New(breaker.WithStore(shared, store.WithTimeout(100*time.Millisecond),
				store.WithOnError(func(e store.Error) { fmt.Println("decided locally:", e) })),
				breaker.WithClock(clk), breaker.WithCachePeriod(time.Second))))
	}

	ctx := context.Background()
	for range breaker.DefaultConsecutiveFailures {
		replicas[0](ctx, nil) // replica 0 sees the outage
	}
	clk.Advance(time.Second) // one cache period
	for i, tool := range replicas {
		_, err := tool(ctx, nil)
		te, _ := taxonomy.From(err)
		fmt.Printf("replica %d: %s, retry after %v\n", i, te.Code(), te.RetryAfter())
	}
	// Output:
	// replica 0: circuit_open, retry after 29s
	// replica 1: circuit_open, retry after 29s
	// replica 2: circuit_open, retry after 29s
}
