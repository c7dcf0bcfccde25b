package redisstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw"
	redisstate "github.com/toolmw/toolmw/adapters/redisstate"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/middleware/retry"
)

// Every replica of a fleet builds the same stack on its own client: the
// rate limit and the retry bucket hold across the fleet, and a named run's
// attempt caps across the replicas serving it. It needs a Redis at
// localhost:6379, so it is compiled, not run.
func Example() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	shared, err := redisstate.New(rdb, redisstate.WithPrefix("myapp:"))
	if err != nil {
		log.Fatal(err)
	}

	stack := middleware.Default(
		middleware.WithRetry(retry.WithBudget(budget.NewAdaptive(
			budget.WithTokenStore(shared.RetryBudget("search-api"))))),
		middleware.WithRateLimit(10, 20, ratelimit.WithStore(shared.RateLimits())),
	)
	search, err := stack.Wrap(toolmw.Spec{Name: "search"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("3 results"), nil
	})
	if err != nil {
		log.Fatal(err)
	}

	ctx := budget.WithRun(context.Background(), budget.WithID("run-7f3a"), budget.WithRunStore(shared.Runs()))
	res, err := search(ctx, nil)
	fmt.Println(res, err)
}
