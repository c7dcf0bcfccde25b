package breaker_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/breaker/breakertest"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// flaky is a Store that fails, or hangs until its context ends, on demand.
type flaky struct {
	breaker.Store
	mu   sync.Mutex
	err  error // returned by every operation, when set
	hang bool  // every operation waits for its context
}

func (f *flaky) set(err error, hang bool) {
	f.mu.Lock()
	f.err, f.hang = err, hang
	f.mu.Unlock()
}

func (f *flaky) fail(ctx context.Context) error {
	f.mu.Lock()
	err, hang := f.err, f.hang
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return ctx.Err()
	}
	return err
}

func (f *flaky) Load(ctx context.Context, key string) (breaker.Snapshot, error) {
	if err := f.fail(ctx); err != nil {
		return breaker.Snapshot{}, err
	}
	return f.Store.Load(ctx, key)
}

func (f *flaky) Acquire(ctx context.Context, key string, l breaker.Lease) (breaker.Snapshot, bool, error) {
	if err := f.fail(ctx); err != nil {
		return breaker.Snapshot{}, false, err
	}
	return f.Store.Acquire(ctx, key, l)
}

func (f *flaky) Report(ctx context.Context, key string, r breaker.Report) (breaker.Snapshot, error) {
	if err := f.fail(ctx); err != nil {
		return breaker.Snapshot{}, err
	}
	return f.Store.Report(ctx, key, r)
}

// replicas returns n stacks wrapping f as tool "search", each with its own
// breaker on the shared store.
func replicas(t *testing.T, n int, f *fake, opts ...breaker.Option) []toolmw.Tool {
	t.Helper()
	tools := make([]toolmw.Tool, n)
	for i := range tools {
		tools[i] = wrap(t, "search", f, breaker.New(opts...))
	}
	return tools
}

func isOpen(err error) bool {
	te, ok := taxonomy.From(err)
	return ok && te.Kind() == taxonomy.KindCircuitOpen && te.Code() == taxonomy.CodeCircuitOpen
}

func isHalfOpen(err error) bool {
	te, ok := taxonomy.From(err)
	return ok && te.Code() == taxonomy.CodeCircuitHalfOpen
}

// An outage seen by one replica opens the breaker for all within one cache
// period, with RetryAfter the time left of the shared open period; the
// others pay no call to the dead dependency after it.
func TestSharedOutageOpensForAll(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	mem := breakertest.NewMemStore(clk)
	f := &fake{}
	r := replicas(t, 3, f, breaker.WithStore(mem), breaker.WithClock(clk),
		breaker.WithCachePeriod(time.Second), breaker.WithOpenFor(30*time.Second))
	for _, tool := range r {
		if err := call(tool); err != nil {
			t.Fatal(err)
		}
	}
	f.set(transient)
	for range breaker.DefaultConsecutiveFailures {
		if err := call(r[0]); !same(err, transient) {
			t.Fatalf("err = %v, want the tool's", err)
		}
	}
	if err := call(r[0]); !isOpen(err) {
		t.Fatalf("replica 0 after the outage: %v, want circuit-open", err)
	}
	// Replicas 1 and 2 trust what they read for the cache period: their
	// calls within it still run (and fail, and report).
	clk.Advance(time.Second - time.Nanosecond)
	ran := f.n()
	call(r[1])
	if f.n() != ran+1 {
		t.Fatal("replica 1 refused within its cache period; it had not read the open state")
	}
	clk.Advance(time.Nanosecond) // one cache period after the outage opened it
	ran = f.n()
	err := call(r[2])
	if !isOpen(err) || f.n() != ran {
		t.Fatalf("replica 2 one cache period later: %v (tool ran %d more), want circuit-open", err, f.n()-ran)
	}
	if te, _ := taxonomy.From(err); te.RetryAfter() != 29*time.Second {
		t.Fatalf("RetryAfter = %v, want 29s left of the shared open period", te.RetryAfter())
	}
	ops := mem.Ops()
	for range 100 {
		for _, tool := range r {
			if err := call(tool); !isOpen(err) {
				t.Fatalf("err = %v, want circuit-open", err)
			}
		}
	}
	if mem.Ops() != ops {
		t.Fatalf("an open breaker asked the store %d times; it knows when its open period ends", mem.Ops()-ops)
	}
}

// A closed breaker with no failure reads the store once per cache period,
// and its successes write nothing.
func TestSharedHealthyCostsNoRoundTrip(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	mem := breakertest.NewMemStore(clk)
	tool := replicas(t, 1, &fake{}, breaker.WithStore(mem), breaker.WithClock(clk))[0]
	for period := range 3 {
		for range 1000 {
			if err := call(tool); err != nil {
				t.Fatal(err)
			}
		}
		if got := mem.Ops(); got != int64(period+1) {
			t.Fatalf("after %d cache periods: %d store operations, want %d", period+1, got, period+1)
		}
		clk.Advance(breaker.DefaultCachePeriod)
	}
}

// A fault writes once; a success after it writes once (clearing it).
func TestSharedFaultWritesOnce(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	mem := breakertest.NewMemStore(clk)
	f := &fake{}
	tool := replicas(t, 1, f, breaker.WithStore(mem), breaker.WithClock(clk))[0]
	call(tool) // the first read
	f.set(transient)
	call(tool)
	if mem.Ops() != 2 {
		t.Fatalf("a fault: %d operations, want 1 read and 1 write", mem.Ops())
	}
	f.set(nil)
	call(tool)
	call(tool)
	if mem.Ops() != 3 {
		t.Fatalf("a success after a fault: %d operations, want one more write, then none", mem.Ops())
	}
}

// Exactly one probe runs across the fleet: replicas racing after the open
// period, several calls each, let one call through; the others are
// refused as half-open while it runs, and its success closes the breaker
// for all.
func TestSharedOneProbe(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	mem := breakertest.NewMemStore(clk)
	release := make(chan struct{})
	var running atomic.Int32
	down := atomic.Bool{}
	down.Store(true)
	tool := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		if down.Load() {
			return toolmw.Result{}, transient
		}
		running.Add(1)
		<-release
		return toolmw.Text("ok"), nil
	}
	opts := []breaker.Option{breaker.WithStore(mem), breaker.WithClock(clk), breaker.WithOpenFor(time.Minute)}
	var r []toolmw.Tool
	for range 3 {
		r = append(r, toolmw.MustWrap(toolmw.Spec{Name: "search"}, tool, breaker.New(opts...)))
	}
	for range breaker.DefaultConsecutiveFailures {
		r[0](context.Background(), nil)
	}
	clk.Advance(time.Minute)
	down.Store(false)
	var wg sync.WaitGroup
	var probes, refused atomic.Int32
	for i := range 30 {
		wg.Go(func() {
			_, err := r[i%3](context.Background(), nil)
			switch {
			case err == nil:
				probes.Add(1)
			case isHalfOpen(err):
				refused.Add(1)
			default:
				t.Errorf("err = %v, want success or circuit_half_open", err)
			}
		})
	}
	for wait := time.Now().Add(10 * time.Second); refused.Load() < 29 && time.Now().Before(wait); {
		time.Sleep(time.Millisecond) // waits for the racers, not for time
	}
	close(release)
	wg.Wait()
	if probes.Load() != 1 || running.Load() != 1 {
		t.Fatalf("%d probes ran (%d succeeded), want exactly 1", running.Load(), probes.Load())
	}
	clk.Advance(breaker.DefaultCachePeriod)
	for i, tool := range r {
		if _, err := tool(context.Background(), nil); err != nil {
			t.Fatalf("replica %d after the probe: %v, want the breaker closed", i, err)
		}
	}
}

// When the store fails, calls go through the local breaker and are
// reported; no call fails because of the store, the store rests, and the
// breaker reads it again once it answers.
func TestSharedStoreDownFallsBack(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	secret := canary.Values()[0]
	st := &flaky{Store: breakertest.NewMemStore(clk)}
	var reports []store.Error
	f := &fake{}
	tool := replicas(t, 1, f, breaker.WithStore(st, store.WithOnError(func(e store.Error) { reports = append(reports, e) })),
		breaker.WithClock(clk))[0]
	st.set(errors.New("dial tcp 10.0.0.7:6379: connection refused "+secret), false)
	for i := range 10 {
		_, err := tool(context.Background(), nil)
		if err != nil {
			t.Fatalf("call %d with the store down: %v", i, err)
		}
	}
	if len(reports) != 10 || reports[0].Key != "search" || reports[0].Layer != "breaker" ||
		reports[0].Op != "load" || reports[0].Refused || !strings.Contains(reports[0].Err.Error(), "refused") ||
		!errors.Is(reports[1].Err, store.ErrResting) {
		t.Fatalf("reports = %v, want 10 for search, the first the store's error, then resting", reports)
	}
	// The local breaker decides: it opens on local faults (30 of them,
	// after 10 successes: 3 in 4 of the last 20 counted calls failed).
	f.set(transient)
	for range 30 {
		call(tool)
	}
	err := call(tool)
	if !isOpen(err) {
		t.Fatalf("err = %v, want the local breaker open", err)
	}
	if _, leak := canary.Find(err.Error()); leak != "" {
		t.Fatalf("the store's error reached the call's: %v", err)
	}
	// The store answers again: after the rest, the shared (closed) state
	// decides.
	st.set(nil, false)
	f.set(nil)
	clk.Advance(time.Second)
	n := len(reports)
	if err := call(tool); err != nil {
		t.Fatalf("after the store came back: %v, want the shared closed state", err)
	}
	if len(reports) != n {
		t.Fatalf("%d reports after the store came back", len(reports)-n)
	}
}

// A store that hangs costs each call at most the store timeout, then the
// local breaker decides; no call fails because of it.
func TestSharedSlowStoreFallsBackWithinTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &flaky{Store: breakertest.NewMemStore(nil)}
		st.set(nil, true)
		var fell atomic.Int32
		tool := replicas(t, 1, &fake{}, breaker.WithStore(st, store.WithTimeout(20*time.Millisecond),
			store.WithOnError(func(e store.Error) {
				if errors.Is(e.Err, context.DeadlineExceeded) {
					fell.Add(1)
				}
			})))[0]
		start := time.Now()
		if err := call(tool); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 20*time.Millisecond {
			t.Fatalf("the call took %v, want the store timeout, 20ms", d)
		}
		start = time.Now()
		for range 10 {
			if err := call(tool); err != nil {
				t.Fatal(err)
			}
		}
		if d := time.Since(start); d != 0 || fell.Load() != 1 {
			t.Fatalf("resting: 10 calls took %v (%d timeouts), want none", d, fell.Load())
		}
		// A call's own deadline, shorter than the store timeout, bounds it.
		time.Sleep(time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		start = time.Now()
		tool(ctx, nil)
		if d := time.Since(start); d > 5*time.Millisecond {
			t.Fatalf("the call took %v, past its 5ms deadline", d)
		}
	})
}

// No lock is held across a call: four concurrent 200 ms calls through one
// shared breaker finish together.
func TestSharedCallsRunTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := breakertest.NewMemStore(nil)
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			time.Sleep(200 * time.Millisecond)
			return toolmw.Text("ok"), nil
		}, breaker.New(breaker.WithStore(mem)))
		start := time.Now()
		var wg sync.WaitGroup
		var ends [4]time.Duration
		for i := range ends {
			wg.Go(func() {
				tool(context.Background(), nil)
				ends[i] = time.Since(start)
			})
		}
		wg.Wait()
		for i, d := range ends {
			if d != 200*time.Millisecond {
				t.Fatalf("call %d finished after %v, want 200ms: %v", i, d, ends)
			}
		}
	})
}

// A replica that sees the shared state change reports it as its own
// breaker's state change.
func TestSharedStateChangeEvents(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	mem := breakertest.NewMemStore(clk)
	f := &fake{err: transient}
	var seen []string
	other := breaker.NewBreaker("search-api", breaker.WithStore(mem), breaker.WithClock(clk),
		breaker.WithOnStateChange(func(e breaker.StateChangeEvent) { seen = append(seen, e.Name+" "+e.From.String()+"->"+e.To.String()) }))
	first := wrap(t, "search", f, breaker.New(breaker.WithShared(breaker.NewBreaker("search-api", breaker.WithStore(mem), breaker.WithClock(clk)))))
	for range breaker.DefaultConsecutiveFailures {
		call(first)
	}
	if other.State() != breaker.StateClosed {
		t.Fatal("the other replica has read nothing yet")
	}
	call(wrap(t, "search", f, breaker.New(breaker.WithShared(other))))
	if other.State() != breaker.StateOpen || len(seen) != 1 || seen[0] != "search-api closed->open" {
		t.Fatalf("state %v, events %q; want open, one closed->open", other.State(), seen)
	}
}

// A panic in the tool counts as a fault and goes on.
func TestSharedPanicIsFault(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	mem := breakertest.NewMemStore(clk)
	b := breaker.NewBreaker("search", breaker.WithStore(mem), breaker.WithClock(clk), breaker.WithConsecutiveFailures(1))
	tool := breaker.New(breaker.WithShared(b))(func(context.Context, json.RawMessage) (toolmw.Result, error) { panic("boom") })
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not go on")
			}
		}()
		tool(context.Background(), nil)
	}()
	if b.State() != breaker.StateOpen {
		t.Fatalf("state = %v, want open", b.State())
	}
}

func TestStoreOptionsRejected(t *testing.T) {
	mem := breakertest.NewMemStore(nil)
	for name, opts := range map[string][]breaker.Option{
		"ratio":         {breaker.WithStore(mem), breaker.WithFailureRatio(0.5, 10)},
		"interval":      {breaker.WithStore(mem), breaker.WithInterval(time.Minute)},
		"shared":        {breaker.WithStore(mem), breaker.WithShared(breaker.NewBreaker("b"))},
		"cache period":  {breaker.WithCachePeriod(-time.Second)},
		"store timeout": {breaker.WithStore(mem, store.WithTimeout(-time.Second))},
	} {
		err := breaker.Validate(opts...)
		te, ok := taxonomy.From(err)
		if !ok || te.Code() != taxonomy.CodeOptionInvalid {
			t.Errorf("%s: Validate = %v, want option_invalid", name, err)
		}
	}
	if err := breaker.Validate(breaker.WithStore(mem, store.WithTimeout(0), store.WithOnError(nil), nil),
		breaker.WithCachePeriod(0), breaker.WithKey(func(c toolmw.Call) string { return c.Tool })); err != nil {
		t.Fatalf("Validate = %v, want nil", err)
	}
}

// WithStore given to NewBreaker: an invalid store option makes the
// breaker's error, which New given the breaker with WithShared reports at
// start-up; valid ones are used (here the timeout bounds a hung store and
// the report names the breaker).
func TestNewBreakerStoreOptions(t *testing.T) {
	mem := breakertest.NewMemStore(nil)
	bad := breaker.NewBreaker("upstream", breaker.WithStore(mem, store.WithTimeout(-time.Second)))
	err := breaker.Validate(breaker.WithShared(bad))
	if te, ok := taxonomy.From(err); !ok || te.Code() != taxonomy.CodeOptionInvalid || !strings.Contains(err.Error(), "store.WithTimeout") {
		t.Fatalf("Validate(WithShared(a breaker with a negative store timeout)) = %v, want option_invalid", err)
	}
	if _, err := toolmw.Wrap(toolmw.Spec{Name: "search"}, (&fake{}).tool, breaker.New(breaker.WithShared(bad))); err == nil {
		t.Fatal("Wrap accepted a shared breaker with a negative store timeout")
	}
	synctest.Test(t, func(t *testing.T) {
		st := &flaky{Store: breakertest.NewMemStore(nil)}
		st.set(nil, true)
		var reports []store.Error
		b := breaker.NewBreaker("upstream", breaker.WithStore(st, store.WithTimeout(30*time.Millisecond),
			store.WithOnError(func(e store.Error) { reports = append(reports, e) })))
		tool := wrap(t, "search", &fake{}, breaker.New(breaker.WithShared(b)))
		start := time.Now()
		if err := call(tool); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 30*time.Millisecond {
			t.Errorf("the call took %v, want the store timeout, 30ms", d)
		}
		if len(reports) != 1 || reports[0].Key != "upstream" || reports[0].Layer != "breaker" ||
			!errors.Is(reports[0].Err, context.DeadlineExceeded) {
			t.Errorf("reports = %+v, want one timeout of the breaker upstream", reports)
		}
	})
}

// A call decided on the replica's own breaker because the store failed is
// marked in the call record (Call.Degraded), which the tracing and logging
// layers outside show; a call the store decided is not.
func TestStoreFallbackMarksTheCall(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	st := &flaky{Store: breakertest.NewMemStore(clk)}
	observe, seen := testutil.Degraded()
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, (&fake{}).tool, observe,
		breaker.New(breaker.WithStore(st), breaker.WithClock(clk)))
	call(tool)
	st.set(errors.New("connection refused"), false)
	clk.Advance(breaker.DefaultCachePeriod) // the cached state is stale: the store is asked
	call(tool)                              // the store fails
	call(tool)                              // the store rests
	if got := seen(); len(got) != 3 || got[0] != "" || got[1] != "breaker" || got[2] != "breaker" {
		t.Fatalf("Call.Degraded = %q, want \"\", breaker, breaker", got)
	}
}

// heldLoad is a Store whose first Load reads the state, then holds its
// answer back until release is closed.
type heldLoad struct {
	breaker.Store
	once          sync.Once
	read, release chan struct{}
}

func (h *heldLoad) Load(ctx context.Context, key string) (breaker.Snapshot, error) {
	snap, err := h.Store.Load(ctx, key)
	first := false
	h.once.Do(func() { first = true })
	if first {
		close(h.read)
		<-h.release
	}
	return snap, err
}

// A late answer that read the breaker closed, arriving after the replica
// saw it open, does not reopen the way to the dead dependency: a breaker
// cannot leave the open state before its open period ends.
func TestSharedLateAnswerKeepsOpen(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	st := &heldLoad{Store: breakertest.NewMemStore(clk), read: make(chan struct{}), release: make(chan struct{})}
	b := breaker.NewBreaker("search", breaker.WithStore(st, store.WithTimeout(time.Minute)), // the held answer is late, not lost
		breaker.WithClock(clk),
		breaker.WithCachePeriod(time.Second), breaker.WithOpenFor(30*time.Second))
	running, finish := make(chan struct{}), make(chan struct{})
	slow, err := toolmw.Wrap(toolmw.Spec{Name: "search"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		close(running)
		<-finish
		return toolmw.Result{}, nil
	}, breaker.New(breaker.WithShared(b)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- call(slow) }()
	<-st.read // the slow call's Load has read "closed" and is held back

	f := &fake{}
	f.set(transient)
	tool := wrap(t, "search", f, breaker.New(breaker.WithShared(b)))
	for range breaker.DefaultConsecutiveFailures {
		if err := call(tool); !same(err, transient) {
			t.Fatalf("err = %v, want the tool's", err)
		}
	}
	if err := call(tool); !isOpen(err) {
		t.Fatalf("after the outage: %v, want circuit-open", err)
	}
	close(st.release)
	// The held call either runs its tool (it trusted the late "closed") or
	// ends, refused by the open state it had been overtaken by.
	var slowErr error
	select {
	case <-running:
		t.Error("the call whose answer was late ran its tool against an open breaker")
		close(finish)
		slowErr = <-done
	case slowErr = <-done:
	}
	if !isOpen(slowErr) {
		t.Errorf("the call whose answer was late: %v, want circuit-open", slowErr)
	}
	ran := f.n()
	if err := call(tool); !isOpen(err) || f.n() != ran {
		t.Errorf("after a late answer from before the outage: %v (tool ran %d more), want circuit-open", err, f.n()-ran)
	}
	if s := b.State(); s != breaker.StateOpen {
		t.Errorf("State() = %v, want open", s)
	}
}

// partialOutage is the error of a store one node of which failed (as the
// Redis Store reports a node of a cluster): the store rests that node
// itself.
type partialOutage struct{}

func (partialOutage) Error() string       { return "one node of the store failed" }
func (partialOutage) PartialOutage() bool { return true }

// A failure of part of the store does not rest the whole store: the next
// call asks it again (other keys live on other nodes), while a plain
// failure rests it.
func TestPartialOutageDoesNotRest(t *testing.T) {
	for _, c := range []struct {
		name  string
		err   error
		rests bool
	}{{"partial", partialOutage{}, false}, {"whole", errors.New("connection refused"), true}} {
		t.Run(c.name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(1e9, 0))
			st := &flaky{Store: breakertest.NewMemStore(clk)}
			var reports []store.Error
			tool := replicas(t, 1, &fake{}, breaker.WithStore(st, store.WithOnError(func(e store.Error) { reports = append(reports, e) })),
				breaker.WithClock(clk))[0]
			st.set(c.err, false)
			for range 2 {
				if _, err := tool(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
			}
			if len(reports) != 2 || errors.Is(reports[1].Err, store.ErrResting) != c.rests {
				t.Fatalf("reports = %v; want the second resting: %v", reports, c.rests)
			}
		})
	}
}
