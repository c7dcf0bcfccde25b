package bulkhead_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/bulkhead"
	"github.com/toolmw/toolmw/taxonomy"
)

// TestAdaptiveRule: sequential calls of a set latency move the limit as
// the rule says: slow calls take it down by 0.9 (at least 1) once per
// limit's worth of calls, to Min; fast calls raise it by 1 per limit's
// worth, to Max; timeouts and upstream rate limits are signs of overload;
// cancelled calls count for nothing.
func TestAdaptiveRule(t *testing.T) {
	target := 100 * time.Millisecond
	type step struct {
		latency time.Duration
		err     error
		calls   int
		want    int // the limit after them
	}
	cases := []struct {
		name  string
		start int
		steps []step
	}{
		{"slow calls take it down to Min", 20, []step{
			{2 * target, nil, 1, 18},  // 20 × 0.9
			{2 * target, nil, 17, 18}, // not before 18 more calls
			{2 * target, nil, 1, 16},  // 18 × 0.9 = 16.2
			{2 * target, nil, 16, 14}, // 16 × 0.9 = 14.4
			{2 * target, nil, 1000, 2},
		}},
		{"fast calls raise it to Max", 2, []step{
			{target / 2, nil, 1, 2},
			{target / 2, nil, 1, 3},
			{target / 2, nil, 3, 4},
			{target / 2, nil, 1000, 32},
		}},
		{"a sign of overload resets the count to a raise", 4, []step{
			{target / 2, nil, 3, 4},
			{0, taxonomy.Timeout(taxonomy.CodeTimeout, "slow", true), 1, 3},
			{target / 2, nil, 1, 3},
			{0, taxonomy.New(taxonomy.KindRateLimited, "upstream_rate_limited", "429"), 1, 3}, // the 2nd call since the fall: no second fall
			{target / 2, nil, 3, 4},
		}},
		{"a deadline is a sign, a cancel is none", 10, []step{
			{0, context.DeadlineExceeded, 1, 9},
			{0, context.Canceled, 100, 9},
			{0, errors.New("refused by the supplier"), 9, 10},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(0, 0))
			var latency time.Duration
			var err error
			pool := bulkhead.NewPool(c.start, bulkhead.WithClock(clk),
				bulkhead.WithAdaptive(bulkhead.Adaptive{Min: 2, Max: 32, Target: target}))
			tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
				clk.Advance(latency)
				return toolmw.Text("ok"), err
			}, bulkhead.New(0, bulkhead.WithShared(pool)))
			for i, s := range c.steps {
				latency, err = s.latency, s.err
				for range s.calls {
					_, _ = tool(context.Background(), nil)
				}
				if got := pool.Limit(); got != s.want {
					t.Fatalf("step %d: limit %d, want %d", i, got, s.want)
				}
			}
		})
	}
}

// TestAdaptiveUnderLoad: 100 callers against an upstream that slows down
// past 8 calls at once and passes the 15 ms target past 10. The limit
// settles around 10, never leaves [Min,
// Max], the overlap measured inside the tool never passes the most the
// limit has been, and every call runs.
func TestAdaptiveUnderLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const callers, each = 100, 30
		var running, peak atomic.Int64
		pool := bulkhead.NewPool(4, bulkhead.WithMaxQueue(callers),
			bulkhead.WithAdaptive(bulkhead.Adaptive{Min: 1, Max: 50, Target: 15 * time.Millisecond}))
		var mu sync.Mutex
		highest := pool.Limit()
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			n := running.Add(1)
			defer running.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			// 10 ms alone, 2 ms more for every call beyond 8 at once.
			time.Sleep(10*time.Millisecond + time.Duration(max(0, n-8))*2*time.Millisecond)
			return toolmw.Text("ok"), nil
		}, bulkhead.New(0, bulkhead.WithShared(pool)))
		var wg sync.WaitGroup
		var failed atomic.Int64
		for range callers {
			wg.Go(func() {
				for range each {
					if _, err := tool(context.Background(), nil); err != nil {
						failed.Add(1)
					}
					mu.Lock()
					highest = max(highest, pool.Limit())
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if f := failed.Load(); f != 0 {
			t.Fatalf("%d calls failed", f)
		}
		st := pool.Stats()
		if st.Limit < 1 || st.Limit > 50 || int64(highest) > 50 {
			t.Fatalf("limit %d (highest %d) left [1, 50]", st.Limit, highest)
		}
		if p := peak.Load(); p > int64(highest) {
			t.Fatalf("peak %d executions at once, above the highest limit %d", p, highest)
		}
		if st.Limit < 5 || st.Limit > 13 || highest > 14 {
			t.Errorf("limit settled at %d (highest %d), want it near 10 (5..13, never past 14)", st.Limit, highest)
		}
		t.Logf("limit %d at the end, highest %d, peak overlap %d", st.Limit, highest, peak.Load())
	})
}

func TestAdaptiveOptions(t *testing.T) {
	for _, a := range []bulkhead.Adaptive{
		{Min: 0, Max: 4, Target: time.Second},
		{Min: 4, Max: 3, Target: time.Second},
		{Min: 1, Max: 4, Target: 0},
	} {
		if err := bulkhead.Validate(4, bulkhead.WithAdaptive(a)); !errors.Is(err, taxonomy.ErrDefinitionInvalid) && taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
			t.Errorf("%+v: Validate = %v", a, err)
		}
	}
	// The start is held to [Min, Max].
	if got := bulkhead.NewPool(100, bulkhead.WithAdaptive(bulkhead.Adaptive{Min: 2, Max: 8, Target: time.Second})).Limit(); got != 8 {
		t.Errorf("start 100 in [2, 8]: limit %d", got)
	}
}
