package redisstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	redisstate "github.com/toolmw/toolmw/adapters/redisstate"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/budget/budgettest"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// The budget stores on a real redis-server, through the harness of
// server_test.go: one server, a fresh bucket or key prefix per check.

func TestRetryBudgetConformance(t *testing.T) {
	r := newReplica(t, startRedis(t))
	budgettest.TestTokenStore(t, func(t *testing.T) budget.TokenStore {
		return r.Store.RetryBudget(t.Name())
	})
}

func TestRunBudgetConformance(t *testing.T) {
	srv := startRedis(t)
	var n atomic.Int64
	budgettest.TestRunStore(t, func(t *testing.T) budget.RunStore {
		return newReplica(t, srv, redisstate.WithPrefix(fmt.Sprintf("kit%d:", n.Add(1)))).Store.Runs()
	})
}

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
			var opts []budget.RetryOption
			if shared {
				opts = append(opts, budget.WithTokenStore(r.Store.RetryBudget("search-api"), store.WithTimeout(calm),
					store.WithOnError(func(e store.Error) { t.Errorf("store error: %s: %v", e.Op, e.Err) })))
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
			run := budget.NewRun(budget.WithID(id), budget.WithMaxAttempts(limit), budget.WithRunStore(r.Store.Runs(), store.WithTimeout(calm),
				store.WithOnError(func(e store.Error) { t.Errorf("store error: %v", e.Err) })))
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

// TestRunBudgetCorrupt: a run's attempt count on Redis that does not parse
// (garbage, a negative number, a space, a key that is not a hash) takes no
// attempt — the run's cap reads as used up, the attempt is refused, not
// counted locally — and is reported as store.ErrCorrupt. (It used to read
// as 0: the cap opened again.)
func TestRunBudgetCorrupt(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	r := newReplica(t, srv)
	ctx := context.Background()
	field := hashed("search")
	writes := map[string]func(key string) error{
		"garbage":  func(key string) error { return r.Client.HSet(ctx, key, field, "garbage").Err() },
		"negative": func(key string) error { return r.Client.HSet(ctx, key, field, "-5").Err() },
		"spaced":   func(key string) error { return r.Client.HSet(ctx, key, field, " 1").Err() },
		"string":   func(key string) error { return r.Client.Set(ctx, key, "1", 0).Err() },
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			id := "run-corrupt-" + name[:2]
			var reports []store.Error
			run := budget.NewRun(budget.WithID(id), budget.WithMaxAttempts(2), budget.WithRunStore(r.Store.Runs(),
				store.WithTimeout(calm), store.WithOnError(func(e store.Error) { reports = append(reports, e) })))
			if !run.Take("search") {
				t.Fatal("the first attempt was refused")
			}
			if err := write("toolmw:run:" + hashed(id)); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if run.Take("search") {
					t.Fatal("an attempt was taken on a count that does not parse")
				}
			}
			if len(reports) != 3 || !errors.Is(reports[0].Err, store.ErrCorrupt) {
				t.Fatalf("reports %v, want three, store.ErrCorrupt", reports)
			}
		})
	}
}

// TestRetryBudgetCorrupt: a retry bucket on Redis whose balance does not
// parse lends no retry (a full bucket is what it used to read as) and is
// reported as store.ErrCorrupt; the op is applied to an empty bucket and
// its balance written over the garbage, so the bucket is well-formed
// again and fills from the deposits.
func TestRetryBudgetCorrupt(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	r := newReplica(t, srv)
	ctx := context.Background()
	for name, write := range map[string]func(key string) error{
		"garbage":  func(key string) error { return r.Client.Set(ctx, key, "garbage", 0).Err() },
		"negative": func(key string) error { return r.Client.Set(ctx, key, "-1000", 0).Err() },
		"hash":     func(key string) error { return r.Client.HSet(ctx, key, "b", "1000").Err() },
	} {
		t.Run(name, func(t *testing.T) {
			bucketName := "dep-" + name[:3]
			if err := write("toolmw:rb:" + hashed(bucketName)); err != nil {
				t.Fatal(err)
			}
			var reports []store.Error
			b := budget.NewRetry(budget.WithTokenStore(r.Store.RetryBudget(bucketName), store.WithTimeout(calm),
				store.WithOnError(func(e store.Error) { reports = append(reports, e) })))
			if b.TryRetry() {
				t.Fatal("a retry was lent by a balance that does not parse")
			}
			if len(reports) != 1 || reports[0].Op != "retry" || !errors.Is(reports[0].Err, store.ErrCorrupt) {
				t.Fatalf("reports %v, want one retry, store.ErrCorrupt", reports)
			}
			v, err := r.Client.Get(ctx, "toolmw:rb:"+hashed(bucketName)).Result()
			if err != nil || strings.Trim(v, "0123456789") != "" {
				t.Fatalf("the bucket holds %q (%v) after the op, want a balance", v, err)
			}
		})
	}
}
