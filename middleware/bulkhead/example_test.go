package bulkhead_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/bulkhead"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	started, release := make(chan struct{}), make(chan struct{})
	slow := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		started <- struct{}{}
		<-release
		return toolmw.Text("booked"), nil
	}
	// One booking at a time; a second waits at most 10ms for the slot.
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, slow,
		bulkhead.New(1, bulkhead.WithMaxWait(10*time.Millisecond)))

	done := make(chan string)
	go func() {
		res, _ := tool(context.Background(), nil)
		done <- res.Content
	}()
	<-started // the first call has the slot

	_, err := tool(context.Background(), nil)
	info := taxonomy.InfoOf(err)
	fmt.Println(info.Kind, info.Code, "retryable:", info.Retryable)

	close(release)
	fmt.Println(<-done)
	// Output:
	// rate-limited bulkhead_full retryable: true
	// booked
}

// An adaptive pool: its limit follows the upstream's latency.
func ExampleWithAdaptive() {
	clk := clock.NewFake(time.Unix(0, 0))
	latency := 50 * time.Millisecond
	pool := bulkhead.NewPool(4, bulkhead.WithClock(clk),
		bulkhead.WithAdaptive(bulkhead.Adaptive{Min: 1, Max: 16, Target: 200 * time.Millisecond}))
	search := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true},
		func(context.Context, json.RawMessage) (toolmw.Result, error) {
			clk.Advance(latency)
			return toolmw.Text("3 hotels"), nil
		}, bulkhead.New(0, bulkhead.WithShared(pool)))

	for range 20 {
		_, _ = search(context.Background(), nil)
	}
	fmt.Println("fast upstream:", pool.Limit())
	latency = time.Second
	for range 20 {
		_, _ = search(context.Background(), nil)
	}
	fmt.Println("slow upstream:", pool.Limit())
	// Output:
	// fast upstream: 7
	// slow upstream: 2
}
