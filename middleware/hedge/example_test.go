package hedge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/hedge"
)

func Example() {
	// The first request lands on a slow replica; any other is quick.
	var n atomic.Int64
	search := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		d := 5 * time.Millisecond
		if n.Add(1) == 1 {
			d = time.Minute
		}
		select {
		case <-time.After(d):
			return toolmw.Text("3 flights"), nil
		case <-ctx.Done():
			return toolmw.Result{}, ctx.Err()
		}
	}
	lost := make(chan hedge.Late, 1)
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search_flights", Idempotent: true}, search,
		hedge.New(hedge.WithDelay(20*time.Millisecond), hedge.WithOnLate(func(l hedge.Late) { lost <- l })))

	start := time.Now()
	res, _ := tool(context.Background(), nil)
	fmt.Println(res.Content, "in under a second:", time.Since(start) < time.Second)
	fmt.Println("the slow attempt was cancelled:", (<-lost).Err)
	// Output:
	// 3 flights in under a second: true
	// the slow attempt was cancelled: context canceled
}
