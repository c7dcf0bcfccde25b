package redisstate_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/store"
)

// storeTimeout is the ports' store timeout in the fault tests.
const storeTimeout = 50 * time.Millisecond

// fleetTool is one replica's stack with every port on Redis: the retry
// layer on a shared bucket, the rate limit on Redis (wide enough never to
// refuse: 10/s with a burst of a million; each call moves the key's
// arrival time 100 ms on, so the key outlives the calls long enough to be
// seen however slow the machine), and the replica's run, named, counted on
// Redis.
type fleetTool struct {
	tool toolmw.Tool
	ctx  context.Context
	run  *budget.Run
}

// fallbacks counts the fallbacks reported by every port and when the last
// one was.
type fallbacks struct {
	n       atomic.Int64
	last    atomic.Int64 // unix nanoseconds
	lastErr atomic.Value // string: the port and the error
}

func (f *fallbacks) report(port string, err error) {
	f.n.Add(1)
	f.last.Store(time.Now().UnixNano())
	f.lastErr.Store(port + ": " + err.Error())
}

func newFleet(t *testing.T, replicas []*replica, f *fallbacks, attemptsPerRun int) []fleetTool {
	t.Helper()
	var out []fleetTool
	for _, r := range replicas {
		b := budget.NewAdaptive(budget.WithTokenStore(r.Store.RetryBudget("search-api"),
			store.WithTimeout(storeTimeout),
			store.WithOnError(func(e store.Error) { f.report("retry budget", e.Err) })))
		run := budget.NewRun(budget.WithID("run-1"), budget.WithMaxAttempts(attemptsPerRun),
			budget.WithRunStore(r.Store.Runs(), store.WithTimeout(storeTimeout),
				store.WithOnError(func(e store.Error) { f.report("run", e.Err) })))
		tool := mustWrap(t, "search", (&counted{}).tool,
			retry.New(retry.WithBudget(b)),
			ratelimit.New(10, 1e6, ratelimit.WithStore(r.Store.RateLimits(), store.WithTimeout(storeTimeout),
				store.WithOnError(func(e store.Error) { f.report("rate limit", e.Err) }))))
		out = append(out, fleetTool{tool: tool, ctx: budget.ContextWithRun(context.Background(), run), run: run})
	}
	return out
}

// drive calls each replica's tool in a loop until stopped, each call with
// deadline, and reports calls that fail (a call that waited for Redis past
// its deadline fails). The function it returns stops the callers, waits
// for them, and fails the test if a call ended past its deadline by more
// than the slack of a loaded machine (it ignored its deadline). The test's
// cleanup stops them too, so a test that ends early (t.Fatal) leaves no
// caller to report into a finished test.
func drive(t *testing.T, fleet []fleetTool, deadline time.Duration) (stop func()) {
	var wg sync.WaitGroup
	var calls atomic.Int64
	var slowest atomic.Int64
	done := make(chan struct{})
	var once sync.Once
	halt := func() { once.Do(func() { close(done); wg.Wait() }) }
	t.Cleanup(halt)
	for i, f := range fleet {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(f.ctx, deadline)
				start := time.Now()
				_, err := f.tool(ctx, nil)
				took := time.Since(start)
				cancel()
				calls.Add(1)
				if err != nil {
					t.Errorf("replica %d: a call failed: %v", i, err)
				}
				for {
					s := slowest.Load()
					if int64(took) <= s || slowest.CompareAndSwap(s, int64(took)) {
						break
					}
				}
			}
		})
	}
	return func() {
		halt()
		t.Logf("%d calls, the slowest %v", calls.Load(), time.Duration(slowest.Load()))
		if s := time.Duration(slowest.Load()); s >= deadline+loadSlack {
			t.Errorf("a call took %v, past its deadline %v (+ %v for a loaded machine)", s, deadline, loadSlack)
		}
	}
}

// TestRedisKilledMidRun: redis-server killed while three replicas call and
// restarted: no call fails or outlasts its deadline, the ports fall back
// and report it while Redis is down, and the replicas use Redis again once
// it is back (no fallback reported after a rest, state written again).
func TestRedisKilledMidRun(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	f := &fallbacks{}
	fleet := newFleet(t, newReplicas(t, srv, 3), f, 1<<30)
	stop := drive(t, fleet, faultCallDeadline)

	time.Sleep(200 * time.Millisecond)
	srv.Kill()
	time.Sleep(400 * time.Millisecond)
	during := f.n.Load()
	srv.Restart()
	restarted := time.Now()
	waitQuiet(t, f, restarted)
	t.Logf("%d fallbacks while Redis was down", during)
	stop()

	if during == 0 {
		t.Error("no fallback reported while Redis was down")
	}
	// State resumed: the restarted (empty) server holds the fleet's keys
	// again, and the run's count goes on there.
	c := srv.Client()
	ctx := context.Background()
	for _, pattern := range []string{"toolmw:rl:*", "toolmw:rb:*", "toolmw:run:*"} {
		if keys := c.Keys(ctx, pattern).Val(); len(keys) != 1 {
			t.Errorf("keys %s after the restart: %q, want one", pattern, keys)
		}
	}
	if used := fleet[0].run.Used("search"); used == 0 {
		t.Error("the run counted nothing")
	}
}

// waitQuiet waits until the ports report no fallback for two rests (they
// use Redis again), and fails the test if that takes more than
// recoverWithin after Redis came back: go-redis redials a pool whose dials
// failed about once a second, so it may take a few, and more on a loaded
// machine.
func waitQuiet(t *testing.T, f *fallbacks, back time.Time) {
	t.Helper()
	const quiet = 2 * 250 * time.Millisecond
	for {
		n := f.n.Load()
		time.Sleep(quiet)
		if f.n.Load() == n {
			break
		}
		if time.Since(back) > recoverWithin {
			t.Fatalf("the ports still fall back %v after Redis came back (%v)", time.Since(back), f.lastErr.Load())
		}
	}
	t.Logf("the last fallback %v after Redis came back", time.Unix(0, f.last.Load()).Sub(back))
}

// TestRedisSlowed: Redis stalled (SIGSTOP): every port falls back within
// its store timeout, reports it with context.DeadlineExceeded, and no call
// fails or waits for Redis.
func TestRedisSlowed(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	replicas := newReplicas(t, srv, 3)
	f := &fallbacks{}
	fleet := newFleet(t, replicas, f, 1<<30)

	// Warm every replica's connection, then stall Redis.
	for _, ft := range fleet {
		if _, err := ft.tool(ft.ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	resume := srv.Stall()

	// Each port directly: within the store timeout, plus the slack of a
	// loaded machine (waiting for Redis would last the whole stall).
	r := replicas[0]
	var reports []store.Error
	var mu sync.Mutex
	onErr := store.WithOnError(func(e store.Error) { mu.Lock(); reports = append(reports, e); mu.Unlock() })
	b := budget.NewRetry(budget.WithTokenStore(r.Store.RetryBudget("slow"), onErr))
	run := budget.NewRun(budget.WithID("slow-run"), budget.WithRunStore(r.Store.Runs(), onErr))
	for name, op := range map[string]func() bool{"TryRetry": b.TryRetry, "Run.Take": func() bool { return run.Take("search") }} {
		start := time.Now()
		if !op() {
			t.Errorf("%s refused with local tokens left", name)
		}
		if took := time.Since(start); took > store.DefaultTimeout+loadSlack {
			t.Errorf("%s took %v while Redis was stalled, want the store timeout, %v (+ %v for a loaded machine)", name, took, store.DefaultTimeout, loadSlack)
		}
	}
	mu.Lock()
	if len(reports) != 2 || reports[0].Err != context.DeadlineExceeded {
		t.Errorf("reports = %+v, want two deadline exceeded", reports)
	}
	mu.Unlock()

	// The fleet, through its stacks, for longer than a call's deadline: a
	// call that waited for Redis would fail.
	stop := drive(t, fleet, faultCallDeadline)
	time.Sleep(faultStall)
	during := f.n.Load()
	if err := resume(); err != nil {
		t.Fatalf("resume redis-server: %v", err)
	}
	woke := time.Now()
	waitQuiet(t, f, woke)
	stop()
	if during == 0 {
		t.Error("no fallback reported while Redis was stalled")
	}
}
