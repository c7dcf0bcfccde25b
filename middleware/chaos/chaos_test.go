package chaos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/chaos"
	"github.com/toolmw/toolmw/middleware/recovery"
	"github.com/toolmw/toolmw/middleware/result"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/timeout"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ok(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }

var (
	unavailable = taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the upstream is unavailable")
	throttled   = taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeUpstreamRateLimited, "too many requests").
			WithRetryAfter(50 * time.Millisecond)
	refused = taxonomy.Refusal("booking_not_cancellable", "the booking is past its cancellation window")
)

// mixed is a set of faults of several kinds, 40% of calls in all.
func mixed() []chaos.Option {
	return []chaos.Option{
		chaos.WithFault(chaos.Failure(unavailable), 0.15),
		chaos.WithFault(chaos.Failure(throttled), 0.10),
		chaos.WithFault(chaos.Failure(refused), 0.05),
		chaos.WithFault(chaos.Timeout(0), 0.05),
		chaos.WithFault(chaos.Latency(0), 0.05),
	}
}

// sequence makes n calls of a tool through a chaos layer with seed and
// returns what each got: the error's code, or "-".
func sequence(t *testing.T, seed uint64, n int) []string {
	t.Helper()
	got := make([]string, 0, n)
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, ok,
		chaos.New(append(mixed(), chaos.WithSeed(seed), chaos.WithEnabled(true))...))
	for range n {
		_, err := tool(context.Background(), nil)
		if err == nil {
			got = append(got, "-")
			continue
		}
		got = append(got, taxonomy.InfoOf(err).Code)
	}
	return got
}

// TestSeedRepeats: with a seed, the same faults at the same places in
// every run, and another seed gives others.
func TestSeedRepeats(t *testing.T) {
	record := func(seed uint64) []string {
		var got []string
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, ok,
			chaos.New(append(mixed(), chaos.WithSeed(seed), chaos.WithEnabled(true),
				chaos.WithOnInject(func(i chaos.Injection) { got = append(got, fmt.Sprintf("%d:%s", i.Seq, i.Fault)) }))...))
		for range 2000 {
			tool(context.Background(), nil)
		}
		return got
	}
	a, b := record(42), record(42)
	if !slices.Equal(a, b) {
		t.Fatalf("seed 42 gave two sequences:\n%v\n%v", a[:10], b[:10])
	}
	if len(a) < 700 || len(a) > 900 {
		t.Errorf("%d faults in 2000 calls at 40%%", len(a))
	}
	if slices.Equal(a, record(43)) {
		t.Error("seeds 42 and 43 gave the same sequence")
	}
	// The outcomes too.
	if x, y := sequence(t, 7, 500), sequence(t, 7, 500); !slices.Equal(x, y) {
		t.Error("seed 7 gave two sequences of outcomes")
	}
}

// TestSeedRepeatsConcurrently: under concurrency, a call with a call id
// gets the same fault in every run whatever the order of arrival, and
// calls without one get the same sequence of faults per tool.
func TestSeedRepeatsConcurrently(t *testing.T) {
	const workers, perWorker = 8, 250
	run := func(withIDs bool) (byID map[string]string, seq []string) {
		var mu sync.Mutex
		byID = map[string]string{}
		bySeq := map[uint64]string{}
		mw := chaos.New(append(mixed(), chaos.WithSeed(99), chaos.WithEnabled(true),
			chaos.WithOnInject(func(i chaos.Injection) {
				mu.Lock()
				defer mu.Unlock()
				byID[i.CallID] = i.Fault
				bySeq[i.Seq] = i.Fault
			}))...)
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, ok, mw)
		ctx := budget.WithRun(context.Background(), budget.WithID("run-1"), budget.WithMaxAttempts(1<<20))
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range perWorker {
					cctx := ctx
					if withIDs {
						cctx = toolmw.WithCallID(ctx, fmt.Sprintf("call_%d_%d", w, i))
					}
					tool(cctx, nil)
				}
			})
		}
		wg.Wait()
		for n := uint64(1); n <= workers*perWorker; n++ {
			seq = append(seq, bySeq[n])
		}
		return byID, seq
	}
	a, _ := run(true)
	b, _ := run(true)
	if len(a) < 500 {
		t.Fatalf("%d faults in %d calls at 40%%", len(a), workers*perWorker)
	}
	for id, f := range a {
		if b[id] != f {
			t.Errorf("call %s: %q, then %q", id, f, b[id])
		}
	}
	if len(a) != len(b) {
		t.Errorf("%d faults, then %d", len(a), len(b))
	}
	_, x := run(false)
	_, y := run(false)
	if !slices.Equal(x, y) {
		t.Error("without call ids, two sequences of faults per tool")
	}
}

// TestRate: over 10,000 calls each fault is injected into its rate of
// them within ±2% of the rate (0.1 ± 0.002) for 50 seeds when the calls
// draw by sequence (stratified); within ±2 percentage points when they
// draw by call id (independent draws), for a few seeds and the random
// default. Over 1,000 seeds by sequence, the worst was 1.4% off at a rate
// of 0.1, 0.8% at 0.25, and at 0.05 eight seeds were past 2% (2.2% at
// worst).
func TestRate(t *testing.T) {
	const calls = 10_000
	rates := map[string]float64{"failure": 0.10, "latency": 0.25, "timeout": 0.05}
	count := func(seed uint64, byID bool) map[string]int {
		counts := map[string]int{}
		opts := []chaos.Option{
			chaos.WithEnabled(true),
			chaos.WithFault(chaos.Failure(unavailable), rates["failure"]),
			chaos.WithFault(chaos.Latency(0), rates["latency"]),
			chaos.WithFault(chaos.Timeout(0), rates["timeout"]),
			chaos.WithOnInject(func(i chaos.Injection) { counts[i.Fault]++ }),
		}
		if seed != 0 || !byID {
			opts = append(opts, chaos.WithSeed(seed))
		}
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, ok, chaos.New(opts...))
		for i := range calls {
			ctx := context.Background()
			if byID {
				ctx = toolmw.WithCallID(ctx, fmt.Sprintf("call_%d", i))
			}
			tool(ctx, nil)
		}
		return counts
	}
	worst := 0.0
	for seed := range uint64(50) {
		seed *= 0x9e3779b97f4a7c15
		counts := count(seed, false)
		for f, rate := range rates {
			got := float64(counts[f]) / calls
			if math.Abs(got-rate) > 0.02*rate {
				t.Errorf("seed %d: %s injected into %.4f of the calls, want %.3f ± 2%%", seed, f, got, rate)
			}
			worst = max(worst, math.Abs(got-rate)/rate)
		}
	}
	t.Logf("by sequence: the worst of 50 seeds is %.2f%% off its rate", worst*100)
	worst = 0
	for _, seed := range []uint64{0, 1, 42, 1 << 40, math.MaxUint64} { // 0: the random default
		counts := count(seed, true)
		for f, rate := range rates {
			got := float64(counts[f]) / calls
			if math.Abs(got-rate) > 0.02 {
				t.Errorf("seed %d, by call id: %s injected into %.4f of the calls, want %.2f ± 0.02", seed, f, got, rate)
			}
			worst = max(worst, math.Abs(got-rate)/rate)
		}
	}
	t.Logf("by call id: the worst of 5 seeds is %.2f%% off its rate", worst*100)
}

// TestRunsOfFaults: the draws by sequence are stratified, yet a call after
// an injected one is injected at the rate, so runs of failures (that trip
// a breaker) come as often as independent draws make them.
func TestRunsOfFaults(t *testing.T) {
	const calls, rate = 100_000, 0.3
	var injected []bool
	prev := uint64(0)
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, ok, chaos.New(chaos.WithEnabled(true), chaos.WithSeed(11),
		chaos.WithFault(chaos.Latency(0), rate),
		chaos.WithOnInject(func(i chaos.Injection) {
			for prev+1 < i.Seq {
				injected = append(injected, false)
				prev++
			}
			injected = append(injected, true)
			prev = i.Seq
		})))
	for range calls {
		tool(context.Background(), nil)
	}
	for len(injected) < calls {
		injected = append(injected, false)
	}
	after, both, three := 0, 0, 0
	for i := 2; i < calls; i++ {
		if injected[i-1] {
			after++
			if injected[i] {
				both++
				if injected[i-2] {
					three++
				}
			}
		}
	}
	if p := float64(both) / float64(after); math.Abs(p-rate) > 0.01 {
		t.Errorf("P(injected | the call before was) = %.4f, want %.2f ± 0.01", p, rate)
	}
	if p, want := float64(three)/calls, rate*rate*rate; math.Abs(p-want) > 0.005 {
		t.Errorf("three in a row: %.4f of the calls, want %.4f ± 0.005", p, want)
	}
}

// TestRatePerTool: a fault for named tools only is injected into those.
func TestRatePerTool(t *testing.T) {
	counts := map[string]int{}
	mw := chaos.New(chaos.WithEnabled(true), chaos.WithSeed(1),
		chaos.WithFault(chaos.Failure(unavailable), 0.5, "book"),
		chaos.WithOnInject(func(i chaos.Injection) { counts[i.Tool]++ }))
	book := toolmw.MustWrap(toolmw.Spec{Name: "book"}, ok, mw)
	search := toolmw.MustWrap(toolmw.Spec{Name: "search"}, ok, mw)
	for range 1000 {
		book(context.Background(), nil)
		search(context.Background(), nil)
	}
	if counts["search"] != 0 || counts["book"] < 400 || counts["book"] > 600 {
		t.Errorf("faults per tool: %v, want about 500 for book and none for search", counts)
	}
}

// outcome is everything a caller and the layers can tell of a call.
type outcome struct {
	Info      taxonomy.Info
	Attempts  int
	Deadline  bool // errors.Is(err, context.DeadlineExceeded)
	Effect    taxonomy.Effect
	Final     bool
	Retry     bool
	After     time.Duration
	Result    string
	BreakerTo string // the breaker's state changes during the call
	Took      time.Duration
}

// TestIndistinguishable: a retry and breaker chain ends the same way,
// with the same attempts, errors, waits and breaker transitions, whether
// the failures are injected or a real tool returns them (and the real
// timeout layer times a real slow tool out).
func TestIndistinguishable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const calls = 400
		const slow = 30 * time.Second
		spec := toolmw.Spec{Name: "lookup", Idempotent: true}
		chain := func(perAttempt time.Duration, inner toolmw.Middleware, attempts *int, transitions *[]string) []toolmw.Middleware {
			probe := func(next toolmw.Tool) toolmw.Tool {
				return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
					res, err := next(ctx, args)
					c, _ := toolmw.CallFrom(ctx)
					*attempts = c.Attempt
					return res, err
				}
			}
			return []toolmw.Middleware{
				probe,
				retry.New(retry.WithMaxAttempts(3), retry.WithBackoff(10*time.Millisecond, 100*time.Millisecond),
					retry.WithRand(func() float64 { return 0.5 }), retry.WithoutBudget()),
				breaker.New(breaker.WithConsecutiveFailures(4), breaker.WithOpenFor(time.Second),
					breaker.WithOnStateChange(func(e breaker.StateChangeEvent) {
						*transitions = append(*transitions, fmt.Sprint(e.To))
					})),
				timeout.New(perAttempt),
				inner,
			}
		}
		run := func(tool toolmw.Tool, attempts *int, transitions *[]string) []outcome {
			var out []outcome
			for i := range calls {
				before := len(*transitions)
				ctx := toolmw.WithCallID(context.Background(), fmt.Sprintf("call_%d", i))
				start := time.Now()
				res, err := tool(ctx, nil)
				retryable, after := taxonomy.ShouldRetry(err, true)
				o := outcome{Attempts: *attempts, Deadline: errors.Is(err, context.DeadlineExceeded),
					Effect: taxonomy.EffectOf(err), Final: taxonomy.IsFinal(err), Retry: retryable, After: after,
					Result: res.Content, BreakerTo: strings.Join((*transitions)[before:], ","), Took: time.Since(start)}
				if err != nil {
					o.Info = taxonomy.InfoOf(err)
				}
				out = append(out, o)
				time.Sleep(150 * time.Millisecond) // fake time: the breaker half-opens now and then
			}
			return out
		}

		// Injected: a healthy tool, and the chaos layer innermost. Each
		// execution's error (only the chaos layer makes any) is recorded.
		var recorded []string
		record := func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				res, err := next(ctx, args)
				code := ""
				if err != nil {
					code = taxonomy.InfoOf(err).Code
				}
				recorded = append(recorded, code)
				return res, err
			}
		}
		faults := chaos.New(chaos.WithSeed(5), chaos.WithEnabled(true),
			chaos.WithFault(chaos.Failure(unavailable), 0.50),
			chaos.WithFault(chaos.Failure(throttled), 0.10),
			chaos.WithFault(chaos.Failure(refused), 0.05),
			chaos.WithFault(chaos.Timeout(slow), 0.10))
		var injAttempts int
		var injTransitions []string
		injTool := toolmw.MustWrap(spec, ok, chain(time.Minute, toolmw.Chain(record, faults), &injAttempts, &injTransitions)...)
		injOut := run(injTool, &injAttempts, &injTransitions)

		// Real: the tool fails on the same executions with the same
		// errors, and is slow where a timeout was injected, so that the
		// timeout layer (at 30s) times it out.
		var n int
		real := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			if n >= len(recorded) {
				t.Fatalf("the real tool ran more than the %d executions of the injected chain", len(recorded))
			}
			code := recorded[n]
			n++
			switch code {
			case "":
				return toolmw.Text("ok"), nil
			case taxonomy.CodeUpstreamUnavailable:
				return toolmw.Result{}, unavailable
			case taxonomy.CodeUpstreamRateLimited:
				return toolmw.Result{}, throttled
			case refused.Code():
				return toolmw.Result{}, refused
			case taxonomy.CodeTimeout:
				<-ctx.Done()
				return toolmw.Result{}, ctx.Err()
			}
			t.Fatalf("unexpected code %q", code)
			return toolmw.Result{}, nil
		}
		var realAttempts int
		var realTransitions []string
		realTool := toolmw.MustWrap(spec, real, chain(slow, func(next toolmw.Tool) toolmw.Tool { return next }, &realAttempts, &realTransitions)...)
		realOut := run(realTool, &realAttempts, &realTransitions)

		if len(recorded) != n {
			t.Errorf("the real tool ran %d times, the injected chain %d", n, len(recorded))
		}
		kinds := map[taxonomy.Kind]int{}
		opened := 0
		for i := range injOut {
			a, b := injOut[i], realOut[i]
			if fmt.Sprintf("%+v", a) != fmt.Sprintf("%+v", b) {
				t.Errorf("call %d:\ninjected %+v\nreal     %+v", i, a, b)
			}
			kinds[a.Info.Kind]++
			if strings.Contains(a.BreakerTo, "open") {
				opened++
			}
		}
		t.Logf("outcomes by kind: %v; %d calls changed the breaker's state", kinds, opened)
		if len(kinds) < 5 || opened == 0 {
			t.Errorf("outcomes by kind %v, %d breaker changes: the test proves little", kinds, opened)
		}
		if !slices.Equal(injTransitions, realTransitions) {
			t.Errorf("breaker transitions differ:\ninjected %v\nreal     %v", injTransitions, realTransitions)
		}
	})
}

// TestLatencyRespectsContext: an injected latency ends when the call's
// context does, and no real time passes (testing/synctest).
func TestLatencyRespectsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ran atomic.Int64
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			ran.Add(1)
			return toolmw.Text("ok"), nil
		}, chaos.New(chaos.WithFault(chaos.Latency(time.Hour), 1)))

		start := time.Now()
		ctx, cancel := context.WithTimeout(chaos.Enable(context.Background()), time.Second)
		defer cancel()
		_, err := tool(ctx, nil)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second || ran.Load() != 0 {
			t.Errorf("deadline: err %v after %v, tool ran %d times; want the deadline after 1s, not run", err, time.Since(start), ran.Load())
		}

		start = time.Now()
		ctx, cancel = context.WithCancel(chaos.Enable(context.Background()))
		time.AfterFunc(3*time.Second, cancel)
		_, err = tool(ctx, nil)
		if err != context.Canceled || time.Since(start) != 3*time.Second {
			t.Errorf("cancel: err %v after %v, want context.Canceled after 3s", err, time.Since(start))
		}

		start = time.Now()
		res, err := tool(chaos.Enable(context.Background()), nil)
		if err != nil || res.Content != "ok" || time.Since(start) != time.Hour || ran.Load() != 1 {
			t.Errorf("no deadline: %q, %v after %v; want ok after an hour", res.Content, err, time.Since(start))
		}

		// Under the timeout layer the delay is a timeout, as a slow tool's.
		slowed := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, ok,
			timeout.New(2*time.Second), chaos.New(chaos.WithFault(chaos.Latency(time.Hour), 1)))
		start = time.Now()
		_, err = slowed(chaos.Enable(context.Background()), nil)
		if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeTimeout || !info.Retryable || time.Since(start) != 2*time.Second {
			t.Errorf("under timeout.New(2s): %+v after %v", info, time.Since(start))
		}
	})
}

// TestTimeoutAsTheTimeoutLayer: an injected timeout is the error the
// timeout layer makes of a tool that outran it.
func TestTimeoutAsTheTimeoutLayer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, idem := range []bool{false, true} {
			spec := toolmw.Spec{Name: "book", Idempotent: idem}
			slow := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
				<-ctx.Done()
				return toolmw.Result{}, ctx.Err()
			}
			real := toolmw.MustWrap(spec, slow, timeout.New(5*time.Second))
			var ran bool
			injected := toolmw.MustWrap(spec, func(context.Context, json.RawMessage) (toolmw.Result, error) {
				ran = true
				return toolmw.Text("ok"), nil
			}, timeout.New(time.Minute), chaos.New(chaos.WithFault(chaos.Timeout(5*time.Second), 1), chaos.WithEnabled(true)))

			start := time.Now()
			_, rerr := real(context.Background(), nil)
			rtook := time.Since(start)
			start = time.Now()
			_, ierr := injected(context.Background(), nil)
			itook := time.Since(start)
			ri, ii := taxonomy.InfoOf(rerr), taxonomy.InfoOf(ierr)
			if fmt.Sprint(ri) != fmt.Sprint(ii) || rtook != itook || ran {
				t.Errorf("idempotent %v:\nreal     %+v after %v\ninjected %+v after %v (tool ran: %v)", idem, ri, rtook, ii, itook, ran)
			}
			if !errors.Is(ierr, context.DeadlineExceeded) || taxonomy.EffectOf(ierr) != taxonomy.EffectPossible {
				t.Errorf("injected timeout: Is(DeadlineExceeded) %v, effect %s", errors.Is(ierr, context.DeadlineExceeded), taxonomy.EffectOf(ierr))
			}
		}

		// The caller's deadline during the wait: deadline_exceeded, as the timeout layer says.
		tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, ok, chaos.New(chaos.WithFault(chaos.Timeout(time.Minute), 1), chaos.WithEnabled(true)))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := tool(ctx, nil)
		if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeDeadlineExceeded || info.Retryable {
			t.Errorf("caller's deadline: %+v", info)
		}
	})
}

// TestPanicAndResults: an injected panic, malformed and oversized results
// meet the recovery and result layers as real ones do.
func TestPanicAndResults(t *testing.T) {
	cases := []struct {
		fault chaos.Fault
		mw    toolmw.Middleware
		code  string
	}{
		{chaos.Panic(), recovery.New(), taxonomy.CodeToolPanicked},
		{chaos.MalformedResult(), result.New(), taxonomy.CodeResultNotUTF8},
		{chaos.OversizedResult(0), result.New(), taxonomy.CodeResultTooLarge},
		{chaos.OversizedResult(100), result.New(result.WithMaxBytes(99)), taxonomy.CodeResultTooLarge},
	}
	for _, c := range cases {
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, ok, c.mw, chaos.New(chaos.WithFault(c.fault, 1), chaos.WithEnabled(true)))
		_, err := tool(context.Background(), nil)
		if info := taxonomy.InfoOf(err); info.Code != c.code {
			t.Errorf("%v: %+v, want %s", c.fault, info, c.code)
		}
	}
	// Without the result layer, the results come through as made.
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, ok, chaos.New(chaos.WithFault(chaos.OversizedResult(10), 1), chaos.WithEnabled(true)))
	res, err := tool(context.Background(), nil)
	if err != nil || res.Content != `"xxxxxxxx"` {
		t.Errorf("OversizedResult(10): %q, %v", res.Content, err)
	}
}

// TestEnabling: off unless an option, the context or the predicate turns
// it on; Disable wins over the options.
func TestEnabling(t *testing.T) {
	fault := chaos.WithFault(chaos.Failure(unavailable), 1)
	fails := func(mw toolmw.Middleware, ctx context.Context) bool {
		_, err := toolmw.MustWrap(toolmw.Spec{Name: "search"}, ok, mw)(ctx, nil)
		return err != nil
	}
	bg := context.Background()
	run1 := budget.WithRun(bg, budget.WithID("run-1"))
	run2 := budget.WithRun(bg, budget.WithID("run-2"))
	onRun1 := chaos.WithEnabledWhen(func(t chaos.Target) bool { return t.Run == "run-1" && t.Tool == "search" && t.Attempt == 1 })
	for _, c := range []struct {
		name string
		mw   toolmw.Middleware
		ctx  context.Context
		want bool
	}{
		{"no switch", chaos.New(fault), bg, false},
		{"Enable", chaos.New(fault), chaos.Enable(bg), true},
		{"Disable inside Enable", chaos.New(fault), chaos.Disable(chaos.Enable(bg)), false},
		{"Enable inside Disable", chaos.New(fault), chaos.Enable(chaos.Disable(bg)), true},
		{"WithEnabled", chaos.New(fault, chaos.WithEnabled(true)), bg, true},
		{"WithEnabled, Disable", chaos.New(fault, chaos.WithEnabled(true)), chaos.Disable(bg), false},
		{"WithEnabled(false)", chaos.New(fault, chaos.WithEnabled(false)), bg, false},
		{"predicate, run-1", chaos.New(fault, onRun1), run1, true},
		{"predicate, run-2", chaos.New(fault, onRun1), run2, false},
		{"predicate, no run", chaos.New(fault, onRun1), bg, false},
		{"predicate, run-1, Disable", chaos.New(fault, onRun1), chaos.Disable(run1), false},
		{"no fault, Enable", chaos.New(), chaos.Enable(bg), false},
	} {
		if got := fails(c.mw, c.ctx); got != c.want {
			t.Errorf("%s: injected %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSpanMarked: the span of an injected call carries toolmw.chaos,
// the others do not.
func TestSpanMarked(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	var faults []string
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, ok,
		tracing.New(tracing.WithTracerProvider(tp)),
		retry.New(retry.WithBackoff(0, 0)),
		chaos.New(append(mixed(), chaos.WithSeed(3), chaos.WithEnabled(true),
			chaos.WithOnInject(func(i chaos.Injection) { faults = append(faults, i.Fault) }))...))
	marked := 0
	for range 200 {
		faults = faults[:0]
		tool(context.Background(), nil)
		s := spans.Ended()[len(spans.Ended())-1]
		var mark string
		for _, a := range s.Attributes() {
			if a.Key == tracing.KeyChaos {
				mark = a.Value.AsString()
			}
		}
		want := ""
		if len(faults) > 0 {
			want = faults[len(faults)-1]
			marked++
		}
		if mark != want {
			t.Fatalf("span marked %q, want %q (faults %v)", mark, want, faults)
		}
	}
	if marked < 40 {
		t.Errorf("%d of 200 spans marked", marked)
	}
}

// TestValidate: unusable values are option_invalid, never a panic.
func TestValidate(t *testing.T) {
	for _, o := range [][]chaos.Option{
		{chaos.WithFault(chaos.Fault{}, 0.1)},
		{chaos.WithFault(chaos.Failure(nil), 0.1)},
		{chaos.WithFault(chaos.Failure((*taxonomy.ToolError)(nil)), 0.1)},
		{chaos.WithFault(chaos.Latency(-1), 0.1)},
		{chaos.WithFault(chaos.Timeout(-1), 0.1)},
		{chaos.WithFault(chaos.OversizedResult(1), 0.1)},
		{chaos.WithFault(chaos.Panic(), -0.1)},
		{chaos.WithFault(chaos.Panic(), 1.1)},
		{chaos.WithFault(chaos.Panic(), math.NaN())},
		{chaos.WithFault(chaos.Panic(), 0.6), chaos.WithFault(chaos.Latency(0), 0.6)},
		{chaos.WithFault(chaos.Panic(), 0.6), chaos.WithFault(chaos.Latency(0), 0.6, "search")},
		{chaos.WithFault(chaos.StoreFailure(nil), 0.1)},
		{chaos.WithStoreFault(chaos.Panic(), 0.1)},
		{chaos.WithStoreFault(chaos.Latency(0), 0.7), chaos.WithStoreFault(chaos.StoreFailure(nil), 0.7, "breaker")},
	} {
		err := chaos.Validate(o...)
		if info := taxonomy.InfoOf(err); err == nil || info.Code != taxonomy.CodeOptionInvalid {
			t.Errorf("Validate: %v, want option_invalid", err)
		}
		if _, err := toolmw.Wrap(toolmw.Spec{Name: "search"}, ok, chaos.New(o...)); err == nil {
			t.Errorf("Wrap accepted %v", chaos.Validate(o...))
		}
	}
	for _, o := range [][]chaos.Option{
		nil, {nil},
		{chaos.WithFault(chaos.Panic(), 0.1), chaos.WithFault(chaos.Latency(0), 0.2), chaos.WithFault(chaos.Timeout(0), 0.7)},
		{chaos.WithFault(chaos.Panic(), 0.5, "a"), chaos.WithFault(chaos.Latency(0), 0.5, "b"), chaos.WithFault(chaos.Timeout(0), 0.5)},
		{chaos.WithFault(chaos.Panic(), 0), chaos.WithEnabledWhen(nil), chaos.WithOnInject(nil), chaos.WithClock(nil)},
	} {
		if err := chaos.Validate(o...); err != nil {
			t.Errorf("Validate: %v", err)
		}
	}
}
