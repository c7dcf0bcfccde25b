package budget_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/budget/budgettest"
	"github.com/toolmw/toolmw/store"
)

// A custom agent loop draws on the run budget without any middleware.
func ExampleRun() {
	ctx := budget.WithRun(context.Background(), budget.WithMaxAttempts(3))
	run, _ := budget.RunFrom(ctx)

	flaky := func() error { return errors.New("supplier unavailable") }
	for attempt := 1; ; attempt++ {
		if !run.Take("search") {
			fmt.Println("search: run cap reached after", run.Used("search"), "attempts")
			break
		}
		if err := flaky(); err != nil {
			fmt.Println("attempt", attempt, "failed")
			continue
		}
		break
	}
	// Output:
	// attempt 1 failed
	// attempt 2 failed
	// attempt 3 failed
	// search: run cap reached after 3 attempts
}

// The fixed-ratio budget: calls earn retries, nothing else does.
func ExampleRetry() {
	b := budget.NewRetry(budget.WithReserve(2)) // ratio 0.1
	for range 3 {
		fmt.Println("retry allowed:", b.TryRetry())
	}
	for range 10 { // ten calls earn one retry
		b.Deposit()
	}
	fmt.Println("after ten calls:", b.TryRetry())
	// Output:
	// retry allowed: true
	// retry allowed: true
	// retry allowed: false
	// after ten calls: true
}

// The adaptive budget learns from how attempts end: a retry that succeeded
// costs nothing, one that timed out costs twice.
func ExampleNewAdaptive() {
	b := budget.NewAdaptive(budget.WithReserve(2))

	b.TryRetry() // a retry, which succeeds
	b.Observe(budget.Attempt{Retry: true, Outcome: budget.Succeeded})
	fmt.Println("after a retry that succeeded:", b.Tokens())

	b.TryRetry() // a retry, which times out
	b.Observe(budget.Attempt{Retry: true, Outcome: budget.Overloaded})
	fmt.Println("after a retry that timed out:", b.Tokens())
	fmt.Println("retry allowed:", b.TryRetry())
	// Output:
	// after a retry that succeeded: 2
	// after a retry that timed out: 0
	// retry allowed: false
}

// outage is a RunStore whose server is down.
type outage struct{}

func (outage) Take(context.Context, string, string, int) (int, bool, error) {
	return 0, false, errors.New("dial tcp 10.0.0.7:6379: connection refused")
}

// Two replicas serving one named run share its cap through a RunStore
// (adapters/redisstate in production). A replica whose store is down counts on
// its own, reports it, and tells the caller the attempt was decided without
// the store.
func ExampleWithRunStore() {
	shared := &budgettest.MemRunStore{}
	a := budget.NewRun(budget.WithID("run-7f3a"), budget.WithMaxAttempts(2), budget.WithRunStore(shared))
	b := budget.NewRun(budget.WithID("run-7f3a"), budget.WithMaxAttempts(2), budget.WithRunStore(shared))
	fmt.Println("a:", a.Take("search"), "b:", b.Take("search"), "a:", a.Take("search"))

	onError := store.WithOnError(func(e store.Error) { fmt.Println("reported:", e) })
	c := budget.NewRun(budget.WithID("run-7f3a"), budget.WithMaxAttempts(2), budget.WithRunStore(outage{}, onError))
	ok, degraded := c.TakeContext(context.Background(), "search")
	fmt.Println("store down: taken", ok, "degraded", degraded)
	// Output:
	// a: true b: true a: false
	// reported: run_budget store take: dial tcp 10.0.0.7:6379: connection refused
	// store down: taken true degraded true
}

func ExampleWaitFits() {
	now := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(5*time.Second))
	defer cancel()
	left, _ := budget.Remaining(ctx, now)
	fmt.Println("left:", left)
	fmt.Println("wait 2s:", budget.WaitFits(ctx, now, 2*time.Second))
	fmt.Println("wait 1m:", budget.WaitFits(ctx, now, time.Minute))
	// Output:
	// left: 5s
	// wait 2s: true
	// wait 1m: false
}
