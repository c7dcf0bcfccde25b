package hedge_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/hedge"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// slowFirst is a tool whose first execution takes first and the others
// then; it records each execution's key and whether its context was
// cancelled.
type slowFirst struct {
	first, then time.Duration
	n           atomic.Int64
	mu          sync.Mutex
	keys        []string
	cancelled   atomic.Int64
}

func (s *slowFirst) tool(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	n := s.n.Add(1)
	call, _ := toolmw.CallFrom(ctx)
	s.mu.Lock()
	s.keys = append(s.keys, call.Key())
	s.mu.Unlock()
	d := s.then
	if n == 1 {
		d = s.first
	}
	select {
	case <-time.After(d):
		return toolmw.Text("answer " + string(rune('0'+n))), nil
	case <-ctx.Done():
		s.cancelled.Add(1)
		return toolmw.Result{}, ctx.Err()
	}
}

// TestHedgeWins: a slow first attempt is hedged after the delay; the hedge's
// success is returned at once, the loser's context is cancelled and its
// outcome reported late; both saw the same idempotency key.
func TestHedgeWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &slowFirst{first: time.Second, then: 5 * time.Millisecond}
		lates := make(chan hedge.Late, 1)
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, s.tool,
			hedge.New(hedge.WithDelay(10*time.Millisecond), hedge.WithOnLate(func(l hedge.Late) { lates <- l })))
		start := time.Now()
		res, err := tool(toolmw.WithCallID(context.Background(), "call_1"), nil)
		if err != nil || res.Content != "answer 2" || time.Since(start) != 15*time.Millisecond {
			t.Fatalf("%v %v after %v, want the hedge's answer after 15ms", res, err, time.Since(start))
		}
		l := <-lates
		if !errors.Is(l.Err, context.Canceled) || l.Call.Tool != "search" || s.cancelled.Load() != 1 {
			t.Fatalf("late %+v, %d cancelled", l, s.cancelled.Load())
		}
		if len(s.keys) != 2 || s.keys[0] != s.keys[1] || s.keys[0] == "" {
			t.Fatalf("keys %q: want one key for the attempt and its hedge", s.keys)
		}
	})
}

// TestFastCallNotHedged: a call that answers before the delay makes one
// execution.
func TestFastCallNotHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &slowFirst{first: time.Millisecond, then: time.Millisecond}
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, s.tool, hedge.New(hedge.WithDelay(10*time.Millisecond)))
		if _, err := tool(context.Background(), nil); err != nil || s.n.Load() != 1 {
			t.Fatalf("%v, %d executions", err, s.n.Load())
		}
	})
}

// TestNoHedgeForNonIdempotent: a non-idempotent tool runs once, on the
// caller's goroutine, however slow it is.
func TestNoHedgeForNonIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &slowFirst{first: 100 * time.Millisecond, then: time.Millisecond}
		tool := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, s.tool, hedge.New(hedge.WithDelay(time.Millisecond)))
		if res, err := tool(context.Background(), nil); err != nil || res.Content != "answer 1" || s.n.Load() != 1 {
			t.Fatalf("%v %v, %d executions", res, err, s.n.Load())
		}
	})
}

// TestHedgeDrawsOnBudgets: with the run's attempts or the retry budget
// used up, the call is not hedged and waits for its attempt.
func TestHedgeDrawsOnBudgets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := toolmw.Spec{Name: "search", Idempotent: true}
		s := &slowFirst{first: 50 * time.Millisecond, then: time.Millisecond}
		tool := toolmw.MustWrap(spec, s.tool, hedge.New(hedge.WithDelay(time.Millisecond)))
		run := budget.WithRun(context.Background(), budget.WithMaxAttempts(1))
		r, _ := budget.RunFrom(run)
		r.Take("search") // the attempt itself (a retry layer would take it)
		if res, err := tool(run, nil); err != nil || res.Content != "answer 1" || s.n.Load() != 1 {
			t.Fatalf("run budget used up: %v %v, %d executions", res, err, s.n.Load())
		}

		empty := budget.NewRetry()
		for empty.TryRetry() {
		}
		s = &slowFirst{first: 50 * time.Millisecond, then: time.Millisecond}
		tool = toolmw.MustWrap(spec, s.tool, hedge.New(hedge.WithDelay(time.Millisecond), hedge.WithBudget(empty)))
		if res, err := tool(context.Background(), nil); err != nil || res.Content != "answer 1" || s.n.Load() != 1 {
			t.Fatalf("retry budget empty: %v %v, %d executions", res, err, s.n.Load())
		}
		if empty.Tokens() != 0 {
			t.Fatalf("a shared budget got a deposit: %v", empty.Tokens())
		}
	})
}

// TestFailures: a failure before the delay returns at once; after the hedge
// started, a failure waits for the other attempt.
func TestFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := taxonomy.Transient("supplier_busy", "busy")
		var n atomic.Int64
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			switch n.Add(1) {
			case 1:
				time.Sleep(20 * time.Millisecond)
				return toolmw.Result{}, boom
			default:
				time.Sleep(30 * time.Millisecond)
				return toolmw.Text("ok"), nil
			}
		}, hedge.New(hedge.WithDelay(10*time.Millisecond)))
		start := time.Now()
		if res, err := tool(context.Background(), nil); err != nil || res.Content != "ok" || time.Since(start) != 40*time.Millisecond {
			t.Fatalf("%v %v after %v", res, err, time.Since(start))
		}
		n.Store(0)
		quick := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			n.Add(1)
			return toolmw.Result{}, boom
		}, hedge.New(hedge.WithDelay(10*time.Millisecond)))
		if _, err := quick(context.Background(), nil); taxonomy.InfoOf(err).Code != "supplier_busy" || n.Load() != 1 {
			t.Fatalf("%v, %d executions", err, n.Load())
		}
	})
}

// TestCallerCancel: the caller's cancel returns at once and cancels both
// attempts.
func TestCallerCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &slowFirst{first: time.Second, then: time.Second}
		var lates atomic.Int64
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, s.tool,
			hedge.New(hedge.WithDelay(10*time.Millisecond), hedge.WithOnLate(func(hedge.Late) { lates.Add(1) })))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, err := tool(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		synctest.Wait()
		if s.cancelled.Load() != 2 || lates.Load() != 2 {
			t.Fatalf("%d cancelled, %d reported late", s.cancelled.Load(), lates.Load())
		}
	})
}

// TestLearnsTheDelay: without WithDelay, the layer hedges only once it has
// seen enough latencies, at their percentile.
func TestLearnsTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int64
		var hedged atomic.Int64
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			i := n.Add(1)
			d := 10 * time.Millisecond
			if i == 33 {
				d = time.Second // the tail
			}
			select {
			case <-time.After(d):
				return toolmw.Text("ok"), nil
			case <-ctx.Done():
				return toolmw.Result{}, ctx.Err()
			}
		}, hedge.New(hedge.WithOnLate(func(hedge.Late) { hedged.Add(1) })))
		for range 32 { // learning: no hedge
			_, _ = tool(context.Background(), nil)
		}
		if n.Load() != 32 {
			t.Fatalf("%d executions of 32 calls while learning", n.Load())
		}
		start := time.Now()
		_, _ = tool(context.Background(), nil)
		if took := time.Since(start); took != 20*time.Millisecond || n.Load() != 34 {
			t.Fatalf("the tail call took %v with %d executions, want 20ms (p95 10ms + a 10ms hedge)", took, n.Load())
		}
		synctest.Wait()
		if hedged.Load() != 1 {
			t.Fatalf("%d losers reported", hedged.Load())
		}
	})
}

// TestPanicReRaised: an attempt's panic reaches the caller.
func TestPanicReRaised(t *testing.T) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		panic("boom")
	}, hedge.New(hedge.WithDelay(time.Hour)))
	defer func() {
		if recover() != "boom" {
			t.Fatal("the panic did not reach the caller")
		}
	}()
	_, _ = tool(context.Background(), nil)
}

func TestValidate(t *testing.T) {
	for _, o := range []hedge.Option{hedge.WithDelay(-1), hedge.WithPercentile(1), hedge.WithPercentile(-0.1), hedge.WithMaxLosers(-1)} {
		if info := taxonomy.InfoOf(hedge.Validate(o)); info.Code != taxonomy.CodeOptionInvalid {
			t.Errorf("%v", info)
		}
		if _, err := toolmw.Wrap(toolmw.Spec{Name: "s"}, (&slowFirst{}).tool, hedge.New(o)); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
			t.Errorf("Wrap: %v", err)
		}
	}
	if err := hedge.Validate(hedge.WithDelay(0), hedge.WithPercentile(0), hedge.WithMaxLosers(0), hedge.WithBudget(nil), hedge.WithOnLate(nil), nil); err != nil {
		t.Error(err)
	}
}

// TestBothFailedUnknownWins: when the attempt and its hedge both fail and
// one of them possibly ran (a timeout) while the other says nothing
// landed, the call ends in the one that possibly ran, in either order: a
// layer outside (a run's call limit) must not take the call for one that
// had no effect. Two failures of the same weight return the first.
func TestBothFailedUnknownWins(t *testing.T) {
	busy := taxonomy.Transient("supplier_busy", "busy")
	slow := taxonomy.Timeout(taxonomy.CodeUpstreamTimeout, "slow", true)
	other := taxonomy.Transient("supplier_down", "down")
	cases := []struct {
		name          string
		first, second error
		want          string
	}{
		{"timeout first", slow, busy, taxonomy.CodeUpstreamTimeout},
		{"timeout second", busy, slow, taxonomy.CodeUpstreamTimeout},
		{"two transients", busy, other, "supplier_busy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int64
				tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
					if n.Add(1) == 1 {
						time.Sleep(20 * time.Millisecond)
						return toolmw.Result{}, c.first
					}
					time.Sleep(30 * time.Millisecond)
					return toolmw.Result{}, c.second
				}, hedge.New(hedge.WithDelay(10*time.Millisecond)))
				if _, err := tool(context.Background(), nil); taxonomy.InfoOf(err).Code != c.want || n.Load() != 2 {
					t.Fatalf("%v after %d executions, want %s", err, n.Load(), c.want)
				}
			})
		})
	}
}

// TestLimitedCallNotHedged: a call that a layer outside admitted as one
// execution — a spend reservation, a run's call limit — is not hedged,
// whatever the order the user stacked them in (retry, then spend, then
// hedge is what the docs once advised): one reservation, one execution.
func TestLimitedCallNotHedged(t *testing.T) {
	limits := map[string]toolmw.Middleware{
		"spend":    spend.New(spend.Fixed("search", 1)),
		"runlimit": runlimit.New(runlimit.Once("search")),
	}
	for name, limit := range limits {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &slowFirst{first: 100 * time.Millisecond, then: time.Millisecond}
				tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, s.tool,
					retry.New(retry.WithoutBudget()), limit, hedge.New(hedge.WithDelay(time.Millisecond)))
				ctx := spend.ContextWithLimit(budget.WithRun(context.Background()), 1)
				if res, err := tool(ctx, nil); err != nil || res.Content != "answer 1" {
					t.Fatalf("%v %v", res, err)
				}
				synctest.Wait()
				if s.n.Load() != 1 {
					t.Fatalf("%d executions of a call admitted as one", s.n.Load())
				}
			})
		})
	}
}

var errStoreDown = errors.New("dial tcp 10.0.0.7:6379: connection refused")

// downTokens and downRuns are budget stores that always fail.
type (
	downTokens struct{}
	downRuns   struct{}
)

func (downTokens) Apply(context.Context, budget.TokenOp) (budget.TokenBalance, error) {
	return budget.TokenBalance{}, errStoreDown
}

func (downRuns) Take(context.Context, string, string, int) (int, bool, error) {
	return 0, false, errStoreDown
}

// TestBudgetStoreFallbackMarksTheCall: a hedge whose run or retry budget
// was decided on local state because the budget's store failed marks the
// call degraded, naming the budget, so tracing and logging show it.
func TestBudgetStoreFallbackMarksTheCall(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []budget.RunOption
		b    *budget.Retry
		want string
	}{
		{"token store down", nil, budget.NewRetry(budget.WithTokenStore(downTokens{})), "retry_budget"},
		{"run store down", []budget.RunOption{budget.WithID("run-1"), budget.WithRunStore(downRuns{})}, budget.NewRetry(), "run_budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &slowFirst{first: 50 * time.Millisecond, then: time.Millisecond}
				seen, degraded := testutil.Degraded()
				tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, s.tool, seen,
					hedge.New(hedge.WithDelay(time.Millisecond), hedge.WithBudget(tc.b)))
				res, err := tool(budget.WithRun(context.Background(), tc.opts...), nil)
				if err != nil || res.Content != "answer 2" {
					t.Fatalf("%v %v, want the hedge's answer (the local budget has room)", res, err)
				}
				if got := degraded(); !slices.Equal(got, []string{tc.want}) {
					t.Errorf("Call.Degraded = %q, want %q", got, tc.want)
				}
			})
		})
	}
}
