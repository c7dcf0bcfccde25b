package retry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// script is a tool that returns errs in turn (nil = success) and then
// succeeds; it records the attempt number it saw on each call.
type script struct {
	mu       sync.Mutex
	errs     []error
	attempts []int
}

func (s *script) tool(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, _ := toolmw.CallFrom(ctx)
	s.attempts = append(s.attempts, c.Attempt)
	if i := len(s.attempts) - 1; i < len(s.errs) && s.errs[i] != nil {
		return toolmw.Result{}, s.errs[i]
	}
	return toolmw.Text("ok"), nil
}

func (s *script) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.attempts)
}

// always returns err on every call.
func always(err error, n int) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

// instant is a clock whose timers fire at once; it records the waits asked.
type instant struct {
	*clock.Fake
	mu    sync.Mutex
	waits []time.Duration
}

func newInstant() *instant { return &instant{Fake: clock.NewFake(time.Now())} }

func (c *instant) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	return c.Fake.NewTimer(0)
}

func wrap(t testing.TB, idempotent bool, tool toolmw.Tool, opts ...retry.Option) toolmw.Tool {
	t.Helper()
	return toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: idempotent}, tool, retry.New(opts...))
}

func TestDecisions(t *testing.T) {
	untyped := errors.New("socket closed")
	tests := []struct {
		name       string
		err        error
		idempotent bool
		calls      int
	}{
		{"transient", taxonomy.Transient("upstream_unavailable", "down"), false, 3},
		{"refusal", taxonomy.Refusal("booking_not_cancellable", "non-refundable"), true, 1},
		{"permanent failure", taxonomy.Failure("ledger_rejected", "no"), true, 1},
		{"not permitted", taxonomy.NotPermitted("not_permitted", "no"), true, 1},
		{"untyped, not idempotent", untyped, false, 1},
		{"untyped, idempotent", untyped, true, 3},
		{"timeout, idempotent", taxonomy.Timeout(taxonomy.CodeTimeout, "slow", true), true, 3},
		{"timeout, not idempotent", taxonomy.Timeout(taxonomy.CodeTimeout, "slow", false), false, 1},
		{"bare deadline exceeded", context.DeadlineExceeded, true, 1},
		{"cancelled", context.Canceled, true, 1},
		{"circuit open", taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "open"), false, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &script{errs: always(tc.err, 10)}
			tool := wrap(t, tc.idempotent, s.tool, retry.WithClock(newInstant()), retry.WithoutBudget())
			_, err := tool(context.Background(), nil)
			if got := s.calls(); got != tc.calls {
				t.Fatalf("tool called %d times, want %d", got, tc.calls)
			}
			// The last error comes back as it was (Wrap only adds the tool's name).
			if got, want := taxonomy.InfoOf(err), taxonomy.InfoOf(tc.err); got.Kind != want.Kind || got.Code != want.Code {
				t.Fatalf("error %v (%s/%s), want %s/%s", err, got.Kind, got.Code, want.Kind, want.Code)
			}
			if _, typed := taxonomy.From(tc.err); !typed && !errors.Is(err, tc.err) {
				t.Fatalf("the untyped error is not in the chain of %v", err)
			}
			// Final means final: the loop's retry rule never retries
			// what the layer handed back.
			if again, _ := taxonomy.ShouldRetry(err, tc.idempotent); again {
				t.Fatalf("ShouldRetry says retry for the layer's final error %v", err)
			}
			if was, _ := taxonomy.ShouldRetry(tc.err, tc.idempotent); taxonomy.IsFinal(err) != was {
				t.Fatalf("IsFinal = %v, want %v (marked exactly when the error itself was retryable)", taxonomy.IsFinal(err), was)
			}
		})
	}
}

// TestFinalKeepsTheRecord: what the layer hands back says "do not retry"
// to the loop, while InfoOf still reports the underlying retryability,
// kind, code and RetryAfter, and the record crosses JSON with it.
func TestFinalKeepsTheRecord(t *testing.T) {
	last := taxonomy.Transient("upstream_unavailable", "down").WithRetryAfter(time.Second)
	s := &script{errs: always(last, 3)}
	_, err := wrap(t, false, s.tool, retry.WithClock(newInstant()), retry.WithoutBudget())(context.Background(), nil)
	info := taxonomy.InfoOf(err)
	if !info.Retryable || !info.Final || info.Code != "upstream_unavailable" || info.RetryAfter != taxonomy.Seconds(time.Second) {
		t.Fatalf("InfoOf = %+v, want the transient record, retryable, final, retry_after 1s", info)
	}
	if again, _ := taxonomy.ShouldRetry(info.Err(), false); again {
		t.Fatal("the record, rebuilt, says retry")
	}
	if again, _ := taxonomy.ShouldRetry(fmt.Errorf("loop: %w", err), true); again {
		t.Fatal("a wrapped final error says retry")
	}
}

// TestCircuitOpenFailsFast: an open breaker ends the call at once as
// circuit-open/circuit_open with its RetryAfter, with or without a caller
// deadline; only a wait no longer than this retry's backoff ceiling is
// taken.
func TestCircuitOpenFailsFast(t *testing.T) {
	open := func(d time.Duration) error {
		return taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "open").WithRetryAfter(d)
	}
	for _, tc := range []struct {
		name     string
		after    time.Duration
		deadline time.Duration // 0: none
		calls    int
	}{
		{"open period past the backoff, no deadline", 20 * time.Second, 0, 1},
		{"open period past the backoff, deadline", 20 * time.Second, 5 * time.Second, 1},
		{"open period longer than the cap on waits", time.Hour, 0, 1},
		{"open period within the first backoff", 80 * time.Millisecond, 0, 2},
		{"half-open, no hint", 0, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newInstant()
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, clk.Now().Add(tc.deadline))
				defer cancel()
			}
			s := &script{errs: []error{open(tc.after), open(tc.after), open(tc.after)}}
			_, err := wrap(t, true, s.tool, retry.WithClock(clk), retry.WithoutBudget(),
				retry.WithMaxAttempts(2), retry.WithBackoff(100*time.Millisecond, time.Second))(ctx, nil)
			if s.calls() != tc.calls {
				t.Fatalf("tool called %d times, want %d (waits %v)", s.calls(), tc.calls, clk.waits)
			}
			info := taxonomy.InfoOf(err)
			if info.Kind != taxonomy.KindCircuitOpen || info.Code != taxonomy.CodeCircuitOpen {
				t.Fatalf("got %s/%s, want circuit-open/circuit_open", info.Kind, info.Code)
			}
			if time.Duration(info.RetryAfter) != tc.after {
				t.Errorf("RetryAfter = %v, want the breaker's %v", time.Duration(info.RetryAfter), tc.after)
			}
			if tc.calls == 1 && len(clk.waits) != 0 {
				t.Errorf("waited %v before failing fast", clk.waits)
			}
			if again, _ := taxonomy.ShouldRetry(err, true); again {
				t.Error("ShouldRetry says retry after the layer decided")
			}
		})
	}
}

func TestSucceedsAfterRetries(t *testing.T) {
	clk := newInstant()
	transient := taxonomy.Transient("upstream_unavailable", "down")
	s := &script{errs: []error{transient, transient}}
	var final int
	observe := func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			res, err := next(ctx, args)
			c, _ := toolmw.CallFrom(ctx)
			final = c.Attempt
			return res, err
		}
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, s.tool, observe, retry.New(retry.WithClock(clk)))
	res, err := tool(context.Background(), nil)
	if err != nil || res.Content != "ok" {
		t.Fatalf("got %v, %v; want ok", res, err)
	}
	if want := []int{1, 2, 3}; !equal(s.attempts, want) {
		t.Fatalf("the tool saw attempts %v, want %v", s.attempts, want)
	}
	if final != 3 {
		t.Fatalf("an outer layer read %d attempts, want 3", final)
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRetryAfterPastDeadline(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *taxonomy.ToolError
	}{
		{"transient", taxonomy.Transient("upstream_unavailable", "down").WithRetryAfter(10 * time.Second)},
		{"rate limited", taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeUpstreamRateLimited, "slow").WithRetryAfter(20 * time.Second)},
		// Past the deadline and past the cap on waits: the deadline is
		// named, since no cap would have made the wait fit.
		{"past the cap too", taxonomy.Transient("upstream_unavailable", "down").WithRetryAfter(time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(time.Now())
			ctx, cancel := context.WithDeadline(context.Background(), clk.Now().Add(5*time.Second))
			defer cancel()
			s := &script{errs: always(tc.err, 3)}
			tool := wrap(t, true, s.tool, retry.WithClock(clk))

			start := time.Now()
			_, err := tool(ctx, nil)
			elapsed := time.Since(start)
			if clk.Timers() != 0 {
				t.Error("a wait was started")
			}
			if s.calls() != 1 {
				t.Errorf("tool called %d times, want 1", s.calls())
			}
			// No wait was started (above, on the layer's clock). The wall
			// time only guards against a wait on another clock: the
			// smallest asked for is 10 s and the deadline 5 s, so a bound
			// of 1 s tells one apart with slack for a loaded machine.
			if elapsed > time.Second {
				t.Errorf("returned after %v of wall time: it waited", elapsed)
			}
			var te taxonomy.Error
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not typed", err)
			}
			if te.Code() != taxonomy.CodeWaitPastDeadline || te.Kind() != tc.err.Kind() || te.Retryable() {
				t.Fatalf("got %s/%s retryable=%v, want %s/%s not retryable", te.Kind(), te.Code(), te.Retryable(), tc.err.Kind(), taxonomy.CodeWaitPastDeadline)
			}
			if te.RetryAfter() != tc.err.RetryAfter() {
				t.Errorf("RetryAfter = %v, want the wait %v", te.RetryAfter(), tc.err.RetryAfter())
			}
			if !errors.Is(err, tc.err) {
				t.Error("the last failure is not the cause")
			}
		})
	}
}

func TestWaitTooLong(t *testing.T) {
	ask := taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeUpstreamRateLimited, "slow down").WithRetryAfter(time.Hour)

	t.Run("default cap", func(t *testing.T) {
		clk := newInstant()
		s := &script{errs: always(ask, 3)}
		_, err := wrap(t, false, s.tool, retry.WithClock(clk))(context.Background(), nil)
		info := taxonomy.InfoOf(err)
		if info.Code != taxonomy.CodeWaitTooLong || info.Kind != taxonomy.KindRateLimited || info.Retryable {
			t.Fatalf("got %+v, want rate-limited/%s, not retryable", info, taxonomy.CodeWaitTooLong)
		}
		if !errors.Is(err, ask) || s.calls() != 1 || len(clk.waits) != 0 {
			t.Fatalf("calls=%d waits=%v cause kept=%v", s.calls(), clk.waits, errors.Is(err, ask))
		}
	})
	t.Run("raised cap", func(t *testing.T) {
		clk := newInstant()
		s := &script{errs: []error{ask}}
		_, err := wrap(t, false, s.tool, retry.WithClock(clk), retry.WithMaxWait(2*time.Hour))(context.Background(), nil)
		if err != nil || s.calls() != 2 {
			t.Fatalf("err=%v calls=%d; want success on the second attempt", err, s.calls())
		}
		if !equal(clk.waits, []time.Duration{time.Hour}) {
			t.Fatalf("waits %v, want [1h]", clk.waits)
		}
	})
}

func TestBackoff(t *testing.T) {
	transient := taxonomy.Transient("upstream_unavailable", "down")
	after := func(d time.Duration) error { return transient.WithRetryAfter(d) }
	tests := []struct {
		name  string
		rand  float64
		errs  []error
		opts  []retry.Option
		waits []time.Duration
	}{
		{
			name:  "exponential up to the cap",
			rand:  0.5,
			errs:  always(transient, 5),
			opts:  []retry.Option{retry.WithMaxAttempts(6), retry.WithBackoff(time.Second, 4*time.Second)},
			waits: []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second},
		},
		{
			name:  "RetryAfter longer than the backoff",
			rand:  0.5,
			errs:  []error{after(3 * time.Second), after(100 * time.Millisecond)},
			opts:  []retry.Option{retry.WithBackoff(time.Second, 4*time.Second)},
			waits: []time.Duration{3 * time.Second, time.Second},
		},
		{
			name:  "jitter spans [0, ceiling)",
			rand:  0,
			errs:  always(transient, 2),
			opts:  []retry.Option{retry.WithBackoff(time.Second, 4*time.Second)},
			waits: nil, // no wait at all when the draw is 0
		},
		{
			name:  "backoff held to MaxWait",
			rand:  0.5,
			errs:  always(transient, 2),
			opts:  []retry.Option{retry.WithBackoff(time.Minute, time.Hour), retry.WithMaxWait(10 * time.Second)},
			waits: []time.Duration{5 * time.Second, 5 * time.Second},
		},
		{
			name:  "huge attempt counts do not overflow",
			rand:  0.5,
			errs:  always(transient, 99),
			opts:  []retry.Option{retry.WithMaxAttempts(100), retry.WithBackoff(time.Nanosecond, 2*time.Second)},
			waits: nil, // checked below: every wait ≤ the cap
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := newInstant()
			s := &script{errs: tc.errs}
			opts := append([]retry.Option{retry.WithClock(clk), retry.WithRand(func() float64 { return tc.rand }), retry.WithoutBudget()}, tc.opts...)
			if _, err := wrap(t, false, s.tool, opts...)(context.Background(), nil); err != nil {
				t.Fatalf("err = %v, want success", err)
			}
			if tc.name == "huge attempt counts do not overflow" {
				for _, w := range clk.waits {
					if w < 0 || w > 2*time.Second {
						t.Fatalf("wait %v outside [0, 2s]", w)
					}
				}
				return
			}
			if !equal(clk.waits, tc.waits) {
				t.Fatalf("waits %v, want %v", clk.waits, tc.waits)
			}
		})
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	clk := clock.NewFake(time.Now()) // never advanced: only the cancel can end the wait
	ctx, cancel := context.WithCancel(context.Background())
	s := &script{errs: always(taxonomy.Transient("upstream_unavailable", "down"), 3)}
	tool := wrap(t, false, s.tool, retry.WithClock(clk), retry.WithRand(func() float64 { return 0.9 }))

	done := make(chan error, 1)
	go func() {
		_, err := tool(ctx, nil)
		done <- err
	}()
	clk.WaitForTimers(1)
	cancel()
	err := <-done
	if err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled as is", err)
	}
	if s.calls() != 1 {
		t.Fatalf("tool called %d times, want 1", s.calls())
	}
	if clk.Timers() != 0 {
		t.Fatal("the backoff timer was not stopped")
	}
}

func TestCancelledParentIsNotRetried(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &script{}
	tool := wrap(t, true, func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		s.tool(ctx, args)
		cancel() // the caller gives up while the tool fails transiently
		return toolmw.Result{}, taxonomy.Transient("upstream_unavailable", "down")
	}, retry.WithClock(newInstant()))
	if _, err := tool(ctx, nil); err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if s.calls() != 1 {
		t.Fatalf("tool called %d times, want 1", s.calls())
	}
}

func TestDeadlineDuringWait(t *testing.T) {
	// The fake clock never moves, so the wait fits by its reading; the
	// context's real deadline ends it.
	clk := clock.NewFake(time.Now())
	ctx, cancel := context.WithDeadline(context.Background(), clk.Now().Add(2*time.Millisecond))
	defer cancel()
	last := taxonomy.Transient("upstream_unavailable", "down")
	s := &script{errs: always(last, 3)}
	_, err := wrap(t, false, s.tool, retry.WithClock(clk), retry.WithBackoff(time.Millisecond, time.Millisecond),
		retry.WithRand(func() float64 { return 0.5 }))(ctx, nil)
	if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeWaitPastDeadline || !errors.Is(err, last) {
		t.Fatalf("got %v (%s), want %s wrapping the last failure", err, info.Code, taxonomy.CodeWaitPastDeadline)
	}
}

func TestRunCapAcrossConcurrentCalls(t *testing.T) {
	ctx := budget.WithRun(context.Background())
	var calls atomic.Int64
	tool := wrap(t, false, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		calls.Add(1)
		return toolmw.Result{}, taxonomy.Transient("upstream_unavailable", "down")
	}, retry.WithClock(newInstant()), retry.WithoutBudget(), retry.WithMaxAttempts(5))

	var runLimited atomic.Int64
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := tool(ctx, nil)
			if errors.Is(err, taxonomy.ErrRunLimitExceeded) {
				runLimited.Add(1)
			}
		}()
	}
	wg.Wait()
	if got := calls.Load(); got != budget.DefaultRunAttempts {
		t.Fatalf("the tool ran %d times in one run, want exactly %d", got, budget.DefaultRunAttempts)
	}
	if runLimited.Load() < 40-budget.DefaultRunAttempts {
		t.Fatalf("only %d calls ended run-limit-exceeded", runLimited.Load())
	}
	run, _ := budget.RunFrom(ctx)
	if run.Used("search") != budget.DefaultRunAttempts {
		t.Fatalf("Used = %d", run.Used("search"))
	}
}

func TestRunExhausted(t *testing.T) {
	ctx := budget.WithRun(context.Background(), budget.WithMaxAttempts(1))
	last := taxonomy.Transient("upstream_unavailable", "down")
	s := &script{errs: always(last, 5)}
	tool := wrap(t, false, s.tool, retry.WithClock(newInstant()))

	_, err := tool(ctx, nil)
	var te taxonomy.Error
	if !errors.As(err, &te) || te.Kind() != taxonomy.KindRunLimitExceeded || te.Code() != taxonomy.CodeRunAttemptsExhausted {
		t.Fatalf("got %v, want run-limit-exceeded/%s", err, taxonomy.CodeRunAttemptsExhausted)
	}
	if !errors.Is(err, last) || te.Retryable() {
		t.Fatalf("want the last failure as cause and not retryable: %v", err)
	}
	// The cap is used up: the next call does not reach the tool.
	_, err = tool(ctx, nil)
	if taxonomy.InfoOf(err).Code != taxonomy.CodeRunAttemptsExhausted || s.calls() != 1 {
		t.Fatalf("second call: %v after %d tool calls", err, s.calls())
	}
}

func TestRetryBudgetExhausted(t *testing.T) {
	shared := budget.NewRetry(budget.WithReserve(1), budget.WithRatio(0))
	last := taxonomy.Transient("upstream_unavailable", "down")
	a := &script{errs: always(last, 5)}
	b := &script{errs: always(last, 5)}
	mw := retry.New(retry.WithClock(newInstant()), retry.WithBudget(shared))
	toolA := toolmw.MustWrap(toolmw.Spec{Name: "a"}, a.tool, mw)
	toolB := toolmw.MustWrap(toolmw.Spec{Name: "b"}, b.tool, mw)

	_, err := toolA(context.Background(), nil)
	if a.calls() != 2 {
		t.Fatalf("tool a called %d times, want 2 (one token)", a.calls())
	}
	if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindRetryBudgetExhausted || info.Code != taxonomy.CodeRetryBudgetExhausted || !errors.Is(err, last) {
		t.Fatalf("got %v, want retry-budget-exhausted wrapping the last failure", err)
	}
	_, err = toolB(context.Background(), nil)
	if b.calls() != 1 || !errors.Is(err, taxonomy.ErrRetryBudgetExhausted) {
		t.Fatalf("tool b: %d calls, %v; want 1 call, the shared budget empty", b.calls(), err)
	}
}

func TestDefaultBudgetIsPerTool(t *testing.T) {
	down := taxonomy.Transient("upstream_unavailable", "down")
	mw := retry.New(retry.WithClock(newInstant()))
	a := &script{errs: always(down, 1000)}
	toolA := toolmw.MustWrap(toolmw.Spec{Name: "a"}, a.tool, mw)
	for range 20 { // drains a's reserve
		toolA(context.Background(), nil)
	}
	if _, err := toolA(context.Background(), nil); !errors.Is(err, taxonomy.ErrRetryBudgetExhausted) {
		t.Fatalf("a's budget not drained: %v", err)
	}
	b := &script{errs: always(down, 2)}
	toolB := toolmw.MustWrap(toolmw.Spec{Name: "b"}, b.tool, mw)
	if _, err := toolB(context.Background(), nil); err != nil || b.calls() != 3 {
		t.Fatalf("tool b: %v after %d calls; want its own budget", err, b.calls())
	}
}

// simulate makes calls through the layer against a dependency failing each
// attempt with probability fault (with failure, or the attempt's timeout
// when timeouts is set), and returns the attempts of each call and how many
// calls succeeded.
func simulate(t *testing.T, calls int, fault float64, seed uint64, opts ...retry.Option) (attempts []int, ok int) {
	return simulateErr(t, calls, fault, seed, taxonomy.Transient("upstream_unavailable", "down"), opts...)
}

func simulateErr(t *testing.T, calls int, fault float64, seed uint64, failure error, opts ...retry.Option) (attempts []int, ok int) {
	rng := rand.New(rand.NewPCG(seed, seed))
	n := 0
	tool := wrap(t, true, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		n++
		if rng.Float64() < fault {
			return toolmw.Result{}, failure
		}
		return toolmw.Text("ok"), nil
	}, append([]retry.Option{retry.WithClock(newInstant()), retry.WithMaxAttempts(3)}, opts...)...)
	attempts = make([]int, calls)
	for i := range attempts {
		before := n
		if _, err := tool(context.Background(), nil); err == nil {
			ok++
		}
		attempts[i] = n - before
	}
	return attempts, ok
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// The outage bound holds for both algorithms, whether the dead dependency
// fails fast or times out.
func TestStormDeadDependency(t *testing.T) {
	const calls, warmup = 10000, 100
	for _, tc := range []struct {
		name    string
		failure error
		opts    []retry.Option
	}{
		{"adaptive, fast failures", taxonomy.Transient("upstream_unavailable", "down"), nil},
		{"adaptive, timeouts", taxonomy.Timeout(taxonomy.CodeTimeout, "no answer", true), nil},
		{"fixed, fast failures", taxonomy.Transient("upstream_unavailable", "down"), []retry.Option{retry.WithBudget(budget.NewRetry())}},
	} {
		attempts, _ := simulateErr(t, calls, 1, 7, tc.failure, tc.opts...)
		if total := sum(attempts); float64(total) > 1.1*calls+budget.DefaultReserve {
			t.Errorf("%s: %d attempts for %d calls, want ≤ 1.1 × calls + reserve", tc.name, total, calls)
		}
		after := attempts[warmup:]
		if per := float64(sum(after)) / float64(len(after)); per > 1.1 {
			t.Errorf("%s: after warm-up %.4f attempts per call, want ≤ 1.1", tc.name, per)
		}
		for i := warmup; i+100 <= calls; i++ {
			if got := sum(attempts[i : i+100]); got > 110 {
				t.Errorf("%s: calls %d..%d made %d attempts, want ≤ 110", tc.name, i, i+100, got)
				break
			}
		}
	}
}

func TestStormTransientFaults(t *testing.T) {
	const calls = 10000
	fixed := retry.WithBudget(budget.NewRetry())
	for _, tc := range []struct {
		name                          string
		opt                           retry.Option
		fault, minSuccess, maxPerCall float64
	}{
		{"adaptive", nil, 0.05, 0.9995, 1.06},
		{"adaptive", nil, 0.20, 0.99, 1.25},
		{"fixed", fixed, 0.05, 0.9995, 1.06},
		{"fixed", fixed, 0.20, 0.87, 1.11},
	} {
		attempts, ok := simulate(t, calls, tc.fault, 11, tc.opt)
		success, per := float64(ok)/calls, float64(sum(attempts))/calls
		t.Logf("%s, fault %.0f%%: success %.4f, %.4f attempts per call", tc.name, tc.fault*100, success, per)
		if success < tc.minSuccess || per > tc.maxPerCall {
			t.Errorf("%s, fault %v: success %.4f (want ≥ %v), %.4f attempts per call (want ≤ %v)",
				tc.name, tc.fault, success, tc.minSuccess, per, tc.maxPerCall)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  retry.Option
		ok   bool
	}{
		{"attempts 1", retry.WithMaxAttempts(1), true},
		{"attempts 0: the default", retry.WithMaxAttempts(0), true},
		{"attempts negative", retry.WithMaxAttempts(-1), false},
		{"backoff zero", retry.WithBackoff(0, 0), true},
		{"backoff negative", retry.WithBackoff(-time.Second, time.Second), false},
		{"backoff cap below base", retry.WithBackoff(2*time.Second, time.Second), false},
		{"max wait zero: the default", retry.WithMaxWait(0), true},
		{"max wait negative", retry.WithMaxWait(-time.Second), false},
		{"nil clock: the default", retry.WithClock(nil), true},
		{"nil rand: the default", retry.WithRand(nil), true},
		{"nil budget: the default", retry.WithBudget(nil), true},
		{"no budget", retry.WithoutBudget(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := func(how string, err error) {
				t.Helper()
				if (err == nil) != tc.ok {
					t.Fatalf("%s = %v, want ok=%v", how, err, tc.ok)
				}
				if info := taxonomy.InfoOf(err); err != nil && (info.Kind != taxonomy.KindDefinitionInvalid || info.Code != taxonomy.CodeOptionInvalid) {
					t.Fatalf("%s: %s/%s, want tool-definition-invalid/option_invalid", how, info.Kind, info.Code)
				}
			}
			check("Validate", retry.Validate(tc.opt))
			_, err := toolmw.Wrap(toolmw.Spec{Name: "search"}, (&script{}).tool, retry.New(tc.opt))
			check("Wrap", err)
		})
	}
	// Zero values mean the defaults.
	s := &script{errs: always(taxonomy.Transient("upstream_unavailable", "down"), 10)}
	wrap(t, false, s.tool, retry.WithMaxAttempts(0), retry.WithClock(newInstant()))(context.Background(), nil)
	if s.calls() != retry.DefaultMaxAttempts {
		t.Fatalf("tool called %d times, want the default %d", s.calls(), retry.DefaultMaxAttempts)
	}
}

func TestWithoutCall(t *testing.T) {
	// Used without Wrap: no Call in the context, not idempotent, no name.
	s := &script{errs: always(errors.New("boom"), 3)}
	tool := retry.New(retry.WithClock(newInstant()))(s.tool)
	if _, err := tool(context.Background(), nil); err == nil || s.calls() != 1 {
		t.Fatalf("untyped error without a Call: %v after %d calls, want 1 call", err, s.calls())
	}
	s = &script{errs: always(taxonomy.Transient("upstream_unavailable", "down"), 1)}
	tool = retry.New(retry.WithClock(newInstant()))(s.tool)
	if _, err := tool(context.Background(), nil); err != nil || s.calls() != 2 {
		t.Fatalf("transient error without a Call: %v after %d calls", err, s.calls())
	}
}

func okTool(context.Context, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Result{Content: "ok"}, nil
}

func benchmark(b *testing.B, ctx context.Context, mws ...toolmw.Middleware) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, okTool, mws...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrapOnly is the baseline: Wrap with no layer.
func BenchmarkWrapOnly(b *testing.B) { benchmark(b, context.Background()) }

// BenchmarkRetry is the success path of the retry layer alone.
func BenchmarkRetry(b *testing.B) { benchmark(b, context.Background(), retry.New()) }

// BenchmarkRetryWithRun adds a run budget in the context.
func BenchmarkRetryWithRun(b *testing.B) {
	ctx := budget.WithRun(context.Background(), budget.WithMaxAttempts(1<<62))
	benchmark(b, ctx, retry.New())
}

// The layer tells the budget how each attempt ended: a retry that succeeded
// is refunded, an overloaded attempt pays twice, an open breaker, the
// caller's deadline and a refusal are no sign of overload; a fixed-ratio
// budget learns nothing.
func TestBudgetLearnsOutcomes(t *testing.T) {
	transient := taxonomy.Transient("upstream_unavailable", "down")
	timeout := taxonomy.Timeout(taxonomy.CodeTimeout, "no answer in time", true)
	limited := taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeUpstreamRateLimited, "slow down")
	pushBack := taxonomy.Transient("upstream_unavailable", "busy").WithRetryAfter(time.Millisecond)
	open := taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "open").WithRetryAfter(time.Millisecond)
	deadline := taxonomy.Timeout(taxonomy.CodeDeadlineExceeded, "the caller's deadline", false)
	refusal := taxonomy.Refusal("not_allowed", "no")

	// Each case starts from 5 tokens: a call deposits 0.1 and each retry
	// withdraws 1 before what the attempts teach.
	for _, tc := range []struct {
		name  string
		errs  []error
		fixed bool
		want  float64
	}{
		{"first attempt succeeds", nil, false, 5.1},
		{"retry succeeds: refunded", []error{transient}, false, 5.1},
		{"retries fail: they keep their price", []error{transient, transient, transient}, false, 3.1},
		{"first attempt times out: no deposit", []error{timeout}, false, 5},
		{"retry times out: a second token", []error{timeout, timeout}, false, 3},
		{"rate-limited is overload", []error{limited}, false, 5},
		{"a push-back RetryAfter is overload", []error{pushBack}, false, 5},
		{"an open breaker is not", []error{open}, false, 5.1},
		{"the caller's deadline is not", []error{deadline}, false, 5.1},
		{"a refusal is not", []error{refusal}, false, 5.1},
		{"fixed ratio: retry succeeds", []error{transient}, true, 4.1},
		{"fixed ratio: retry times out", []error{timeout, timeout}, true, 3.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := budget.NewAdaptive()
			if tc.fixed {
				b = budget.NewRetry()
			}
			for range 5 {
				b.TryRetry()
			}
			s := &script{errs: tc.errs}
			tool := wrap(t, true, s.tool, retry.WithClock(newInstant()), retry.WithBudget(b))
			tool(context.Background(), nil)
			if got := b.Tokens(); math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("after %d attempts the budget holds %v tokens, want %v", s.calls(), got, tc.want)
			}
		})
	}
}

// The default budget is adaptive: a tool whose retries succeed is not
// starved by them.
func TestDefaultBudgetIsAdaptive(t *testing.T) {
	s := &script{}
	for range 100 { // every call fails once, then succeeds
		s.errs = append(s.errs, taxonomy.Transient("upstream_unavailable", "down"), nil)
	}
	tool := wrap(t, false, s.tool, retry.WithClock(newInstant()))
	for i := range 100 {
		if _, err := tool(context.Background(), nil); err != nil {
			t.Fatalf("call %d: %v; a retry that succeeds must be refunded", i, err)
		}
	}
}
