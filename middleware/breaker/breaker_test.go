package breaker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake is a tool that returns err and counts its calls.
type fake struct {
	mu    sync.Mutex
	err   error
	calls int
}

func (f *fake) set(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

func (f *fake) n() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fake) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return toolmw.Result{}, f.err
	}
	return toolmw.Text("ok"), nil
}

func wrap(t *testing.T, name string, f *fake, mws ...toolmw.Middleware) toolmw.Tool {
	t.Helper()
	tool, err := toolmw.Wrap(toolmw.Spec{Name: name}, f.tool, mws...)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func call(tool toolmw.Tool) error {
	_, err := tool(context.Background(), nil)
	return err
}

// same reports whether got is want, or a copy of it naming the tool.
func same(got, want error) bool {
	if errors.Is(got, want) {
		return true
	}
	g, ok1 := taxonomy.From(got)
	w, ok2 := taxonomy.From(want)
	return ok1 && ok2 && g.Kind() == w.Kind() && g.Code() == w.Code()
}

var transient = taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier is down")

func TestNeutralOutcomesNeverTrip(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
	}{
		{"refusal", nil, taxonomy.Refusal("booking_not_cancellable", "non-refundable")},
		{"args invalid", nil, taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "missing", Loc: []any{"id"}, Msg: "Field required"})},
		{"not permitted", nil, taxonomy.NotPermitted(taxonomy.CodeNotPermitted, "denied")},
		{"upstream forbidden", nil, taxonomy.NotPermitted(taxonomy.CodeUpstreamForbidden, "403")},
		{"not found", nil, taxonomy.New(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, "no such tool")},
		{"result invalid", nil, taxonomy.ResultInvalid(taxonomy.CodeResultNotUTF8, "bad bytes")},
		{"rate limited", nil, taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeRateLimited, "slow down")},
		{"upstream 429", nil, taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeUpstreamRateLimited, "429")},
		{"inner breaker open", nil, taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "open")},
		{"upstream bad request", nil, taxonomy.Failure(taxonomy.CodeUpstreamBadRequest, "400")},
		{"unknown kind", nil, taxonomy.New("tool-quota-exceeded", "quota_exceeded", "quota")},
		{"bare cancellation", nil, context.Canceled},
		{"wrapped cancellation", nil, fmt.Errorf("fetch: %w", context.Canceled)},
		{"failure caused by cancellation", nil, taxonomy.Transient("fetch_failed", "x").WithCause(context.Canceled)},
		{"transient after caller cancelled", cancelled, transient},
		{"timeout after caller's deadline", expired, taxonomy.Timeout(taxonomy.CodeDeadlineExceeded, "deadline", false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			f := &fake{err: tt.err}
			b := breaker.NewBreaker("upstream")
			tool := wrap(t, "book", f, breaker.New(breaker.WithShared(b)))
			for range 100 {
				if _, err := tool(ctx, nil); !same(err, tt.err) {
					t.Fatalf("err = %v, want the tool's %v", err, tt.err)
				}
			}
			if f.n() != 100 || b.State() != breaker.StateClosed {
				t.Fatalf("calls = %d, state = %v; want 100 calls through a closed breaker", f.n(), b.State())
			}
			if c := b.Counts(); c.TotalFailures != 0 || c.TotalSuccesses != 0 || c.TotalExclusions != 100 {
				t.Fatalf("counts = %+v, want 100 exclusions", c)
			}
		})
	}
}

func TestFaultsTrip(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"transient", transient},
		{"permanent", taxonomy.Failure("ledger_rejected", "no")},
		{"unmapped", taxonomy.Failure(taxonomy.CodeUnmappedFailure, "?")},
		{"per-attempt timeout", taxonomy.Timeout(taxonomy.CodeTimeout, "slow", true)},
		{"upstream timeout", taxonomy.Timeout(taxonomy.CodeUpstreamTimeout, "504", false)},
		{"untyped", errors.New("dial tcp: connection refused")},
		{"untyped deadline of the tool's own client", fmt.Errorf("get: %w", context.DeadlineExceeded)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{err: tt.err}
			tool := wrap(t, "book", f, breaker.New())
			for i := range breaker.DefaultConsecutiveFailures {
				if err := call(tool); !same(err, tt.err) {
					t.Fatalf("call %d: err = %v, want the tool's", i+1, err)
				}
			}
			err := call(tool)
			if f.n() != breaker.DefaultConsecutiveFailures {
				t.Fatalf("the tool ran %d times, want %d", f.n(), breaker.DefaultConsecutiveFailures)
			}
			te, ok := taxonomy.From(err)
			if !ok || te.Kind() != taxonomy.KindCircuitOpen || te.Code() != taxonomy.CodeCircuitOpen || !te.Retryable() {
				t.Fatalf("err = %v, want a retryable circuit-open/circuit_open", err)
			}
			if te.Tool() != "book" || !errors.Is(err, taxonomy.ErrCircuitOpen) || !errors.Is(err, gobreaker.ErrOpenState) {
				t.Fatalf("err = %v: want tool book, matching ErrCircuitOpen and gobreaker.ErrOpenState", err)
			}
		})
	}
}

func TestSuccessResetsTheRun(t *testing.T) {
	f := &fake{}
	tool := wrap(t, "book", f, breaker.New())
	for range 10 {
		f.set(transient)
		for range breaker.DefaultConsecutiveFailures - 1 {
			call(tool)
		}
		f.set(nil)
		if err := call(tool); err != nil {
			t.Fatalf("err = %v, want success", err)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	fc := clock.NewFake(time.Now())
	const openFor = 30 * time.Second
	f := &fake{err: transient}
	tool := wrap(t, "book", f, breaker.New(breaker.WithClock(fc), breaker.WithOpenFor(openFor)))
	for range breaker.DefaultConsecutiveFailures {
		call(tool)
	}
	opened := fc.Now()
	for _, elapsed := range []time.Duration{0, 10 * time.Second, 29 * time.Second} {
		fc.Set(opened.Add(elapsed))
		left := openFor - elapsed
		te, ok := taxonomy.From(call(tool))
		if !ok || te.Kind() != taxonomy.KindCircuitOpen {
			t.Fatalf("after %v: want circuit-open", elapsed)
		}
		if d := te.RetryAfter() - left; d < -left/10 || d > left/10 {
			t.Fatalf("after %v: RetryAfter = %v, want within 10%% of %v", elapsed, te.RetryAfter(), left)
		}
	}
}

type transition struct {
	name     string
	from, to breaker.State
}

type recorder struct {
	mu  sync.Mutex
	got []transition
}

func (r *recorder) record(name string, from, to breaker.State) {
	r.mu.Lock()
	r.got = append(r.got, transition{name, from, to})
	r.mu.Unlock()
}

func (r *recorder) transitions() []transition {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]transition(nil), r.got...)
}

func TestProbe(t *testing.T) {
	// gobreaker measures the open period with the real clock: keep it short.
	const openFor = 2 * time.Millisecond
	for _, probeOK := range []bool{true, false} {
		t.Run(fmt.Sprintf("probe ok %v", probeOK), func(t *testing.T) {
			rec := &recorder{}
			f := &fake{err: transient}
			tool := wrap(t, "book", f, breaker.New(breaker.WithOpenFor(openFor), breaker.WithOnStateChange(rec.record)))
			for range breaker.DefaultConsecutiveFailures {
				call(tool)
			}
			time.Sleep(openFor + time.Millisecond)
			if probeOK {
				f.set(nil)
			}
			before := f.n()
			if err := call(tool); (err == nil) != probeOK || f.n() != before+1 {
				t.Fatalf("probe: err = %v, tool ran %d times; want it to run once", err, f.n()-before)
			}
			want := []transition{
				{"book", breaker.StateClosed, breaker.StateOpen},
				{"book", breaker.StateOpen, breaker.StateHalfOpen},
				{"book", breaker.StateHalfOpen, breaker.StateClosed},
			}
			if !probeOK {
				want[2].to = breaker.StateOpen
			}
			if got := rec.transitions(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("transitions = %v, want %v", got, want)
			}
		})
	}
}

func TestHalfOpenProbesTaken(t *testing.T) {
	const openFor = 2 * time.Millisecond
	b := breaker.NewBreaker("upstream", breaker.WithOpenFor(openFor))
	mw := breaker.New(breaker.WithShared(b))
	failing := wrap(t, "a", &fake{err: transient}, mw)
	for range breaker.DefaultConsecutiveFailures {
		call(failing)
	}
	time.Sleep(openFor + time.Millisecond)

	entered, release := make(chan struct{}), make(chan struct{})
	slow, err := toolmw.Wrap(toolmw.Spec{Name: "b"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		close(entered)
		<-release
		return toolmw.Text("ok"), nil
	}, mw)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- call(slow) }()
	<-entered
	err = call(failing)
	te, ok := taxonomy.From(err)
	if !ok || te.Code() != taxonomy.CodeCircuitHalfOpen || !te.Retryable() || !errors.Is(err, gobreaker.ErrTooManyRequests) {
		t.Fatalf("err = %v, want a retryable circuit-open/circuit_half_open", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("probe: %v", err)
	}
	if s := b.State(); s != breaker.StateClosed {
		t.Fatalf("state = %v, want closed", s)
	}
}

func TestSharedTripsForAllTools(t *testing.T) {
	b := breaker.NewBreaker("payments")
	mw := breaker.New(breaker.WithShared(b))
	a, other := &fake{err: transient}, &fake{}
	charge, refund := wrap(t, "charge", a, mw), wrap(t, "refund", other, mw)
	for range breaker.DefaultConsecutiveFailures {
		call(charge)
	}
	if err := call(refund); !errors.Is(err, taxonomy.ErrCircuitOpen) || other.n() != 0 {
		t.Fatalf("refund: err = %v, ran %d times; want circuit-open without running", err, other.n())
	}
	if b.State() != breaker.StateOpen {
		t.Fatalf("state = %v", b.State())
	}
}

func TestKeyed(t *testing.T) {
	upstream := map[string]string{"charge": "payments", "refund": "payments", "search": "catalogue"}
	rec := &recorder{}
	mw := breaker.New(breaker.WithKey(func(c toolmw.Call) string { return upstream[c.Tool] }),
		breaker.WithOnStateChange(rec.record))
	charge := wrap(t, "charge", &fake{err: transient}, mw)
	refund, search := &fake{}, &fake{}
	refundT, searchT := wrap(t, "refund", refund, mw), wrap(t, "search", search, mw)
	for range breaker.DefaultConsecutiveFailures {
		call(charge)
	}
	if err := call(refundT); !errors.Is(err, taxonomy.ErrCircuitOpen) || refund.n() != 0 {
		t.Fatalf("refund: err = %v, want circuit-open", err)
	}
	if err := call(searchT); err != nil || search.n() != 1 {
		t.Fatalf("search: err = %v, want it to run on its own breaker", err)
	}
	want := []transition{{"payments", breaker.StateClosed, breaker.StateOpen}}
	if got := rec.transitions(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("transitions = %v, want %v", got, want)
	}
}

func TestPerToolByDefault(t *testing.T) {
	mw := breaker.New()
	a, other := &fake{err: transient}, &fake{}
	ta, tb := wrap(t, "a", a, mw), wrap(t, "b", other, mw)
	for range 2 * breaker.DefaultConsecutiveFailures {
		call(ta)
	}
	if err := call(tb); err != nil {
		t.Fatalf("b: %v; a's breaker must not open b's", err)
	}
}

func TestCallbackMayCallTheBreaker(t *testing.T) {
	var b *breaker.Breaker
	var states []breaker.State
	b = breaker.NewBreaker("upstream", breaker.WithOnStateChange(func(name string, from, to breaker.State) {
		// Both take gobreaker's lock: they would deadlock if it were held.
		states = append(states, b.State())
		_ = b.Counts()
	}))
	tool := wrap(t, "a", &fake{err: transient}, breaker.New(breaker.WithShared(b)))
	for range breaker.DefaultConsecutiveFailures {
		call(tool)
	}
	if len(states) != 1 || states[0] != breaker.StateOpen {
		t.Fatalf("states seen by the callback = %v, want [open]", states)
	}
}

func TestCallbackPanicDoesNotStopDelivery(t *testing.T) {
	rec := &recorder{}
	first := true
	b := breaker.NewBreaker("upstream", breaker.WithOpenFor(time.Millisecond), breaker.WithOnStateChange(func(name string, from, to breaker.State) {
		if first {
			first = false
			panic("callback bug")
		}
		rec.record(name, from, to)
	}))
	tool := wrap(t, "a", &fake{err: transient}, breaker.New(breaker.WithShared(b)))
	for range breaker.DefaultConsecutiveFailures - 1 {
		call(tool)
	}
	func() {
		defer func() { recover() }()
		call(tool)
	}()
	time.Sleep(2 * time.Millisecond)
	call(tool) // half-open probe fails: open again
	want := []transition{{"upstream", breaker.StateOpen, breaker.StateHalfOpen}, {"upstream", breaker.StateHalfOpen, breaker.StateOpen}}
	if got := rec.transitions(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("transitions = %v, want %v", got, want)
	}
}

func TestFailureRatio(t *testing.T) {
	b := breaker.NewBreaker("upstream", breaker.WithFailureRatio(0.5, 10))
	f := &fake{}
	tool := wrap(t, "a", f, breaker.New(breaker.WithShared(b)))
	// 9 counted outcomes, all failures but the first: below the minimum.
	call(tool)
	f.set(transient)
	for range 8 {
		call(tool)
	}
	if b.State() != breaker.StateClosed {
		t.Fatal("opened below the minimum number of requests")
	}
	// Neutral outcomes do not count towards the minimum.
	f.set(taxonomy.Refusal("no", "no"))
	for range 20 {
		call(tool)
	}
	if b.State() != breaker.StateClosed {
		t.Fatal("opened on neutral outcomes")
	}
	f.set(transient)
	call(tool)
	if b.State() != breaker.StateOpen {
		t.Fatalf("state = %v after 9 failures in 10, want open", b.State())
	}
}

func TestFailureRatioBelowThreshold(t *testing.T) {
	b := breaker.NewBreaker("upstream", breaker.WithFailureRatio(0.5, 10))
	f := &fake{}
	tool := wrap(t, "a", f, breaker.New(breaker.WithShared(b)))
	for i := range 100 {
		if i%3 == 0 {
			f.set(transient)
		} else {
			f.set(nil)
		}
		call(tool)
	}
	if b.State() != breaker.StateClosed {
		t.Fatal("a third of failures opened a breaker set at one half")
	}
}

func TestWithIsFailure(t *testing.T) {
	// Count upstream 429s too.
	count429 := func(err error) bool {
		te, ok := taxonomy.From(err)
		return breaker.IsFailure(err) || ok && te.Code() == taxonomy.CodeUpstreamRateLimited
	}
	f := &fake{err: taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeUpstreamRateLimited, "429")}
	tool := wrap(t, "a", f, breaker.New(breaker.WithIsFailure(count429), breaker.WithConsecutiveFailures(2)))
	call(tool)
	call(tool)
	if err := call(tool); !errors.Is(err, taxonomy.ErrCircuitOpen) {
		t.Fatalf("err = %v, want circuit-open", err)
	}
	// Cancellation stays neutral whatever the rule says.
	f = &fake{err: context.Canceled}
	tool = wrap(t, "a", f, breaker.New(breaker.WithIsFailure(func(error) bool { return true }), breaker.WithConsecutiveFailures(1)))
	for range 3 {
		if err := call(tool); err != context.Canceled {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	}
}

func TestPanicCountsAndPropagates(t *testing.T) {
	b := breaker.NewBreaker("upstream", breaker.WithConsecutiveFailures(1))
	tool := breaker.New(breaker.WithShared(b))(func(context.Context, json.RawMessage) (toolmw.Result, error) {
		panic("boom")
	})
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Fatalf("recovered %v, want the tool's panic", v)
			}
		}()
		call(tool)
	}()
	if b.State() != breaker.StateOpen {
		t.Fatalf("state = %v, want open", b.State())
	}
}

func TestUnwrappedTool(t *testing.T) {
	rec := &recorder{}
	tool := breaker.New(breaker.WithConsecutiveFailures(1), breaker.WithOnStateChange(rec.record))((&fake{err: transient}).tool)
	call(tool)
	if err := call(tool); !errors.Is(err, taxonomy.ErrCircuitOpen) {
		t.Fatalf("err = %v, want circuit-open", err)
	}
	if got := rec.transitions(); len(got) != 1 || got[0].name != "" {
		t.Fatalf("transitions = %v, want one, unnamed", got)
	}
}

func TestValidate(t *testing.T) {
	if err := breaker.Validate(breaker.WithOpenFor(time.Second), breaker.WithProbes(2), breaker.WithFailureRatio(1, 1)); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	bad := []breaker.Option{
		breaker.WithOpenFor(0),
		breaker.WithOpenFor(-time.Second),
		breaker.WithProbes(0),
		breaker.WithConsecutiveFailures(0),
		breaker.WithFailureRatio(0, 10),
		breaker.WithFailureRatio(1.5, 10),
		breaker.WithFailureRatio(0.5, 0),
		breaker.WithInterval(-1),
		breaker.WithIsFailure(nil),
		breaker.WithShared(nil),
		breaker.WithKey(nil),
	}
	for i, o := range bad {
		err := breaker.Validate(o)
		te, ok := taxonomy.From(err)
		if !ok || te.Kind() != taxonomy.KindDefinitionInvalid || te.Code() != taxonomy.CodeOptionInvalid {
			t.Errorf("option %d: Validate = %v, want tool-definition-invalid/option_invalid", i, err)
		}
	}
	// New ignores them and keeps the defaults.
	f := &fake{err: transient}
	tool := wrap(t, "a", f, breaker.New(append(bad, nil)...))
	for range breaker.DefaultConsecutiveFailures + 3 {
		call(tool)
	}
	if f.n() != breaker.DefaultConsecutiveFailures {
		t.Fatalf("the tool ran %d times, want the default %d", f.n(), breaker.DefaultConsecutiveFailures)
	}
}

func TestConcurrent(t *testing.T) {
	rec := &recorder{}
	b := breaker.NewBreaker("upstream", breaker.WithOnStateChange(rec.record), breaker.WithOpenFor(time.Millisecond))
	f := &fake{err: transient}
	tool := wrap(t, "a", f, breaker.New(breaker.WithShared(b)))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				call(tool)
				b.State()
			}
		}()
	}
	wg.Wait()
	b.State()
	// Transitions are delivered in order: each starts where the last ended.
	prev := breaker.StateClosed
	for _, tr := range rec.transitions() {
		if tr.from != prev {
			t.Fatalf("transition %v does not follow %v", tr, prev)
		}
		prev = tr.to
	}
}
