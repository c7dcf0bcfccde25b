package redisstate_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	redisstate "github.com/toolmw/toolmw/adapters/redis"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/taxonomy"
)

// calm is the store timeout of the tests where Redis is well: long enough
// that a busy test machine does not make the ports fall back.
const calm = 2 * time.Second

// counted is a tool that counts its runs and records when they started.
type counted struct {
	mu    sync.Mutex
	n     int
	start []time.Time
}

func (c *counted) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	c.mu.Lock()
	c.n++
	c.start = append(c.start, time.Now())
	c.mu.Unlock()
	return toolmw.Text("ok"), nil
}

func (c *counted) runs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func mustWrap(t testing.TB, name string, tool toolmw.Tool, mws ...toolmw.Middleware) toolmw.Tool {
	t.Helper()
	w, err := toolmw.Wrap(toolmw.Spec{Name: name}, tool, mws...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// retryAfter returns the RetryAfter of a rate-limited/rate_limited error,
// and fails the test for another error.
func retryAfter(t testing.TB, err error) time.Duration {
	t.Helper()
	te, ok := taxonomy.From(err)
	if !ok || te.Kind() != taxonomy.KindRateLimited || te.Code() != taxonomy.CodeRateLimited {
		t.Fatalf("err = %v, want rate-limited/rate_limited", err)
	}
	return te.RetryAfter()
}

// hammer calls each tool from workers goroutines for d and returns how many
// calls were admitted, the longest RetryAfter of the refusals, and how long
// the calls took from the first start to the last end.
func hammer(t *testing.T, tools []toolmw.Tool, workers int, d time.Duration) (admitted int64, longest time.Duration, elapsed time.Duration) {
	t.Helper()
	var n atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for _, tool := range tools {
		for range workers {
			wg.Go(func() {
				for time.Now().Before(stop) {
					_, err := tool(context.Background(), nil)
					if err == nil {
						n.Add(1)
						continue
					}
					ra := retryAfter(t, err)
					if ra <= 0 {
						t.Errorf("a refusal without a RetryAfter: %v", err)
					}
					mu.Lock()
					longest = max(longest, ra)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	return n.Load(), longest, time.Since(start)
}

// TestRateLimitAcrossReplicas: three replicas, each with its own client and
// stack, calling as fast as they can: the calls admitted across them stay
// within limit × window + burst, every refusal carries RetryAfter within
// one interval; the same replicas with in-process limiters admit about
// three times as many.
//
// The upper bound is checked in every round. The two lower ones (the shared
// limit admits at least half its bound; the in-process control admits more
// than the shared bound, so the hammer was strong enough to tell a shared
// limit from none) need the callers to have run: on a loaded machine a
// stall can keep them from calling, so a round that misses them is made
// again, up to five rounds.
func TestRateLimitAcrossReplicas(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	const (
		limit  = 100
		burst  = 10
		window = 600 * time.Millisecond
	)
	replicas := newReplicas(t, srv, 3)
	round := func(shared bool) (admitted, bound int64) {
		var tools []toolmw.Tool
		for _, r := range replicas {
			opts := []ratelimit.Option{ratelimit.WithReject()}
			if shared {
				opts = append(opts, ratelimit.WithStore(r.Store.RateLimits()), ratelimit.WithStoreTimeout(calm), ratelimit.WithOnStoreError(func(e ratelimit.StoreError) {
					t.Errorf("store error: %v", e.Err)
				}))
			}
			tools = append(tools, mustWrap(t, "search", (&counted{}).tool, ratelimit.New(limit, burst, opts...)))
		}
		admitted, longest, elapsed := hammer(t, tools, 2, window)
		bound = int64(limit*elapsed.Seconds()) + burst
		t.Logf("shared=%v: %d admitted in %v (bound %d), longest RetryAfter %v", shared, admitted, elapsed, bound, longest)
		if shared {
			if admitted > bound {
				t.Errorf("%d calls admitted across 3 replicas in %v, want at most limit × window + burst = %d", admitted, elapsed, bound)
			}
			if longest > time.Second/limit {
				t.Errorf("a refusal's RetryAfter is %v, want at most one interval, %v", longest, time.Second/limit)
			}
		}
		return admitted, bound
	}
	for i := 1; ; i++ {
		// A new key each round: the shared bucket starts full.
		srv.Client().FlushAll(context.Background())
		shared, sharedBound := round(true)
		local, _ := round(false)
		if shared >= sharedBound/2 && local > sharedBound {
			return
		}
		if i == 5 {
			t.Fatalf("in 5 rounds, never both: the shared limit admitted %d (want at least half its bound %d) and in-process limiters %d (want more than it)",
				shared, sharedBound, local)
		}
		t.Logf("round %d: the callers did not call enough to tell (a loaded machine); again", i)
	}
}

// TestRateLimitWaitsAcrossReplicas: calls that may wait are given slots
// one interval apart across the replicas, and wait for them within their
// deadlines; a call whose slot would come after its deadline is refused at
// once with the wait as RetryAfter.
func TestRateLimitWaitsAcrossReplicas(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	const interval = 50 * time.Millisecond
	c := &counted{}
	var tools []toolmw.Tool
	for _, r := range newReplicas(t, srv, 3) {
		tools = append(tools, mustWrap(t, "search", c.tool, ratelimit.New(rate.Every(interval), 1,
			ratelimit.WithStore(r.Store.RateLimits()), ratelimit.WithStoreTimeout(calm))))
	}
	var wg sync.WaitGroup
	first := time.Now()
	for _, tool := range tools {
		for range 3 {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if _, err := tool(ctx, nil); err != nil {
					t.Errorf("a call that could wait failed: %v", err)
				}
			})
		}
	}
	wg.Wait()
	// The k-th call's slot is k intervals after the first at the earliest
	// (a burst of 1). A busy machine only starts a call later than its
	// slot, never earlier, so the bound holds under any load; two calls
	// may start close together when the first of them was late.
	starts := slices.Clone(c.start)
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	const jitter = 15 * time.Millisecond // round trips differ between replicas
	for k, start := range starts {
		if early := first.Add(time.Duration(k)*interval - jitter).Sub(start); early > 0 {
			t.Errorf("call %d started %v before its slot, %v after the first", k+1, early, time.Duration(k)*interval)
		}
	}

	// A call whose slot comes after its deadline is refused at once. The
	// interval is long here, so that however slow the machine, the second
	// call comes well within the first one's interval.
	const long, deadline = 10 * time.Second, 2 * time.Second
	slow := mustWrap(t, "book", c.tool, ratelimit.New(rate.Every(long), 1,
		ratelimit.WithStore(newReplica(t, srv).Store.RateLimits()), ratelimit.WithStoreTimeout(calm)))
	if _, err := slow(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	_, err := slow(ctx, nil)
	if ra := retryAfter(t, err); ra <= deadline || ra > long {
		t.Errorf("RetryAfter = %v, want the wait for the next slot, within (%v, %v]", ra, deadline, long)
	}
	// A wait would end at the deadline; a refusal at once takes a round
	// trip, plus the slack of a loaded machine.
	if took := time.Since(start); took >= loadSlack {
		t.Errorf("the refusal took %v, want at once (a wait would take the deadline, %v)", took, deadline)
	}
}

// skewed is a clock off by offset; its timers are the system's.
type skewed struct{ offset time.Duration }

func (s skewed) Now() time.Time                       { return time.Now().Add(s.offset) }
func (s skewed) NewTimer(d time.Duration) clock.Timer { return clock.System.NewTimer(d) }

// TestRateLimitServerClock: replicas whose clocks are an hour apart admit
// exactly the burst between them: the limit is kept on Redis's clock.
func TestRateLimitServerClock(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	c := &counted{}
	var tools []toolmw.Tool
	for i, r := range newReplicas(t, srv, 3) {
		clk := skewed{offset: time.Duration(i-1) * time.Hour}
		tools = append(tools, mustWrap(t, "search", c.tool, ratelimit.New(rate.Every(time.Minute), 5,
			ratelimit.WithReject(), ratelimit.WithClock(clk), ratelimit.WithStore(r.Store.RateLimits()),
			ratelimit.WithStoreTimeout(calm))))
	}
	for i := range 30 {
		_, _ = tools[i%3](context.Background(), nil)
	}
	if n := c.runs(); n != 5 {
		t.Errorf("%d calls admitted by replicas an hour apart, want the burst, 5", n)
	}
}

// TestRateLimitKeys: a key is bounded and hashed whatever the layer's key
// is, starts with the prefix, and expires when its bucket is full again;
// stores with different prefixes do not share limits.
func TestRateLimitKeys(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	a := newReplica(t, srv, redisstate.WithPrefix("app-a:"))
	b := newReplica(t, srv, redisstate.WithPrefix("app-b:"))
	hostile := strings.Repeat("key\r\n*1\r\n$8\r\nFLUSHALL\r\n{tag}", 1000)
	key := func(toolmw.Call) string { return hostile }
	c := &counted{}
	ta := mustWrap(t, "search", c.tool, ratelimit.New(rate.Every(time.Second), 1, ratelimit.WithReject(),
		ratelimit.WithKey(key), ratelimit.WithStore(a.Store.RateLimits()), ratelimit.WithStoreTimeout(calm)))
	tb := mustWrap(t, "search", c.tool, ratelimit.New(rate.Every(time.Second), 1, ratelimit.WithReject(),
		ratelimit.WithKey(key), ratelimit.WithStore(b.Store.RateLimits()), ratelimit.WithStoreTimeout(calm)))
	for _, tool := range []toolmw.Tool{ta, tb} {
		if _, err := tool(context.Background(), nil); err != nil {
			t.Fatalf("the first call of a prefix: %v", err)
		}
	}
	if _, err := ta(context.Background(), nil); err == nil {
		t.Error("the second call within the interval was admitted")
	}
	ctx := context.Background()
	keys, err := a.Client.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if len(keys) != 2 || !strings.HasPrefix(keys[0], "app-a:rl:") || !strings.HasPrefix(keys[1], "app-b:rl:") {
		t.Fatalf("keys = %q, want one per prefix", keys)
	}
	for _, k := range keys {
		if len(k) != len("app-a:rl:")+32 {
			t.Errorf("key %q: want the prefix, rl: and 32 hex digits", k)
		}
		ttl, err := a.Client.PTTL(ctx, k).Result()
		if err != nil || ttl <= 0 || ttl > time.Second+2*time.Millisecond {
			t.Errorf("key %q expires in %v (%v), want within the interval, 1s", k, ttl, err)
		}
	}
}
