package redisstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	redisstate "github.com/toolmw/toolmw/adapters/redisstate"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/middleware/ratelimit/ratelimittest"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// calm is the store timeout of the tests where Redis is well: long enough
// that a busy test machine does not make the ports fall back.
const calm = 2 * time.Second

// counted is a tool that counts its runs.
type counted struct {
	mu sync.Mutex
	n  int
}

func (c *counted) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	c.mu.Lock()
	c.n++
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

// TestRateLimitStoreConformance runs the conformance checks of
// ratelimittest on Redis: a burst, refusals that take nothing, reserved
// slots one interval apart, never a wait beyond MaxWait, hostile keys kept
// apart, 50 racing callers given distinct slots and no more than the burst
// and the elapsed time allow. The checks expect each wait within the time
// they measured, so a loaded machine does not fail them.
func TestRateLimitStoreConformance(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	n := 0
	ratelimittest.TestStore(t, func(t *testing.T) ratelimit.Store {
		n++
		return newReplica(t, srv, redisstate.WithPrefix(fmt.Sprintf("conf%d:", n))).Store.RateLimits()
	})
}

// TestRateLimitRefusesPastDeadline: a call whose slot would come after its
// deadline is refused at once with the wait as RetryAfter, not made to
// wait for the deadline.
func TestRateLimitRefusesPastDeadline(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	c := &counted{}
	// The interval is long, so that however slow the machine, the second
	// call comes well within the first one's interval.
	const long, deadline = 10 * time.Second, 2 * time.Second
	slow := mustWrap(t, "book", c.tool, ratelimit.New(rate.Every(long), 1,
		ratelimit.WithStore(newReplica(t, srv).Store.RateLimits(), store.WithTimeout(calm))))
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
			ratelimit.WithReject(), ratelimit.WithClock(clk), ratelimit.WithStore(r.Store.RateLimits(), store.WithTimeout(calm)))))
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
		ratelimit.WithKey(key), ratelimit.WithStore(a.Store.RateLimits(), store.WithTimeout(calm))))
	tb := mustWrap(t, "search", c.tool, ratelimit.New(rate.Every(time.Second), 1, ratelimit.WithReject(),
		ratelimit.WithKey(key), ratelimit.WithStore(b.Store.RateLimits(), store.WithTimeout(calm))))
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
