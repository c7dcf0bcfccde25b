package ratelimit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	clk := clock.NewFake(time.Now())
	// Two calls a second, in bursts of two; never wait.
	search := toolmw.MustWrap(toolmw.Spec{Name: "search"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("3 hotels"), nil
	}, ratelimit.New(2, 2, ratelimit.WithReject(), ratelimit.WithClock(clk)))

	ctx := context.Background()
	for range 3 {
		res, err := search(ctx, nil)
		if te, ok := taxonomy.From(err); ok {
			fmt.Println(err, "- retry after", te.RetryAfter())
			continue
		}
		fmt.Println(res.Content)
	}
	// Output:
	// 3 hotels
	// 3 hotels
	// search: rate-limited rate_limited: the tool's rate limit is reached; try again later - retry after 500ms
}

// down is a Store that is down: every call is decided by the local limiter.
type down struct{}

func (down) Admit(context.Context, ratelimit.Request) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errors.New("connection refused")
}

// With a Store (adapters/redisstate keeps one on Redis) the limit holds across
// replicas. When the Store fails, the local limiter decides and the
// fallback is reported.
func ExampleWithStore() {
	clk := clock.NewFake(time.Now())
	search := toolmw.MustWrap(toolmw.Spec{Name: "search"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("3 hotels"), nil
	}, ratelimit.New(2, 2, ratelimit.WithReject(), ratelimit.WithClock(clk),
		ratelimit.WithStore(down{}, store.WithTimeout(100*time.Millisecond),
			store.WithOnError(func(e store.Error) {
				fmt.Println("decided locally:", e.Key, e.Err)
			}))))

	for range 3 {
		res, err := search(context.Background(), nil)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(res.Content)
	}
	// Output:
	// decided locally: search connection refused
	// 3 hotels
	// decided locally: search store: the store failed moments ago; deciding without it
	// 3 hotels
	// decided locally: search store: the store failed moments ago; deciding without it
	// search: rate-limited rate_limited: the tool's rate limit is reached; try again later
}
