package breaker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
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

// foreign is a taxonomy.Error made outside package taxonomy, of a kind the
// breaker does not know (taxonomy.New would make it tool-failed).
type foreign struct{}

func (foreign) Error() string             { return "quota exceeded" }
func (foreign) Unwrap() error             { return nil }
func (foreign) Kind() taxonomy.Kind       { return "tool-quota-exceeded" }
func (foreign) Code() string              { return "quota_exceeded" }
func (foreign) Tool() string              { return "" }
func (foreign) Retryable() bool           { return false }
func (foreign) RetryAfter() time.Duration { return 0 }

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
		{"unknown kind", nil, foreign{}},
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
			if c := b.Counts(); c.Failures != 0 || c.Successes != 0 || c.Neutral != 100 || c.Requests != 100 {
				t.Fatalf("counts = %+v, want 100 neutral requests", c)
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

// RetryAfter is the time left of the open period, and the period ends when
// it says: inside the bubble gobreaker's time.Now and the breaker's clock
// are the same fake time.
func TestRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{err: transient}
		tool := wrap(t, "book", f, breaker.New())
		for range breaker.DefaultConsecutiveFailures {
			call(tool)
		}
		elapsed := time.Duration(0)
		for _, step := range []time.Duration{0, 10 * time.Second, 19 * time.Second, time.Second - time.Nanosecond} {
			time.Sleep(step)
			elapsed += step
			te, ok := taxonomy.From(call(tool))
			if !ok || te.Kind() != taxonomy.KindCircuitOpen {
				t.Fatalf("after %v: want circuit-open", elapsed)
			}
			if left := breaker.DefaultOpenFor - elapsed; te.RetryAfter() != left {
				t.Fatalf("after %v: RetryAfter = %v, want %v", elapsed, te.RetryAfter(), left)
			}
		}
		time.Sleep(time.Nanosecond) // the last RetryAfter
		before := f.n()
		call(tool)
		if f.n() != before+1 {
			t.Fatal("no probe once RetryAfter had passed")
		}
	})
}

// WithClock's clock stamps the events and computes RetryAfter.
func TestWithClock(t *testing.T) {
	fc := clock.NewFake(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	rec := &recorder{}
	tool := wrap(t, "book", &fake{err: transient}, breaker.New(breaker.WithClock(fc), breaker.WithOnStateChange(rec.record)))
	for range breaker.DefaultConsecutiveFailures {
		call(tool)
	}
	opened := fc.Now()
	fc.Advance(10 * time.Second)
	te, _ := taxonomy.From(call(tool))
	if te == nil || te.RetryAfter() != breaker.DefaultOpenFor-10*time.Second {
		t.Fatalf("err = %v, want RetryAfter %v by the fake clock", te, breaker.DefaultOpenFor-10*time.Second)
	}
	if e := rec.All(); len(e) != 1 || !e[0].Time.Equal(opened) {
		t.Fatalf("events = %+v, want one at %v", e, opened)
	}
}

type transition struct {
	name     string
	from, to breaker.State
}

// recorder keeps the state changes a breaker reports.
type recorder struct {
	testutil.Recorder[breaker.StateChangeEvent]
}

func (r *recorder) record(e breaker.StateChangeEvent) { r.Add(e) }

func (r *recorder) transitions() []transition {
	var got []transition
	for _, e := range r.All() {
		got = append(got, transition{e.Name, e.From, e.To})
	}
	return got
}

// An open breaker lets one probe through once its open period has passed;
// the probe's outcome closes it or opens it again. Each change is an event
// with the counts that decided it.
func TestProbe(t *testing.T) {
	for _, probeOK := range []bool{true, false} {
		t.Run(fmt.Sprintf("probe ok %v", probeOK), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				rec := &recorder{}
				f := &fake{err: transient}
				tool := wrap(t, "book", f, breaker.New(breaker.WithOnStateChange(rec.record)))
				for range breaker.DefaultConsecutiveFailures {
					call(tool)
				}
				time.Sleep(breaker.DefaultOpenFor - time.Nanosecond)
				if err := call(tool); !errors.Is(err, taxonomy.ErrCircuitOpen) {
					t.Fatalf("err = %v before the open period ended, want circuit-open", err)
				}
				time.Sleep(time.Nanosecond)
				if probeOK {
					f.set(nil)
				}
				before := f.n()
				if err := call(tool); (err == nil) != probeOK || f.n() != before+1 {
					t.Fatalf("probe: err = %v, tool ran %d times; want it to run once", err, f.n()-before)
				}
				opened, probed := start, start.Add(breaker.DefaultOpenFor)
				n := uint32(breaker.DefaultConsecutiveFailures)
				want := []breaker.StateChangeEvent{
					{Name: "book", From: breaker.StateClosed, To: breaker.StateOpen, Time: opened,
						Counts: breaker.Counts{Requests: n, Failures: n, ConsecutiveFailures: n}},
					{Name: "book", From: breaker.StateOpen, To: breaker.StateHalfOpen, Time: probed},
					{Name: "book", From: breaker.StateHalfOpen, To: breaker.StateClosed, Time: probed,
						Counts: breaker.Counts{Requests: 1, Successes: 1, ConsecutiveSuccesses: 1}},
				}
				if !probeOK {
					want[2].To = breaker.StateOpen
					want[2].Counts = breaker.Counts{Requests: 1, Failures: 1, ConsecutiveFailures: 1}
				}
				if got := rec.All(); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("events\n%+v\nwant\n%+v", got, want)
				}
			})
		})
	}
}

func TestHalfOpenProbesTaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := breaker.NewBreaker("upstream")
		mw := breaker.New(breaker.WithShared(b))
		failing := wrap(t, "a", &fake{err: transient}, mw)
		for range breaker.DefaultConsecutiveFailures {
			call(failing)
		}
		time.Sleep(breaker.DefaultOpenFor)

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
	})
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
	b = breaker.NewBreaker("upstream", breaker.WithOnStateChange(func(breaker.StateChangeEvent) {
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
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		first := true
		b := breaker.NewBreaker("upstream", breaker.WithOnStateChange(func(e breaker.StateChangeEvent) {
			if first {
				first = false
				panic("callback bug")
			}
			rec.record(e)
		}))
		tool := wrap(t, "a", &fake{err: transient}, breaker.New(breaker.WithShared(b)))
		for range breaker.DefaultConsecutiveFailures - 1 {
			call(tool)
		}
		func() {
			defer func() { recover() }()
			call(tool)
		}()
		time.Sleep(breaker.DefaultOpenFor)
		call(tool) // half-open probe fails: open again
		want := []transition{{"upstream", breaker.StateOpen, breaker.StateHalfOpen}, {"upstream", breaker.StateHalfOpen, breaker.StateOpen}}
		if got := rec.transitions(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("transitions = %v, want %v", got, want)
		}
	})
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
	// Zero and nil mean the default.
	zero := []breaker.Option{
		breaker.WithOpenFor(0), breaker.WithProbes(0), breaker.WithConsecutiveFailures(0),
		breaker.WithFailureRatio(0, 0), breaker.WithInterval(0), breaker.WithMaxKeys(0),
		breaker.WithIsFailure(nil), breaker.WithShared(nil), breaker.WithKey(nil),
		breaker.WithClock(nil), breaker.WithOnStateChange(nil), nil,
	}
	good := append([]breaker.Option{breaker.WithOpenFor(time.Second), breaker.WithProbes(2),
		breaker.WithFailureRatio(1, 1), breaker.WithFailureRatio(0.5, 0)}, zero...)
	for i, o := range good {
		if err := breaker.Validate(o); err != nil {
			t.Errorf("option %d: Validate = %v, want nil", i, err)
		}
	}
	bad := []breaker.Option{
		breaker.WithOpenFor(-time.Second),
		breaker.WithProbes(-1),
		breaker.WithConsecutiveFailures(-1),
		breaker.WithFailureRatio(-0.5, 10),
		breaker.WithFailureRatio(1.5, 10),
		breaker.WithFailureRatio(math.NaN(), 10),
		breaker.WithFailureRatio(0.5, -1),
		breaker.WithInterval(-1),
		breaker.WithMaxKeys(-1),
	}
	for i, o := range bad {
		err := breaker.Validate(o)
		te, ok := taxonomy.From(err)
		if !ok || te.Kind() != taxonomy.KindDefinitionInvalid || te.Code() != taxonomy.CodeOptionInvalid || !strings.HasPrefix(te.Error(), "tool-definition-invalid option_invalid: breaker: With") {
			t.Errorf("option %d: Validate = %v, want tool-definition-invalid/option_invalid naming the option", i, err)
		}
	}
	// New makes a toolmw.Reject middleware of them: Wrap reports the error
	// at start-up, and the tool is never wrapped. So does New given a
	// shared breaker made with them, which keeps its defaults meanwhile.
	for i, o := range bad {
		for what, mw := range map[string]toolmw.Middleware{
			"New":                   breaker.New(o),
			"New(WithShared(bad))":  breaker.New(breaker.WithShared(breaker.NewBreaker("upstream", o))),
			"New among good values": breaker.New(append(zero, o)...),
		} {
			_, err := toolmw.Wrap(toolmw.Spec{Name: "a"}, (&fake{}).tool, mw)
			if te, ok := taxonomy.From(err); !ok || te.Code() != taxonomy.CodeOptionInvalid || !strings.HasSuffix(err.Error(), breaker.Validate(o).Error()) {
				t.Errorf("option %d, %s: Wrap = %v, want %v", i, what, err, breaker.Validate(o))
			}
		}
	}
	// Zero and nil keep the defaults.
	synctest.Test(t, func(t *testing.T) {
		f := &fake{err: transient}
		tool := wrap(t, "a", f, breaker.New(zero...))
		for range breaker.DefaultConsecutiveFailures + 3 {
			call(tool)
		}
		if f.n() != breaker.DefaultConsecutiveFailures {
			t.Fatalf("the tool ran %d times, want the default %d", f.n(), breaker.DefaultConsecutiveFailures)
		}
		time.Sleep(breaker.DefaultOpenFor - time.Nanosecond)
		call(tool)
		time.Sleep(time.Nanosecond)
		call(tool)
		if f.n() != breaker.DefaultConsecutiveFailures+1 {
			t.Fatalf("the tool ran %d times, want one probe after the default open period", f.n())
		}
	})
	// By hand, a breaker made with a bad option works with the defaults.
	b := breaker.NewBreaker("upstream", breaker.WithOpenFor(-1))
	for range breaker.DefaultConsecutiveFailures {
		b.State()
	}
	if b.State() != breaker.StateClosed {
		t.Fatal("a breaker made with a bad option is not usable")
	}
}

// WithMaxKeys bounds the keyed breakers: a new key beyond it drops the key
// used least recently, whose breaker starts closed on its next use.
func TestMaxKeys(t *testing.T) {
	f := &fake{err: transient}
	mw := breaker.New(breaker.WithMaxKeys(1), breaker.WithConsecutiveFailures(1),
		breaker.WithKey(func(c toolmw.Call) string { return c.Tool }))
	a, b := wrap(t, "a", f, mw), wrap(t, "b", &fake{}, mw)
	call(a)
	if err := call(a); !errors.Is(err, taxonomy.ErrCircuitOpen) {
		t.Fatalf("a: err = %v, want circuit-open", err)
	}
	call(b) // drops a
	before := f.n()
	call(a)
	if f.n() != before+1 {
		t.Fatal("a's breaker was kept past the bound")
	}
}

func TestStateString(t *testing.T) {
	for s, want := range map[breaker.State]string{
		breaker.StateClosed: "closed", breaker.StateHalfOpen: "half-open", breaker.StateOpen: "open", 7: "State(7)",
	} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(s), s.String(), want)
		}
	}
	var zero breaker.State
	if zero != breaker.StateClosed {
		t.Error("the zero State is not closed")
	}
}

// Concurrent calls move a shared breaker through many open periods; its
// changes reach the callback in order, each starting where the last ended.
func TestConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		b := breaker.NewBreaker("upstream", breaker.WithOnStateChange(rec.record), breaker.WithOpenFor(5*time.Millisecond))
		f := &fake{err: transient}
		tool := wrap(t, "a", f, breaker.New(breaker.WithShared(b)))
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 200 {
					call(tool)
					b.State()
					time.Sleep(time.Millisecond)
				}
			})
		}
		wg.Wait()
		b.State()
		prev := breaker.StateClosed
		got := rec.All()
		for _, e := range got {
			if e.From != prev {
				t.Fatalf("change %v -> %v does not follow %v", e.From, e.To, prev)
			}
			prev = e.To
		}
		if len(got) < 10 {
			t.Fatalf("%d state changes, want many open periods", len(got))
		}
	})
}
