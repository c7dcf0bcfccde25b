package redisstate_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

// dependency is a tool behind which the dependency is down: every attempt
// that reaches it fails, transiently.
type dependency struct{ attempts atomic.Int64 }

func (d *dependency) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	d.attempts.Add(1)
	return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the upstream is down")
}

// TestRetryBudgetAcrossReplicas: with the dependency down, three replicas
// sharing one retry bucket make at most 1.10 × calls + reserve attempts,
// the single-process bound; with a bucket each they make more (three
// reserves).
func TestRetryBudgetAcrossReplicas(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	replicas := newReplicas(t, srv, 3)
	const (
		callsEach = 20
		reserve   = budget.DefaultReserve
	)
	calls := callsEach * len(replicas)
	bound := int64(1.10*float64(calls)) + reserve
	for _, shared := range []bool{true, false} {
		dep := &dependency{}
		var buckets []*budget.Retry
		var wg sync.WaitGroup
		for i, r := range replicas {
			opts := []budget.RetryOption{budget.WithOnTokenStoreError(func(e budget.StoreError) {
				t.Errorf("store error: %s: %v", e.Op, e.Err)
			})}
			if shared {
				opts = append(opts, budget.WithTokenStore(r.Store.RetryBudget("search-api")), budget.WithTokenStoreTimeout(calm))
			}
			b := budget.NewAdaptive(opts...)
			buckets = append(buckets, b)
			tool := mustWrap(t, "search", dep.tool, retry.New(retry.WithMaxAttempts(3),
				retry.WithBackoff(0, 0), retry.WithBudget(b)))
			wg.Go(func() {
				for range callsEach {
					if _, err := tool(context.Background(), nil); err == nil {
						t.Errorf("replica %d: a call succeeded against a dead dependency", i)
					}
				}
			})
		}
		wg.Wait()
		for _, b := range buckets {
			if err := b.Flush(context.Background()); err != nil {
				t.Error(err)
			}
		}
		attempts := dep.attempts.Load()
		t.Logf("shared=%v: %d attempts for %d calls (bound %d)", shared, attempts, calls, bound)
		if shared && attempts > bound {
			t.Errorf("%d attempts for %d calls across 3 replicas, want at most 1.10 × calls + reserve = %d", attempts, calls, bound)
		}
		if !shared && attempts <= bound {
			t.Errorf("a bucket per replica made %d attempts, want more than the shared bound %d", attempts, bound)
		}
	}
	// The bucket is one key, with the Store's TTL.
	ctx := context.Background()
	keys, err := replicas[0].Client.Keys(ctx, "toolmw:rb:*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("retry bucket keys = %q (%v), want one", keys, err)
	}
	if ttl := replicas[0].Client.PTTL(ctx, keys[0]).Val(); ttl <= 23*time.Hour || ttl > 24*time.Hour {
		t.Errorf("the bucket expires in %v, want the default TTL, 24h", ttl)
	}
}

// TestRunBudgetAcrossReplicas: a run served by three replicas, each with
// its own Run of the same id, makes at most the run's cap of attempts of a
// tool, however its calls are spread; another run has its own count.
func TestRunBudgetAcrossReplicas(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	replicas := newReplicas(t, srv, 3)
	const limit = 12
	for _, id := range []string{"run-42", "run-43"} {
		dep := &dependency{}
		var wg sync.WaitGroup
		for _, r := range replicas {
			run := budget.NewRun(budget.WithID(id), budget.WithMaxAttempts(limit), budget.WithRunStore(r.Store.Runs()), budget.WithRunStoreTimeout(calm),
				budget.WithOnRunStoreError(func(e budget.StoreError) { t.Errorf("store error: %v", e.Err) }))
			ctx := budget.ContextWithRun(context.Background(), run)
			tool := mustWrap(t, "search", dep.tool, retry.New(retry.WithMaxAttempts(3),
				retry.WithBackoff(0, 0), retry.WithoutBudget()))
			for range 5 {
				wg.Go(func() { _, _ = tool(ctx, nil) })
			}
		}
		wg.Wait()
		if n := dep.attempts.Load(); n != limit {
			t.Errorf("run %s: %d attempts across 3 replicas, want the run's cap, %d", id, n, limit)
		}
	}
	ctx := context.Background()
	keys, err := replicas[0].Client.Keys(ctx, "toolmw:run:*").Result()
	if err != nil || len(keys) != 2 {
		t.Fatalf("run keys = %q (%v), want one per run", keys, err)
	}
	if ttl := replicas[0].Client.PTTL(ctx, keys[0]).Val(); ttl <= 23*time.Hour {
		t.Errorf("a run expires in %v, want the default TTL, 24h", ttl)
	}
}
