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
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/breaker/breakertest"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"

	redisstate "github.com/toolmw/toolmw/adapters/redisstate"
)

// The shared breaker's tests run against a real redis-server (see
// server_test.go): the Store's conformance, then fleets of three replicas,
// each with its own client and its own toolmw stack.

func TestBreakerStoreConformance(t *testing.T) {
	srv := startRedis(t)
	n := 0
	breakertest.TestStore(t, func(t *testing.T) breaker.Store {
		n++
		return newReplica(t, srv, redisstate.WithPrefix(fmt.Sprintf("conf%d:", n))).Store.Breakers()
	}, time.Sleep) // open periods and leases run on Redis's clock
}

// supplier is the dependency behind the fleet's tool: up or down, and
// counting the calls that reach it.
type supplier struct {
	down  atomic.Bool
	calls atomic.Int64
	hold  chan struct{} // when not nil, a call waits for it to close
}

var errDown = taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "search API unreachable")

func (s *supplier) tool(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	s.calls.Add(1)
	if s.hold != nil {
		<-s.hold
	}
	if s.down.Load() {
		return toolmw.Result{}, errDown
	}
	return toolmw.Text("ok"), nil
}

// breakerFleet returns one tool "search" per replica, each with its own
// breaker on its replica's Store. The store timeout is generous (the
// machine is shared; the tests that are about the timeout use
// breakerFleetWith) and a fallback fails the test.
func breakerFleet(t *testing.T, rs []*replica, s *supplier, opts ...breaker.Option) []toolmw.Tool {
	t.Helper()
	return breakerFleetWith(t, rs, s, func(i int) []store.Option {
		return []store.Option{store.WithTimeout(2 * time.Second),
			store.WithOnError(func(e store.Error) { t.Errorf("replica %d fell back: %v", i, e.Err) })}
	}, opts...)
}

// breakerFleetWith is breakerFleet with the store options storeOpts(i)
// for replica i.
func breakerFleetWith(t *testing.T, rs []*replica, s *supplier, storeOpts func(i int) []store.Option, opts ...breaker.Option) []toolmw.Tool {
	t.Helper()
	tools := make([]toolmw.Tool, len(rs))
	for i, r := range rs {
		all := append([]breaker.Option{breaker.WithStore(r.Store.Breakers(), storeOpts(i)...)}, opts...)
		tools[i] = mustWrap(t, "search", s.tool, breaker.New(all...))
	}
	return tools
}

func code(err error) string {
	if err == nil {
		return "ok"
	}
	return taxonomy.InfoOf(err).Code
}

// An outage seen by one replica opens the breaker on all within one cache
// period, by the replicas' (fake) clocks; then the fleet's calls no longer
// reach the supplier, nor Redis, until the shared open period ends.
func TestBreakerOutageOpensFleetWithinCachePeriod(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	rs := newReplicas(t, srv, 3)
	clk := clock.NewFake(time.Now())
	s := &supplier{}
	fleet := breakerFleet(t, rs, s, breaker.WithClock(clk), breaker.WithCachePeriod(time.Second), breaker.WithOpenFor(time.Minute))
	ctx := context.Background()
	for _, tool := range fleet {
		if _, err := tool(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	s.down.Store(true)
	for range breaker.DefaultConsecutiveFailures {
		fleet[0](ctx, nil)
	}
	if _, err := fleet[0](ctx, nil); code(err) != taxonomy.CodeCircuitOpen {
		t.Fatalf("replica 0: %v, want circuit_open", err)
	}
	clk.Advance(time.Second - time.Millisecond)
	before := s.calls.Load()
	fleet[1](ctx, nil)
	if s.calls.Load() != before+1 {
		t.Fatal("replica 1 refused before its cache period ended: it had not read the open state")
	}
	clk.Advance(time.Millisecond)
	before = s.calls.Load()
	trips := make([]int64, len(rs))
	for i, r := range rs {
		trips[i] = r.RoundTrips.n.Load()
	}
	for range 100 {
		for i, tool := range fleet {
			_, err := tool(ctx, nil)
			if code(err) != taxonomy.CodeCircuitOpen {
				t.Fatalf("replica %d one cache period later: %v, want circuit_open", i, err)
			}
			if ra := time.Duration(taxonomy.InfoOf(err).RetryAfter); ra <= 0 || ra > time.Minute {
				t.Fatalf("RetryAfter = %v, want the time left of the shared open period", ra)
			}
		}
	}
	if got := s.calls.Load() - before; got != 0 {
		t.Fatalf("%d calls reached the supplier through the open breaker", got)
	}
	for i, r := range rs {
		// Replica 2 read the open state once; the others knew it.
		if got := r.RoundTrips.n.Load() - trips[i]; got > 1 {
			t.Fatalf("replica %d: %d round trips for 100 refusals, want at most 1", i, got)
		}
	}
}

// The same, measured on the system clock: replica 0 loses its way to the
// supplier (the others still reach it, so only replica 0 sees faults);
// every replica calls in a loop. The figure is how long after replica 0's
// breaker opened the last other replica refuses: at most one cache period
// plus a call's spacing. The bound asserted is generous (the machine is
// shared); the figure is logged.
func TestBreakerOutagePropagationMeasured(t *testing.T) {
	noLeaks(t)
	const period = 200 * time.Millisecond
	srv := startRedis(t)
	rs := newReplicas(t, srv, 3)
	sup := []*supplier{{}, {}, {}}
	var fleet []toolmw.Tool
	for i, r := range rs {
		fleet = append(fleet, breakerFleet(t, []*replica{r}, sup[i], breaker.WithCachePeriod(period), breaker.WithOpenFor(time.Minute))...)
	}
	var opened atomic.Int64 // unix nanoseconds when replica 0 first refused
	var warm sync.WaitGroup
	warm.Add(len(fleet))
	var wg sync.WaitGroup
	last := make([]time.Duration, len(fleet))
	for i, tool := range fleet {
		wg.Go(func() {
			warmed := false
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				_, err := tool(context.Background(), nil)
				if !warmed {
					warmed = true
					warm.Done()
				}
				if code(err) == taxonomy.CodeCircuitOpen {
					now := time.Now().UnixNano()
					if i == 0 {
						opened.CompareAndSwap(0, now)
					}
					last[i] = time.Duration(now - opened.Load())
					return
				}
				time.Sleep(time.Millisecond)
			}
			t.Errorf("replica %d never refused", i)
		})
	}
	warm.Wait() // every replica has read the closed state
	sup[0].down.Store(true)
	wg.Wait()
	worst := max(last[1], last[2])
	t.Logf("cache period %v: the breaker opened on every replica %v after it opened on the first (%v, %v)", period, worst, last[1], last[2])
	if sup[1].calls.Load() < 2 || sup[2].calls.Load() < 2 {
		t.Fatal("replicas 1 and 2 did not call before the outage")
	}
	if worst > period+loadSlack {
		t.Fatalf("the outage took %v to reach every replica, want within about one cache period (%v)", worst, period)
	}
}

// Exactly one probe runs across the fleet: three replicas, ten callers
// each, race once the shared open period (on Redis's clock) has ended;
// one call reaches the supplier, the others are refused while it runs,
// and its success closes the breaker for all.
func TestBreakerOneProbeAcrossFleet(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	rs := newReplicas(t, srv, 3)
	s := &supplier{}
	// The probe's lease lasts an open period: long enough that every racer
	// is refused while the probe holds it, however slow the machine (at
	// 300 ms, racers that a loaded machine ran late found the lease
	// expired and probed a second time, as a dead probe's lease allows).
	const openFor = 2 * time.Second
	fleet := breakerFleet(t, rs, s, breaker.WithOpenFor(openFor), breaker.WithCachePeriod(time.Millisecond))
	s.down.Store(true)
	for range breaker.DefaultConsecutiveFailures {
		fleet[0](context.Background(), nil)
	}
	time.Sleep(openFor + 100*time.Millisecond)
	s.down.Store(false)
	s.hold = make(chan struct{})
	before := s.calls.Load()
	var wg sync.WaitGroup
	var ok, refused atomic.Int32
	for i := range 30 {
		wg.Go(func() {
			_, err := fleet[i%3](context.Background(), nil)
			switch code(err) {
			case "ok":
				ok.Add(1)
			case taxonomy.CodeCircuitHalfOpen, taxonomy.CodeCircuitOpen:
				refused.Add(1)
			default:
				t.Errorf("err = %v", err)
			}
		})
	}
	for wait := time.Now().Add(10 * time.Second); refused.Load() < 29 && time.Now().Before(wait); {
		time.Sleep(time.Millisecond) // waits for the racers
	}
	close(s.hold)
	wg.Wait()
	if n := s.calls.Load() - before; n != 1 || ok.Load() != 1 {
		t.Fatalf("%d calls reached the supplier (%d succeeded), want exactly 1 probe", n, ok.Load())
	}
	s.hold = nil
	time.Sleep(2 * time.Millisecond) // the cache period
	for i, tool := range fleet {
		if _, err := tool(context.Background(), nil); err != nil {
			t.Fatalf("replica %d after the probe: %v, want closed", i, err)
		}
	}
}

// A probe whose replica dies (its process ends before it reports) frees
// the lease when its TTL passes: another replica probes then.
func TestBreakerDeadProbeFreesLease(t *testing.T) {
	srv := startRedis(t)
	r := newReplica(t, srv)
	st := r.Store.Breakers()
	ctx := context.Background()
	fault := breaker.Report{Outcome: breaker.OutcomeFault, Trip: true, Failures: 1, OpenFor: time.Millisecond}
	if snap, err := st.Report(ctx, "search", fault); err != nil || snap.State != breaker.StateOpen {
		t.Fatalf("%+v, %v", snap, err)
	}
	time.Sleep(5 * time.Millisecond)
	// The lease outlives the check below by far, however slow the machine.
	const ttl = 2 * time.Second
	if _, ok, err := st.Acquire(ctx, "search", breaker.Lease{Token: "dies", TTL: ttl}); !ok || err != nil {
		t.Fatalf("%v, %v", ok, err)
	}
	s := &supplier{}
	tool := breakerFleet(t, []*replica{newReplica(t, srv)}, s, breaker.WithCachePeriod(time.Millisecond))[0]
	if _, err := tool(ctx, nil); code(err) != taxonomy.CodeCircuitHalfOpen {
		t.Fatalf("while the dead probe's lease is held: %v, want circuit_half_open", err)
	}
	time.Sleep(ttl + 100*time.Millisecond)
	if _, err := tool(ctx, nil); err != nil || s.calls.Load() != 1 {
		t.Fatalf("after the lease's TTL: %v, %d calls; want this replica's probe to close it", err, s.calls.Load())
	}
}

// Keys start with the prefix, are bounded whatever the name, and expire.
func TestBreakerKeys(t *testing.T) {
	srv := startRedis(t)
	r := newReplica(t, srv, redisstate.WithPrefix("app:"), redisstate.WithTTL(time.Hour))
	st := r.Store.Breakers()
	ctx := context.Background()
	names := []string{"search", strings.Repeat("x", 1<<20), "*", "a\r\nFLUSHALL\r\n", "{slot}"}
	for _, name := range names {
		if _, err := st.Report(ctx, name, breaker.Report{Outcome: breaker.OutcomeFault, Failures: 5, OpenFor: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := r.Client.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(names) {
		t.Fatalf("%d keys for %d names: %q", len(keys), len(names), keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "app:cb:") || len(k) != len("app:cb:")+32 {
			t.Fatalf("key %q: want app:cb: and 32 hex digits", k)
		}
		if ttl := r.Client.PTTL(ctx, k).Val(); ttl <= 0 || ttl > time.Hour {
			t.Fatalf("key %q expires in %v, want within the TTL", k, ttl)
		}
	}
	// A success clears a name's failures: its key goes.
	if _, err := st.Report(ctx, "search", breaker.Report{Outcome: breaker.OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
	if n := r.Client.DBSize(ctx).Val(); n != int64(len(names)-1) {
		t.Fatalf("%d keys after a success, want %d", n, len(names)-1)
	}
}

// fleetCalls drives every tool in a loop, each call with deadline, until
// stopped; it returns a function that stops the callers, waits for them
// and returns the calls made, those that failed other than by the breaker
// or the supplier, and the longest call. The test's cleanup stops them too.
func fleetCalls(t *testing.T, fleet []toolmw.Tool, deadline time.Duration) func() (calls, bad int64, longest time.Duration, errs []error) {
	stop := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	halt := func() { once.Do(func() { close(stop); wg.Wait() }) }
	t.Cleanup(halt)
	var mu sync.Mutex
	var n, nbad int64
	var worst time.Duration
	var bads []error
	for _, tool := range fleet {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				start := time.Now()
				_, err := tool(ctx, nil)
				took := time.Since(start)
				cancel()
				mu.Lock()
				n++
				worst = max(worst, took)
				switch code(err) {
				case "ok", taxonomy.CodeCircuitOpen, taxonomy.CodeCircuitHalfOpen, taxonomy.CodeUpstreamUnavailable:
				default:
					nbad++
					bads = append(bads, err)
				}
				mu.Unlock()
				time.Sleep(time.Millisecond)
			}
		})
	}
	return func() (int64, int64, time.Duration, []error) {
		halt()
		return n, nbad, worst, bads
	}
}

// redis-server killed mid-run and restarted: no call fails or ends past
// its deadline because of Redis (the local breakers decide meanwhile), the
// fallback is reported, and the shared state resumes: after the restart an
// outage seen by one replica opens the breaker for all again.
func TestBreakerRedisKilledMidRun(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	rs := newReplicas(t, srv, 3)
	s := &supplier{}
	var fellBack atomic.Int64
	const deadline = faultCallDeadline
	fleet := breakerFleetWith(t, rs, s, func(int) []store.Option {
		return []store.Option{store.WithTimeout(storeTimeout), store.WithOnError(func(store.Error) { fellBack.Add(1) })}
	}, breaker.WithCachePeriod(20*time.Millisecond), breaker.WithOpenFor(time.Minute))
	wait := fleetCalls(t, fleet, deadline)
	time.Sleep(200 * time.Millisecond)
	srv.Kill()
	time.Sleep(400 * time.Millisecond)
	srv.Restart()
	// The rest ends and the replicas read Redis again: wait until no
	// fallback is reported for two rests (go-redis redials a pool whose
	// dials failed about once a second, so it may take a few).
	for back, n := time.Now(), fellBack.Load(); ; {
		time.Sleep(2 * 250 * time.Millisecond)
		if m := fellBack.Load(); m == n {
			break
		} else {
			n = m
		}
		if time.Since(back) > recoverWithin {
			t.Fatalf("the replicas still fall back %v after Redis came back", time.Since(back))
		}
	}
	calls, bad, longest, errs := wait()
	t.Logf("%d calls, %d fallbacks reported, longest call %v", calls, fellBack.Load(), longest)
	if bad != 0 {
		t.Fatalf("%d calls failed because of Redis: %v", bad, errs[0])
	}
	if longest >= deadline+loadSlack {
		t.Fatalf("a call took %v, past its %v deadline (+ %v for a loaded machine)", longest, deadline, loadSlack)
	}
	if fellBack.Load() == 0 {
		t.Fatal("no fallback was reported while Redis was down")
	}
	// The shared state resumes: an outage seen by replica 0 reaches the
	// others through the restarted Redis (20 faults: replica 0's last 20
	// calls succeeded, and the fluke rule wants 3 in 4 of them failed).
	s.down.Store(true)
	for range 20 {
		fleet[0](context.Background(), nil)
	}
	time.Sleep(30 * time.Millisecond) // the cache period
	for i, tool := range fleet {
		if _, err := tool(context.Background(), nil); code(err) != taxonomy.CodeCircuitOpen {
			t.Fatalf("replica %d after the restart: %v, want circuit_open from the shared state", i, err)
		}
	}
}

// Redis stalled (SIGSTOP): calls fall back to their local breakers within
// the store timeout instead of waiting for Redis.
func TestBreakerRedisSlowed(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	rs := newReplicas(t, srv, 3)
	s := &supplier{}
	const storeTimeout = 50 * time.Millisecond
	var fellBack atomic.Int64
	fleet := breakerFleetWith(t, rs, s, func(int) []store.Option {
		return []store.Option{store.WithTimeout(storeTimeout), store.WithOnError(func(e store.Error) {
			if errors.Is(e.Err, context.DeadlineExceeded) {
				fellBack.Add(1)
			}
		})}
	}, breaker.WithCachePeriod(time.Millisecond))
	for _, tool := range fleet {
		if _, err := tool(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	resume := srv.Stall()
	var longest time.Duration
	for range 5 {
		for _, tool := range fleet {
			ctx, cancel := context.WithTimeout(context.Background(), stalledCallTimeout)
			start := time.Now()
			_, err := tool(ctx, nil)
			longest = max(longest, time.Since(start))
			cancel()
			if err != nil {
				t.Fatalf("a call failed while Redis was stalled: %v", err)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := resume(); err != nil {
		t.Fatal(err)
	}
	t.Logf("store timeout %v: the longest call while Redis was stalled took %v; %d fallbacks", storeTimeout, longest, fellBack.Load())
	if longest > storeTimeout+loadSlack {
		t.Fatalf("a call took %v while Redis was stalled: it waited for Redis, not the store timeout (%v, + %v for a loaded machine)", longest, storeTimeout, loadSlack)
	}
	if fellBack.Load() < 3 {
		t.Fatalf("%d timeouts reported, want one per replica at least", fellBack.Load())
	}
}
