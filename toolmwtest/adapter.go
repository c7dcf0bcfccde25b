package toolmwtest

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// ModelCall is one tool call as a model writes it: its id, the tool's name
// and the arguments' JSON text.
type ModelCall struct {
	ID, Name, Args string
}

// Reply is how an adapter answered one call: its id, the text the model is
// sent (a ForModel envelope), and the call's error, if any.
type Reply struct {
	CallID, Text string
	Err          error
}

// Dispatch runs one model turn through the adapter under test and returns
// its replies, in the model's order, and the turn's stop (a *turn.Stop, or
// nil when the loop goes on). It must return what the adapter returned,
// not a copy it rebuilt, and re-raise a tool's panic as the adapter does.
type Dispatch func(ctx context.Context, calls []ModelCall) ([]Reply, error)

// NewDispatch makes the adapter under test over box, with o: o.MaxParallel
// is the adapter's bound of calls in flight (0 its default) and
// o.CountCalls its option to count calls in the run budget. The adapter
// offers the tools box holds when NewDispatch is called.
type NewDispatch func(t *testing.T, box *toolmw.Toolbox, o turn.Options) Dispatch

// TestAdapter runs the contract of an adapter that answers a model turn's
// tool calls through package turn: the calls of a turn run at the same
// time, within the bound, and are answered in the model's order; a panic
// reaches the caller after the other calls; a tool that calls
// runtime.Goexit ends its call only; a call of a tool the model was not
// offered does not run; and the run stops, typed, when its budget is used
// up, when every circuit is open, or when the context ends. Each case is a
// subtest.
func TestAdapter(t *testing.T, newDispatch NewDispatch) {
	t.Run("ConcurrentInOrder", func(t *testing.T) { testConcurrentInOrder(t, newDispatch) })
	t.Run("MaxParallel", func(t *testing.T) { testMaxParallel(t, newDispatch) })
	t.Run("RunBudgetAcrossTurns", func(t *testing.T) { testRunBudget(t, newDispatch) })
	t.Run("CircuitOpenStop", func(t *testing.T) { testCircuitOpen(t, newDispatch) })
	t.Run("Cancellation", func(t *testing.T) { testCancellation(t, newDispatch) })
	t.Run("OnlyOfferedTools", func(t *testing.T) { testOnlyOffered(t, newDispatch) })
	t.Run("PanicReachesCaller", func(t *testing.T) { testPanic(t, newDispatch) })
	t.Run("Goexit", func(t *testing.T) { testGoexit(t, newDispatch) })
	t.Run("CallsCounted", func(t *testing.T) { testCallsCounted(t, newDispatch) })
}

type cityIn struct {
	City string `json:"city,omitempty"` // optional: most tools here take {}
}

// register registers a tool of name on box, failing t on an error.
func register(t *testing.T, box *toolmw.Toolbox, spec toolmw.Spec, f func(context.Context, cityIn) (string, error)) {
	t.Helper()
	if err := box.Register(spec, toolmw.Typed(f)); err != nil {
		t.Fatal(err)
	}
}

// contents returns what each reply tells the model, failing t on a reply
// that is not one envelope or whose id is not the call's.
func contents(t *testing.T, calls []ModelCall, replies []Reply) []string {
	t.Helper()
	if len(replies) != len(calls) {
		t.Fatalf("%d replies to %d calls", len(replies), len(calls))
	}
	out := make([]string, len(replies))
	for i, r := range replies {
		if r.CallID != calls[i].ID {
			t.Errorf("reply %d answers %q, want %q (the model's order)", i, r.CallID, calls[i].ID)
		}
		_, out[i] = Envelope(t, r.Text)
	}
	return out
}

// stopOf returns err's *turn.Stop, failing t when it is none.
func stopOf(t *testing.T, err error, kind taxonomy.Kind) *turn.Stop {
	t.Helper()
	var stop *turn.Stop
	if !errors.As(err, &stop) || stop.Kind != kind {
		t.Fatalf("the turn ended with %v, want a %s stop", err, kind)
	}
	return stop
}

// The two calls of one turn are in flight at once (each waits at a barrier
// for the other), the first finishes last, and the replies still come in
// the model's order.
func testConcurrentInOrder(t *testing.T, newDispatch NewDispatch) {
	b := NewBarrier(2)
	var mu sync.Mutex
	var finished []string
	secondDone := make(chan struct{})
	box := toolmw.NewToolbox(middleware.Default().Middleware())
	register(t, box, toolmw.Spec{Name: "weather", Idempotent: true}, func(ctx context.Context, in cityIn) (string, error) {
		if err := b.Wait(ctx); err != nil {
			return "", err
		}
		defer b.Leave()
		if in.City == "Paris" { // the model's first call ends last
			select {
			case <-secondDone:
			case <-time.After(Guard):
				return "", ErrNotConcurrent
			}
		}
		mu.Lock()
		finished = append(finished, in.City)
		mu.Unlock()
		if in.City == "Tokyo" {
			close(secondDone)
		}
		return "sunny in " + in.City, nil
	})
	calls := []ModelCall{{"call_Paris", "weather", `{"city":"Paris"}`}, {"call_Tokyo", "weather", `{"city":"Tokyo"}`}}
	replies, err := newDispatch(t, box, turn.Options{})(context.Background(), calls)
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(t, calls, replies); got[0] != "sunny in Paris" || got[1] != "sunny in Tokyo" {
		t.Errorf("replies %q, want Paris then Tokyo", got)
	}
	if n := b.Most(); n != 2 {
		t.Errorf("at most %d calls were in flight at once, want 2", n)
	}
	if len(finished) != 2 || finished[0] != "Tokyo" {
		t.Errorf("finished %v, want Tokyo before Paris", finished)
	}
}

// MaxParallel 1 runs the calls one at a time, in the model's order.
func testMaxParallel(t *testing.T, newDispatch NewDispatch) {
	var in, most atomic.Int32
	var mu sync.Mutex
	var order []string
	box := toolmw.NewToolbox()
	register(t, box, toolmw.Spec{Name: "step"}, func(ctx context.Context, a cityIn) (string, error) {
		n := in.Add(1)
		defer in.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		mu.Lock()
		order = append(order, a.City)
		mu.Unlock()
		return a.City, nil
	})
	var calls []ModelCall
	for _, c := range []string{"a", "b", "c", "d", "e"} {
		calls = append(calls, ModelCall{"id_" + c, "step", `{"city":"` + c + `"}`})
	}
	replies, err := newDispatch(t, box, turn.Options{MaxParallel: 1})(context.Background(), calls)
	if err != nil {
		t.Fatal(err)
	}
	contents(t, calls, replies)
	if most.Load() != 1 || strings.Join(order, "") != "abcde" {
		t.Errorf("at most %d in flight, order %v; want 1 and a…e", most.Load(), order)
	}
}

// One run budget (budget.WithRun before the loop) spans the turns: lookup
// may make two attempts in the run; turn 1 uses both, turn 2's lookup is
// refused while note still runs, and turn 3, which wants only lookup,
// stops the run.
func testRunBudget(t *testing.T, newDispatch NewDispatch) {
	var lookups atomic.Int32
	box := toolmw.NewToolbox(middleware.Default().Middleware())
	for _, name := range []string{"lookup", "note"} {
		register(t, box, toolmw.Spec{Name: name, Idempotent: true}, func(ctx context.Context, in cityIn) (string, error) {
			if name == "lookup" {
				lookups.Add(1)
			}
			return name + " " + in.City, nil
		})
	}
	dispatch := newDispatch(t, box, turn.Options{})
	ctx := budget.WithRun(context.Background(), budget.WithToolMaxAttempts("lookup", 2))
	turn1 := []ModelCall{{"t1a", "lookup", `{"city":"Oslo"}`}, {"t1b", "lookup", `{"city":"Rome"}`}}
	if replies, err := dispatch(ctx, turn1); err != nil || contents(t, turn1, replies)[1] != "lookup Rome" {
		t.Fatalf("turn 1: %v", err)
	}
	turn2 := []ModelCall{{"t2a", "lookup", `{"city":"Lima"}`}, {"t2b", "note", `{"city":"Lima"}`}}
	replies, err := dispatch(ctx, turn2)
	if err != nil {
		t.Fatalf("turn 2 stopped with %v; note can still run", err)
	}
	got := contents(t, turn2, replies)
	if !strings.HasPrefix(got[0], "run-limit-exceeded run_attempts_exhausted") || got[1] != "note Lima" {
		t.Errorf("turn 2 answered %q, want lookup refused and note run", got)
	}
	turn3 := []ModelCall{{"t3a", "lookup", `{"city":"Lima"}`}}
	replies, err = dispatch(ctx, turn3)
	stopOf(t, err, taxonomy.KindRunLimitExceeded)
	if !errors.Is(err, taxonomy.ErrRunLimitExceeded) || taxonomy.InfoOf(err).Retryable {
		t.Errorf("the stop %v is not a final run-limit-exceeded", err)
	}
	if len(replies) != 1 {
		t.Errorf("the stopped turn has %d replies, want 1: its answers are complete", len(replies))
	}
	if n := lookups.Load(); n != 2 {
		t.Errorf("lookup ran %d times, want 2 (its run cap)", n)
	}
}

// When every tool the model wants has an open circuit, the turn stops with
// KindCircuitOpen and the wait until a circuit half-opens; one open
// circuit beside an unknown tool is not a stop.
func testCircuitOpen(t *testing.T, newDispatch NewDispatch) {
	const openFor = time.Hour
	box := toolmw.NewToolbox(middleware.Default(
		middleware.WithRetry(retry.WithMaxAttempts(1)),
		middleware.WithBreaker(breaker.WithConsecutiveFailures(1), breaker.WithOpenFor(openFor)),
	).Middleware())
	var runs atomic.Int32
	for _, name := range []string{"flights", "hotels"} {
		register(t, box, toolmw.Spec{Name: name, Idempotent: true}, func(ctx context.Context, in cityIn) (string, error) {
			runs.Add(1)
			return "", taxonomy.Transient("upstream_unavailable", "the booking system is down")
		})
	}
	dispatch := newDispatch(t, box, turn.Options{})
	ctx := context.Background()
	both := func(a, b string) []ModelCall {
		return []ModelCall{{a, "flights", `{"city":"Oslo"}`}, {b, "hotels", `{"city":"Oslo"}`}}
	}
	if replies, err := dispatch(ctx, both("c1", "c2")); err != nil || taxonomy.InfoOf(replies[0].Err).Code != "upstream_unavailable" {
		t.Fatalf("turn 1 = %v, %v; want two upstream failures and no stop", replies, err)
	}
	if _, err := dispatch(ctx, []ModelCall{{"c3", "flights", `{"city":"Oslo"}`}, {"c4", "cars", `{}`}}); err != nil {
		t.Fatalf("turn 2 stopped with %v; the model can act on not-found", err)
	}
	calls := both("c5", "c6")
	replies, err := dispatch(ctx, calls)
	stop := stopOf(t, err, taxonomy.KindCircuitOpen)
	if !errors.Is(err, taxonomy.ErrCircuitOpen) || stop.RetryAfter <= 0 || stop.RetryAfter > openFor {
		t.Errorf("stop %v with RetryAfter %v, want circuit-open within (0, %v]", err, stop.RetryAfter, openFor)
	}
	if ok, after := taxonomy.ShouldRetry(err, true); !ok || after != stop.RetryAfter {
		t.Errorf("ShouldRetry(stop) = %v, %v; want true, %v", ok, after, stop.RetryAfter)
	}
	for i, c := range contents(t, calls, replies) {
		if !strings.HasPrefix(c, "circuit-open") {
			t.Errorf("call %d answered %q, want circuit-open", i, c)
		}
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("the tools ran %d times, want 2 (only before the circuits opened)", n)
	}
}

// A context cancelled while the calls are in flight stops the run with
// KindCancelled, and every call is still answered; a turn started after it
// runs nothing.
func testCancellation(t *testing.T, newDispatch NewDispatch) {
	b := NewBarrier(2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ran atomic.Int32
	box := toolmw.NewToolbox(middleware.Default().Middleware())
	register(t, box, toolmw.Spec{Name: "slow"}, func(ctx context.Context, in cityIn) (string, error) {
		ran.Add(1)
		if err := b.Wait(ctx); err != nil {
			return "", err
		}
		cancel() // the user gives up while both calls run
		<-ctx.Done()
		return "", ctx.Err()
	})
	dispatch := newDispatch(t, box, turn.Options{})
	calls := []ModelCall{{"c1", "slow", `{"city":"a"}`}, {"c2", "slow", `{"city":"b"}`}}
	replies, err := dispatch(ctx, calls)
	stopOf(t, err, taxonomy.KindCancelled)
	if !errors.Is(err, context.Canceled) || taxonomy.InfoOf(err).Kind != taxonomy.KindCancelled {
		t.Errorf("the stop %v does not wrap context.Canceled", err)
	}
	contents(t, calls, replies)
	for _, r := range replies {
		if taxonomy.OutcomeOf(r.Err) != taxonomy.OutcomeCancelled {
			t.Errorf("call %s: outcome %s, want cancelled", r.CallID, taxonomy.OutcomeOf(r.Err))
		}
	}
	calls = []ModelCall{{"c3", "slow", `{"city":"c"}`}}
	replies, err = dispatch(ctx, calls)
	stopOf(t, err, taxonomy.KindCancelled)
	if got := contents(t, calls, replies); got[0] != "tool-cancelled cancelled" || ran.Load() != 2 {
		t.Errorf("a turn after the end answered %q and ran %d calls in all; want tool-cancelled and 2", got, ran.Load())
	}
}

// A call of a tool the model was not offered — unknown, an invalid name,
// or registered after the adapter was made — is answered tool-not-found
// without running; empty arguments read as {}.
func testOnlyOffered(t *testing.T, newDispatch NewDispatch) {
	box := toolmw.NewToolbox()
	register(t, box, toolmw.Spec{Name: "ping"}, func(context.Context, cityIn) (string, error) { return "pong", nil })
	dispatch := newDispatch(t, box, turn.Options{})
	var lateRan atomic.Bool
	register(t, box, toolmw.Spec{Name: "late"}, func(context.Context, cityIn) (string, error) {
		lateRan.Store(true)
		return "", nil
	})
	calls := []ModelCall{{"c1", "ping", ``}, {"c2", "late", `{}`}, {"c3", "no such tool!", `{}`}}
	replies, err := dispatch(context.Background(), calls)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pong", "tool-not-found tool_not_found: no tool named late",
		"tool-not-found tool_not_found: no tool has the requested name"}
	for i, got := range contents(t, calls, replies) {
		if got != want[i] {
			t.Errorf("call %s answered %q, want %q", calls[i].ID, got, want[i])
		}
	}
	if lateRan.Load() {
		t.Error("a tool registered after the adapter was made ran")
	}
}

// A panic in a tool with no recovery layer is raised in the caller's
// goroutine, as a sequential call would raise it, after the turn's other
// calls have returned.
func testPanic(t *testing.T, newDispatch NewDispatch) {
	var other atomic.Bool
	box := toolmw.NewToolbox()
	register(t, box, toolmw.Spec{Name: "boom"}, func(context.Context, cityIn) (string, error) { panic("boom") })
	register(t, box, toolmw.Spec{Name: "fine"}, func(context.Context, cityIn) (string, error) {
		other.Store(true)
		return "", nil
	})
	dispatch := newDispatch(t, box, turn.Options{})
	defer func() {
		if p := recover(); p != "boom" {
			t.Fatalf("recovered %v, want the tool's panic", p)
		}
		if !other.Load() {
			t.Error("the other call did not run")
		}
	}()
	_, _ = dispatch(context.Background(), []ModelCall{{"c1", "boom", `{}`}, {"c2", "fine", `{}`}})
	t.Fatal("the turn returned; want the tool's panic")
}

// A tool that ends its goroutine (runtime.Goexit, as t.FailNow does) ends
// its call as tool_exited; with one worker, a fresh one takes the calls
// left, and the turn is complete.
func testGoexit(t *testing.T, newDispatch NewDispatch) {
	box := toolmw.NewToolbox()
	register(t, box, toolmw.Spec{Name: "exits"}, func(context.Context, cityIn) (string, error) {
		runtime.Goexit()
		return "", nil
	})
	register(t, box, toolmw.Spec{Name: "fine"}, func(context.Context, cityIn) (string, error) { return "fine", nil })
	calls := []ModelCall{{"c1", "fine", `{}`}, {"c2", "exits", `{}`}, {"c3", "fine", `{}`}}
	replies, err := newDispatch(t, box, turn.Options{MaxParallel: 1})(context.Background(), calls)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fine", "tool-failed tool_exited: the tool ended its goroutine (runtime.Goexit)", "fine"}
	for i, got := range contents(t, calls, replies) {
		if got != want[i] {
			t.Errorf("call %d answered %q, want %q", i+1, got, want[i])
		}
	}
}

// For a box without a retry layer, CountCalls makes each call take an
// attempt from the run budget; without it nothing takes from the budget.
func testCallsCounted(t *testing.T, newDispatch NewDispatch) {
	var runs atomic.Int32
	box := toolmw.NewToolbox()
	register(t, box, toolmw.Spec{Name: "once"}, func(context.Context, cityIn) (string, error) {
		runs.Add(1)
		return "ok", nil
	})
	ctx := budget.WithRun(context.Background(), budget.WithMaxAttempts(1))
	calls := []ModelCall{{"a", "once", `{}`}, {"b", "once", `{}`}}
	for _, counted := range []bool{false, true} {
		runs.Store(0)
		replies, err := newDispatch(t, box, turn.Options{CountCalls: counted})(ctx, calls)
		contents(t, calls, replies)
		refused := 0
		for _, r := range replies {
			if taxonomy.InfoOf(r.Err).Kind == taxonomy.KindRunLimitExceeded {
				refused++
			}
		}
		switch {
		case err != nil:
			t.Errorf("counted %v: stopped with %v although a call ran", counted, err)
		case counted && (runs.Load() != 1 || refused != 1):
			t.Errorf("counted: %d runs, %d refused; want 1 and 1", runs.Load(), refused)
		case !counted && (runs.Load() != 2 || refused != 0):
			t.Errorf("uncounted: %d runs, %d refused; want 2 and 0", runs.Load(), refused)
		}
	}
}
