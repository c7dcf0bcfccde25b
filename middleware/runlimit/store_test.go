package runlimit_test

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
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/taxonomy"
)

// memStore is a runlimit.Store in memory, shared by the "replicas" of a
// test, keeping the contract on operation ids: each op's effect applies
// once. It is safe for concurrent use.
type memStore struct {
	mu         sync.Mutex
	used       map[[2]string]int
	ops        map[string]byte // op → 't' taken or recorded, 'r' released or cancelled
	takeErr    error           // returned by Take when set
	releaseErr error           // returned by Release and Record when set
	hang       bool            // Take waits for its context

	takes, releases, records atomic.Int64
}

func (m *memStore) Take(ctx context.Context, id, tool string, limit int, op string) (bool, error) {
	m.takes.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hang {
		m.mu.Unlock()
		<-ctx.Done()
		m.mu.Lock()
		return false, ctx.Err()
	}
	if m.takeErr != nil {
		return false, m.takeErr
	}
	if st, ok := m.ops[op]; ok {
		return st == 't', nil
	}
	k := [2]string{id, tool}
	if m.used[k] >= limit {
		return false, nil
	}
	m.count(k, op, 1)
	return true, nil
}

func (m *memStore) Release(_ context.Context, id, tool, op string) error {
	m.releases.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.releaseErr != nil {
		return m.releaseErr
	}
	k := [2]string{id, tool}
	switch m.ops[op] {
	case 't':
		m.count(k, op, -1)
	case 0:
		m.count(k, op, 0)
	}
	return nil
}

func (m *memStore) Record(_ context.Context, id, tool, op string) error {
	m.records.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.releaseErr != nil {
		return m.releaseErr
	}
	if m.ops[op] != 't' {
		m.count([2]string{id, tool}, op, 1)
	}
	return nil
}

// count adds d to k's count, never below zero, and marks op taken (d > 0)
// or released.
func (m *memStore) count(k [2]string, op string, d int) {
	if m.used == nil {
		m.used, m.ops = map[[2]string]int{}, map[string]byte{}
	}
	m.used[k] = max(m.used[k]+d, 0)
	m.ops[op] = 'r'
	if d > 0 {
		m.ops[op] = 't'
	}
}

// count returns the Store's count of a run's tool.
func (m *memStore) countOf(id, tool string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used[[2]string{id, tool}]
}

func (m *memStore) set(f func(m *memStore)) {
	m.mu.Lock()
	f(m)
	m.mu.Unlock()
}

// reports collects a layer's StoreErrors. It is safe for concurrent use.
type reports struct {
	mu  sync.Mutex
	got []runlimit.StoreError
}

func (r *reports) add(e runlimit.StoreError) {
	r.mu.Lock()
	r.got = append(r.got, e)
	r.mu.Unlock()
}

func (r *reports) take() []runlimit.StoreError {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

// degraded returns a middleware, to wrap outside the layer, that records
// the call's Degraded note once the call returns, as tracing reads it.
func degraded(note *atomic.Value) toolmw.Middleware {
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			res, err := next(ctx, args)
			call, _ := toolmw.CallFrom(ctx)
			note.Store(call.Degraded)
			return res, err
		}
	}
}

// named returns a context with a new Run named id: one replica's view of
// the run.
func named(id string) context.Context {
	return budget.WithRun(context.Background(), budget.WithID(id))
}

var errDown = errors.New("store down at 10.0.0.7:6379")

// TestStoreAcrossReplicas: two replicas (two layers, each call with its own
// Run of the same id) sharing a Store run a tool declared Once exactly once
// under 100 concurrent calls, and one declared Max 3 exactly three times;
// another run has its own count. Without the Store each replica would run
// the tool on its own.
func TestStoreAcrossReplicas(t *testing.T) {
	cases := []struct {
		name  string
		limit runlimit.Option
		want  int64
	}{
		{"once", runlimit.Once("cancel_booking"), 1},
		{"max3", runlimit.Max("cancel_booking", 3), 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &memStore{}
			ct := &counted{}
			var replicas []toolmw.Tool
			for range 2 {
				replicas = append(replicas, wrap(t, "cancel_booking", ct.tool, runlimit.New(c.limit,
					runlimit.WithStore(st), runlimit.WithStoreTimeout(time.Minute),
					runlimit.WithOnStoreError(func(e runlimit.StoreError) { t.Errorf("store error: %s: %v", e.Op, e.Err) }))))
			}
			for _, id := range []string{"run-1", "run-2"} {
				before := ct.n.Load()
				var refused atomic.Int64
				var wg sync.WaitGroup
				for i := range 100 {
					wg.Go(func() {
						_, err := replicas[i%2](named(id), nil)
						switch {
						case isCallLimit(err):
							refused.Add(1)
						case err != nil:
							t.Errorf("call %d: %v", i, err)
						}
					})
				}
				wg.Wait()
				if n := ct.n.Load() - before; n != c.want {
					t.Errorf("%s: %d executions across two replicas, want %d", id, n, c.want)
				}
				if n := refused.Load(); n != 100-c.want {
					t.Errorf("%s: %d refusals, want %d", id, n, 100-c.want)
				}
			}
			// A replica whose own count of the run is full refuses
			// without asking.
			if n := st.takes.Load(); n > 200 || n < 2*c.want {
				t.Errorf("%d Takes, want at most one per call, 200", n)
			}
		})
	}
}

// TestStoreRelease: a call that had no effect (a transient failure, a
// breaker's refusal) gives its slot back to the Store, so another replica
// may make the call; one that may have acted (a permanent failure, a
// success) keeps it. A Release that fails is reported, and the slot stays
// taken until the Release is tried again, after the rest, and lands.
func TestStoreRelease(t *testing.T) {
	cases := []struct {
		name       string
		first      error // the first call's outcome
		releaseErr error
		releases   int64
		secondRuns bool // the other replica's call runs
		reported   []string
	}{
		{"transient", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down"), nil, 1, true, nil},
		{"circuit open", taxonomy.New(taxonomy.KindCircuitOpen, "circuit_open", "open"), nil, 1, true, nil},
		{"permanent", taxonomy.Failure("booking_failed", "failed"), nil, 0, false, nil},
		{"success", nil, nil, 0, false, nil},
		{"release fails", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down"), errDown, 1, false, []string{"release"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := &memStore{releaseErr: c.releaseErr}
				var rep reports
				first, second := &counted{err: c.first}, &counted{}
				mw := func() toolmw.Middleware {
					return runlimit.New(runlimit.Once("cancel_booking"), runlimit.WithStore(st),
						runlimit.WithStoreTimeout(time.Minute), runlimit.WithOnStoreError(rep.add))
				}
				a := wrap(t, "cancel_booking", first.tool, mw())
				b := wrap(t, "cancel_booking", second.tool, mw())
				if _, err := a(named("run-1"), nil); (err == nil) != (c.first == nil) ||
					err != nil && taxonomy.InfoOf(err).Code != taxonomy.InfoOf(c.first).Code {
					t.Fatalf("first call: %v, want %v", err, c.first)
				}
				_, err := b(named("run-1"), nil)
				if runs := second.n.Load() == 1; runs != c.secondRuns || runs && err != nil || !runs && !isCallLimit(err) {
					t.Errorf("the other replica's call: ran %v (%v), want ran %v", runs, err, c.secondRuns)
				}
				if n := st.releases.Load(); n != c.releases {
					t.Errorf("%d Releases, want %d", n, c.releases)
				}
				var ops []string
				for _, e := range rep.take() {
					ops = append(ops, e.Op)
					if !errors.Is(e.Err, c.releaseErr) {
						t.Errorf("reported %v, want the store's error", e.Err)
					}
				}
				if len(ops) != len(c.reported) || len(ops) > 0 && ops[0] != c.reported[0] {
					t.Errorf("reported ops %q, want %q", ops, c.reported)
				}
				if c.releaseErr == nil {
					return
				}
				st.set(func(m *memStore) { m.releaseErr = nil })
				time.Sleep(time.Second)
				if _, err := b(named("run-1"), nil); err != nil || second.n.Load() != 1 {
					t.Errorf("once the release landed, the other replica's call: ran %v (%v), want it to run", second.n.Load(), err)
				}
			})
		})
	}
}

// TestStoreUnnamedRun: a run without an id never asks the Store and keeps
// its in-process count, one per run.
func TestStoreUnnamedRun(t *testing.T) {
	st := &memStore{}
	ct := &counted{}
	tool := wrap(t, "cancel_booking", ct.tool, runlimit.New(runlimit.Once("cancel_booking"), runlimit.WithStore(st)))
	for range 2 {
		ctx := budget.WithRun(context.Background())
		if _, err := tool(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := tool(ctx, nil); !isCallLimit(err) {
			t.Fatalf("second call of the run: %v, want run_call_limit", err)
		}
	}
	if n := st.takes.Load() + st.releases.Load(); n != 0 {
		t.Errorf("the Store was asked %d times for unnamed runs, want never", n)
	}
	if n := ct.n.Load(); n != 2 {
		t.Errorf("%d executions, want one per run, 2", n)
	}
}

// TestStoreFailsOpen: when the Store fails, a call is counted in the
// replica's count of the run (which holds the calls the Store admitted
// there), reported with the Store's error and marked degraded; for a
// quarter of a second the Store is left alone and calls are counted
// locally, reported as resting; then it is asked again.
func TestStoreFailsOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &memStore{}
		var rep reports
		var note atomic.Value
		ct := &counted{}
		tool := wrap(t, "search", ct.tool, degraded(&note),
			runlimit.New(runlimit.Max("search", 5), runlimit.WithStore(st), runlimit.WithOnStoreError(rep.add)))
		ctx := named("run-1")

		// step is one call: whether it runs, asks the Store, and what it
		// reports.
		step := func(name string, runs, asks bool, report error) {
			t.Helper()
			n, takes := ct.n.Load(), st.takes.Load()
			_, err := tool(ctx, nil)
			if ran := ct.n.Load() > n; ran != runs || ran && err != nil || !ran && !isCallLimit(err) {
				t.Errorf("%s: ran %v (%v), want %v", name, ran, err, runs)
			}
			if asked := st.takes.Load() > takes; asked != asks {
				t.Errorf("%s: asked the store %v, want %v", name, asked, asks)
			}
			got := rep.take()
			switch {
			case report == nil && len(got) != 0:
				t.Errorf("%s: reported %v, want nothing", name, got)
			case report != nil && (len(got) != 1 || got[0].Op != "take" || (got[0].Err == errDown) != (report == errDown)):
				t.Errorf("%s: reported %v, want one take with %v", name, got, report)
			}
			want := ""
			if report != nil {
				want = "runlimit"
			}
			if d := note.Load(); d != want {
				t.Errorf("%s: degraded %q, want %q", name, d, want)
			}
		}
		resting := errors.New("resting")

		step("store admits", true, true, nil)
		st.set(func(m *memStore) { m.takeErr = errDown })
		step("store fails: counted locally", true, true, errDown)
		step("resting", true, false, resting)
		time.Sleep(250*time.Millisecond - time.Nanosecond)
		step("still resting", true, false, resting)
		time.Sleep(time.Nanosecond)
		step("rest over: asked again", true, true, errDown)
		step("the local count, with the store's call, is full: refused without asking", false, false, nil)
		time.Sleep(time.Second)
		// The calls that ran locally were written back: the Store's count
		// holds all five.
		if n := st.countOf("run-1", "search"); n != 5 {
			t.Errorf("the store counts %d calls, want 5", n)
		}
	})
}

// TestStoreHangs: a Store that does not answer holds a call for exactly the
// store timeout (50 ms by default); the call then runs, counted locally,
// reported with context.DeadlineExceeded. A call whose own context ends
// first does not run and is not reported.
func TestStoreHangs(t *testing.T) {
	cases := []struct {
		name     string
		timeout  time.Duration // WithStoreTimeout
		ctx      func() (context.Context, context.CancelFunc)
		wait     time.Duration
		runs     bool
		reported bool
		want     func(error) bool
	}{
		{"default timeout", 0, noDeadline, 50 * time.Millisecond, true, true, isNil},
		{"10ms", 10 * time.Millisecond, noDeadline, 10 * time.Millisecond, true, true, isNil},
		{"call deadline first", 0, deadline(20 * time.Millisecond), 20 * time.Millisecond, false, false, isTimeout},
		{"call cancelled", 0, cancelled, 0, false, false, isCanceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := &memStore{hang: true}
				var rep reports
				ct := &counted{}
				tool := wrap(t, "search", ct.tool, runlimit.New(runlimit.Once("search"),
					runlimit.WithStore(st), runlimit.WithStoreTimeout(c.timeout), runlimit.WithOnStoreError(rep.add)))
				ctx, cancel := c.ctx()
				defer cancel()
				ctx = budget.WithRun(ctx, budget.WithID("run-1"))
				start := time.Now()
				_, err := tool(ctx, nil)
				if d := time.Since(start); d != c.wait {
					t.Errorf("the call waited %v, want %v", d, c.wait)
				}
				if !c.want(err) {
					t.Errorf("error %v", err)
				}
				if ran := ct.n.Load() == 1; ran != c.runs {
					t.Errorf("ran %v, want %v", ran, c.runs)
				}
				got := rep.take()
				if reported := len(got) > 0; reported != c.reported {
					t.Fatalf("reported %v, want %v", got, c.reported)
				}
				if c.reported && !errors.Is(got[0].Err, context.DeadlineExceeded) {
					t.Errorf("reported %v, want context.DeadlineExceeded", got[0].Err)
				}
				// The take that did not answer is settled once the store
				// answers again: recorded when the call ran, cancelled
				// when it did not.
				st.set(func(m *memStore) { m.hang = false })
				time.Sleep(time.Second)
				want := 0
				if c.runs {
					want = 1
				}
				if n := st.countOf("run-1", "search"); n != want {
					t.Errorf("the store counts %d calls, want %d", n, want)
				}
				if c.wait > 0 && st.records.Load()+st.releases.Load() != 1 {
					t.Errorf("%d records and %d releases, want one of them", st.records.Load(), st.releases.Load())
				}
			})
		})
	}
}

func noDeadline() (context.Context, context.CancelFunc) { return context.Background(), func() {} }

func deadline(d time.Duration) func() (context.Context, context.CancelFunc) {
	return func() (context.Context, context.CancelFunc) { return context.WithTimeout(context.Background(), d) }
}

func cancelled() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx, cancel
}

func isNil(err error) bool { return err == nil }

func isTimeout(err error) bool {
	return taxonomy.InfoOf(err).Kind == taxonomy.KindTimeout && errors.Is(err, context.DeadlineExceeded)
}

func isCanceled(err error) bool { return errors.Is(err, context.Canceled) }

// TestStoreFailClosed: with WithFailClosed, a call the Store could not
// count does not run and is refused as run-limit-exceeded/run_call_limit,
// not retryable but not final either (a later call may succeed), unlike
// the limit's own refusal; it is reported and marked degraded. Once the
// Store answers, the call runs.
func TestStoreFailClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &memStore{takeErr: errDown}
		var rep reports
		var note atomic.Value
		ct := &counted{}
		tool := wrap(t, "cancel_booking", ct.tool, degraded(&note), runlimit.New(runlimit.Once("cancel_booking"),
			runlimit.WithStore(st), runlimit.WithFailClosed(), runlimit.WithOnStoreError(rep.add)))
		ctx := named("run-1")
		_, err := tool(ctx, nil)
		if !isCallLimit(err) || taxonomy.IsFinal(err) {
			t.Fatalf("store down, fail closed: %v (final %v), want run_call_limit, not final", err, taxonomy.IsFinal(err))
		}
		if ok, _ := taxonomy.ShouldRetry(err, true); ok {
			t.Error("ShouldRetry says retry the fail-closed refusal")
		}
		if ct.n.Load() != 0 {
			t.Error("the tool ran")
		}
		if got := rep.take(); len(got) != 1 || got[0].Err != errDown {
			t.Errorf("reported %v, want the store's error", got)
		}
		if d := note.Load(); d != "runlimit" {
			t.Errorf("degraded %q, want runlimit", d)
		}
		time.Sleep(250 * time.Millisecond)
		st.set(func(m *memStore) { m.takeErr = nil })
		if _, err := tool(ctx, nil); err != nil || ct.n.Load() != 1 {
			t.Fatalf("store back: %v, ran %d times, want one run", err, ct.n.Load())
		}
		_, err = tool(ctx, nil)
		if !isCallLimit(err) || !taxonomy.IsFinal(err) {
			t.Errorf("the limit's own refusal: %v (final %v), want final", err, taxonomy.IsFinal(err))
		}
	})
}

// TestStoreValidate: a negative store timeout is invalid; 0 is the default.
func TestStoreValidate(t *testing.T) {
	st := &memStore{}
	cases := []struct {
		opt   runlimit.Option
		valid bool
	}{
		{runlimit.WithStoreTimeout(-1), false},
		{runlimit.WithStoreTimeout(0), true},
		{runlimit.WithStoreTimeout(time.Second), true},
		{runlimit.WithStore(nil), true},
		{runlimit.WithFailClosed(), true},
		{runlimit.WithOnStoreError(nil), true},
	}
	for i, c := range cases {
		opts := []runlimit.Option{runlimit.Once("search"), runlimit.WithStore(st), c.opt}
		err := runlimit.Validate(opts...)
		if (err == nil) != c.valid {
			t.Errorf("case %d: Validate = %v, want valid %v", i, err, c.valid)
		}
		if !c.valid && taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
			t.Errorf("case %d: %v, want option_invalid", i, err)
		}
		_, werr := toolmw.Wrap(toolmw.Spec{Name: "search"}, (&counted{}).tool, runlimit.New(opts...))
		if (werr == nil) != c.valid {
			t.Errorf("case %d: Wrap = %v, want valid %v", i, werr, c.valid)
		}
	}
}

// TestStoreCorrupt: a Store that answers that the run's count does not
// parse (ErrStoreCorrupt) makes the call fail closed without
// WithFailClosed — run-limit-exceeded/run_calls_corrupt, the tool does not
// run, the call is not counted locally — and is reported; since the Store
// answered it is not left alone: the next call asks it again, and once the
// count parses again the tool runs. A Release that finds the count corrupt
// is reported and does not rest the Store either.
func TestStoreCorrupt(t *testing.T) {
	corrupt := errors.Join(errors.New("calls field is \"garbage\""), runlimit.ErrStoreCorrupt)
	store := &memStore{takeErr: corrupt}
	var r reports
	c := &counted{}
	tool := wrap(t, "pay", c.tool, runlimit.New(runlimit.Once("pay"), runlimit.WithStore(store), runlimit.WithOnStoreError(r.add)))
	for i := range 3 {
		_, err := tool(named("run-1"), nil)
		if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeRunCallsCorrupt || info.Kind != taxonomy.KindRunLimitExceeded || info.Retryable {
			t.Fatalf("call %d: %v, want run_calls_corrupt", i+1, err)
		}
	}
	got := r.take()
	if c.n.Load() != 0 || store.takes.Load() != 3 || len(got) != 3 || got[0].Op != "take" || !errors.Is(got[0].Err, runlimit.ErrStoreCorrupt) {
		t.Fatalf("%d executions, %d takes, reports %v", c.n.Load(), store.takes.Load(), got)
	}
	store.set(func(m *memStore) { m.takeErr = nil })
	if _, err := tool(named("run-1"), nil); err != nil {
		t.Fatalf("once the count parses: %v", err)
	}

	// Release.
	store.set(func(m *memStore) { m.releaseErr = corrupt })
	busy := wrap(t, "book", func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "busy")
	}, runlimit.New(runlimit.Once("book"), runlimit.WithStore(store), runlimit.WithOnStoreError(r.add)))
	takes := store.takes.Load()
	for _, id := range []string{"run-2", "run-3"} { // the count stays taken: one run each
		_, _ = busy(named(id), nil)
	}
	got = r.take()
	if store.takes.Load()-takes != 2 || len(got) != 2 || got[0].Op != "release" || !errors.Is(got[0].Err, runlimit.ErrStoreCorrupt) {
		t.Fatalf("%d takes, reports %v: want each call to ask the Store and each release reported", store.takes.Load()-takes, got)
	}
}
