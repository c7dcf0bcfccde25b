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
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/runlimit/runlimittest"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

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
			st := &runlimittest.MemStore{}
			ct := &counted{}
			var replicas []toolmw.Tool
			for range 2 {
				replicas = append(replicas, wrap(t, "cancel_booking", ct.tool, runlimit.New(c.limit,
					runlimit.WithStore(st, store.WithTimeout(time.Minute),
						store.WithOnError(func(e store.Error) { t.Errorf("store error: %s: %v", e.Op, e.Err) })))))
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
			if n := st.Calls("take"); n > 200 || n < 2*c.want {
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
				st := &runlimittest.MemStore{}
				st.Fail("release", c.releaseErr)
				var rep testutil.Reports
				first, second := &counted{err: c.first}, &counted{}
				mw := func() toolmw.Middleware {
					return runlimit.New(runlimit.Once("cancel_booking"), runlimit.WithStore(st, store.WithTimeout(time.Minute), store.WithOnError(rep.Add)))
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
				if n := st.Calls("release"); n != c.releases {
					t.Errorf("%d Releases, want %d", n, c.releases)
				}
				var ops []string
				for _, e := range rep.Take() {
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
				st.Fail("release", nil)
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
	st := &runlimittest.MemStore{}
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
	if n := st.Calls("take") + st.Calls("release"); n != 0 {
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
		st := &runlimittest.MemStore{}
		var rep testutil.Reports
		ct := &counted{}
		degraded, seen := testutil.Degraded()
		tool := wrap(t, "search", ct.tool, degraded,
			runlimit.New(runlimit.Max("search", 5), runlimit.WithStore(st, store.WithOnError(rep.Add))))
		testutil.FailsOpen{Layer: "runlimit", Op: "take",
			Call: func() (bool, error) {
				n := ct.n.Load()
				_, err := tool(named("run-1"), nil)
				return ct.n.Load() > n, err
			},
			Asked: func() int64 { return st.Calls("take") }, Fail: func(err error) { st.Fail("take", err) },
			Refusal: isCallLimit, Reports: &rep, Seen: seen}.Run(t)
		time.Sleep(time.Second)
		// The calls that ran locally were written back: the Store's count
		// holds all five.
		if n := st.Count("run-1", "search"); n != 5 {
			t.Errorf("the store counts %d calls, want 5", n)
		}
	})
}

// TestStoreHangs: a Store that does not answer holds a call for exactly the
// store timeout; the call then runs, counted locally, reported. A call
// whose own context ends first does not run and is not reported. The Take
// that did not answer is settled once the Store answers again: recorded
// when the call ran, cancelled when it did not.
func TestStoreHangs(t *testing.T) {
	testutil.Hangs(t, func(t *testing.T, c testutil.Hang, rep *testutil.Reports) (func(context.Context) (bool, error), func()) {
		st := &runlimittest.MemStore{}
		st.Hang("take")
		ct := &counted{}
		tool := wrap(t, "search", ct.tool, runlimit.New(runlimit.Once("search"),
			runlimit.WithStore(st, store.WithTimeout(c.Timeout), store.WithOnError(rep.Add))))
		call := func(ctx context.Context) (bool, error) {
			_, err := tool(budget.WithRun(ctx, budget.WithID("run-1")), nil)
			return ct.n.Load() == 1, err
		}
		return call, func() {
			st.Hang("")
			time.Sleep(time.Second)
			want := 0
			if c.Runs {
				want = 1
			}
			if n := st.Count("run-1", "search"); n != want {
				t.Errorf("the store counts %d calls, want %d", n, want)
			}
			if c.Wait > 0 && st.Calls("record")+st.Calls("release") != 1 {
				t.Errorf("%d records and %d releases, want one of them", st.Calls("record"), st.Calls("release"))
			}
		}
	})
}

// TestStoreFailClosed: with WithFailClosed, a call the Store could not
// count does not run and is refused as run-limit-exceeded/run_call_limit,
// not retryable but not final either (a later call may succeed), unlike
// the limit's own refusal; it is reported and marked degraded. Once the
// Store answers, the call runs.
func TestStoreFailClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &runlimittest.MemStore{}
		st.Fail("take", errDown)
		var rep testutil.Reports
		ct := &counted{}
		degraded, seen := testutil.Degraded()
		tool := wrap(t, "cancel_booking", ct.tool, degraded, runlimit.New(runlimit.Once("cancel_booking"),
			runlimit.WithFailClosed(), runlimit.WithStore(st, store.WithOnError(rep.Add))))
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
		if got := rep.Take(); len(got) != 1 || got[0] != (store.Error{Layer: "runlimit", Op: "take", Err: errDown, Refused: true}) {
			t.Errorf("reported %v, want the store's error, refused", got)
		}
		if d := seen(); d[len(d)-1] != "runlimit" {
			t.Errorf("degraded %q, want runlimit", d)
		}
		time.Sleep(250 * time.Millisecond)
		st.Fail("take", nil)
		if _, err := tool(ctx, nil); err != nil || ct.n.Load() != 1 {
			t.Fatalf("store back: %v, ran %d times, want one run", err, ct.n.Load())
		}
		_, err = tool(ctx, nil)
		if !isCallLimit(err) || !taxonomy.IsFinal(err) {
			t.Errorf("the limit's own refusal: %v (final %v), want final", err, taxonomy.IsFinal(err))
		}
	})
}

// TestStoreValidate: a store option that is invalid (a negative timeout)
// makes the layer invalid, refused at start-up; 0 is the default.
func TestStoreValidate(t *testing.T) {
	st := &runlimittest.MemStore{}
	opts := func(o runlimit.Option) []runlimit.Option {
		return []runlimit.Option{runlimit.Once("search"), runlimit.WithStore(st), o}
	}
	testutil.Options(t, func(o runlimit.Option) error { return runlimit.Validate(opts(o)...) },
		func(o runlimit.Option) error {
			_, err := toolmw.Wrap(toolmw.Spec{Name: "search"}, (&counted{}).tool, runlimit.New(opts(o)...))
			return err
		},
		[]runlimit.Option{
			runlimit.WithStore(st, store.WithTimeout(0)),
			runlimit.WithStore(st, store.WithTimeout(time.Second)),
			runlimit.WithStore(nil),
			runlimit.WithFailClosed(),
			runlimit.WithStore(st, nil, store.WithOnError(nil)),
		},
		[]runlimit.Option{
			runlimit.WithStore(st, store.WithTimeout(-1)),
			runlimit.WithStore(st, store.WithTimeout(time.Second), store.WithTimeout(-time.Nanosecond)),
		})
}

// TestStoreCorrupt: a Store that answers that the run's count does not
// parse (store.ErrCorrupt) makes the call fail closed without
// WithFailClosed — run-limit-exceeded/run_calls_corrupt, the tool does not
// run, the call is not counted locally — and is reported; since the Store
// answered it is not left alone: the next call asks it again, and once the
// count parses again the tool runs. A Release that finds the count corrupt
// is reported and does not rest the Store either.
func TestStoreCorrupt(t *testing.T) {
	corrupt := errors.Join(errors.New("calls field is \"garbage\""), store.ErrCorrupt)
	st := &runlimittest.MemStore{}
	st.Fail("take", corrupt)
	var r testutil.Reports
	c := &counted{}
	tool := wrap(t, "pay", c.tool, runlimit.New(runlimit.Once("pay"), runlimit.WithStore(st, store.WithOnError(r.Add))))
	for i := range 3 {
		_, err := tool(named("run-1"), nil)
		if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeRunCallsCorrupt || info.Kind != taxonomy.KindRunLimitExceeded || info.Retryable {
			t.Fatalf("call %d: %v, want run_calls_corrupt", i+1, err)
		}
	}
	got := r.Take()
	if c.n.Load() != 0 || st.Calls("take") != 3 || len(got) != 3 || got[0].Op != "take" || !got[0].Refused || !errors.Is(got[0].Err, store.ErrCorrupt) {
		t.Fatalf("%d executions, %d takes, reports %v", c.n.Load(), st.Calls("take"), got)
	}
	st.Fail("take", nil)
	if _, err := tool(named("run-1"), nil); err != nil {
		t.Fatalf("once the count parses: %v", err)
	}

	// Release.
	st.Fail("release", corrupt)
	busy := wrap(t, "book", func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "busy")
	}, runlimit.New(runlimit.Once("book"), runlimit.WithStore(st, store.WithOnError(r.Add))))
	takes := st.Calls("take")
	for _, id := range []string{"run-2", "run-3"} { // the count stays taken: one run each
		_, _ = busy(named(id), nil)
	}
	got = r.Take()
	if st.Calls("take")-takes != 2 || len(got) != 2 || got[0].Op != "release" || got[0].Refused || !errors.Is(got[0].Err, store.ErrCorrupt) {
		t.Fatalf("%d takes, reports %v: want each call to ask the Store and each release reported", st.Calls("take")-takes, got)
	}
}
