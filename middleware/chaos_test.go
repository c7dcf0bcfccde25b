package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/bulkhead"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/middleware/fallback"
	"github.com/toolmw/toolmw/middleware/hedge"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/middleware/timeout"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// The soaks' strength. By default they make defaultChaosCalls calls (the
// exactly-once and limits soaks a fifth of that, the approval soak a
// fiftieth), which proves their properties in seconds; CI makes more
// (.ci/run sets TOOLMW_CHAOS_CALLS=100000), and -chaos.calls or the
// variable make a soak as long as wanted.
const defaultChaosCalls = 20_000

var (
	chaosCalls   = flag.Int("chaos.calls", envInt("TOOLMW_CHAOS_CALLS", defaultChaosCalls), "calls made by TestChaosDefaultStack; the other soaks make a fifth (a fiftieth for approvals); default $TOOLMW_CHAOS_CALLS or 20000")
	chaosWorkers = flag.Int("chaos.workers", 32, "goroutines making them")
	chaosFor     = flag.Duration("chaos.for", 60*time.Second, "stop making new calls after this long (real time), once the default number is made, so a slow machine stays within CI's time")
)

// envInt returns the positive integer in the environment variable name,
// or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// soakSize returns how many calls a soak that makes one div-th of
// -chaos.calls makes, and its floor: the calls it makes whatever the time
// bound, so that a busy machine makes a soak slower, never weaker than its
// default. -short makes short (and the floor with it).
func soakSize(div, short int) (calls, floor int) {
	calls, floor = *chaosCalls/div, defaultChaosCalls/div
	if testing.Short() {
		calls = short
	}
	return calls, min(calls, floor)
}

// timeBound closes its channel after -chaos.for of real time. It is made
// outside the soak's synctest bubble, whose time is fake.
type timeBound struct {
	stop  chan struct{}
	floor int
}

func newTimeBound(t *testing.T) *timeBound {
	b := &timeBound{stop: make(chan struct{})}
	timer := time.AfterFunc(*chaosFor, func() { close(b.stop) })
	t.Cleanup(func() { timer.Stop() })
	return b
}

// over reports whether the soak should make no call from index i on: the
// time is up and its floor is made.
func (b *timeBound) over(i int) bool {
	if i < b.floor {
		return false
	}
	select {
	case <-b.stop:
		return true
	default:
		return false
	}
}

// leak returns the family of a planted secret found in b, or "".
func leak(b []byte) string { return canary.Leaked(string(b)) }

type behaviour int

const (
	behaveOK          behaviour = iota
	behaveTransient             // typed transient, a secret in its message
	behaveRefusal               // typed refusal, a secret in its message
	behaveUntyped               // an untyped error with a secret
	behaveDialRefused           // a foreign error the map makes transient, a secret in its text
	behaveReset                 // a foreign error the map makes transient only if idempotent
	behaveSlow                  // latency past the timeout, honouring the context
	behaveIgnoreCtx             // latency past the timeout, ignoring the context
	behavePanic                 // a panic whose value carries a secret
)

// pick chooses a behaviour from r: 75% ok, the rest spread over the faults.
func pick(r *rand.Rand) behaviour {
	switch n := r.IntN(100); {
	case n < 75:
		return behaveOK
	case n < 81:
		return behaveTransient
	case n < 84:
		return behaveRefusal
	case n < 87:
		return behaveUntyped
	case n < 90:
		return behaveDialRefused
	case n < 93:
		return behaveReset
	case n < 96:
		return behaveSlow
	case n < 98:
		return behaveIgnoreCtx
	default:
		return behavePanic
	}
}

// retryPermitted reports whether a non-idempotent call may be executed again
// after the tool behaved so: only when the failure was typed transient (by
// the author, or by the map for an error raised before anything was sent).
func retryPermitted(b behaviour) bool { return b == behaveTransient || b == behaveDialRefused }

// chaosTool is a flaky tool that records every execution.
type chaosTool struct {
	perAttempt time.Duration

	mu    sync.Mutex
	execs map[string][]behaviour // call id → behaviour of each execution, in order
	runs  map[*budget.Run]int    // executions per run budget
	plan  map[string]*rand.Rand  // call id → its seeded plan

	ignoring atomic.Int64 // executions that ignored their context
}

func (c *chaosTool) tool(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	call, _ := toolmw.CallFrom(ctx)
	run, _ := budget.RunFrom(ctx)
	c.mu.Lock()
	b := pick(c.plan[call.ID])
	c.execs[call.ID] = append(c.execs[call.ID], b)
	c.runs[run]++
	secret := canary.Secrets[len(c.execs)%len(canary.Secrets)].Value
	c.mu.Unlock()

	switch b {
	case behaveTransient:
		return toolmw.Result{}, taxonomy.Transient("supplier_busy", "busy for "+secret)
	case behaveRefusal:
		return toolmw.Result{}, taxonomy.Refusal("not_allowed_for_customer", "declined for "+secret)
	case behaveUntyped:
		return toolmw.Result{}, fmt.Errorf("ledger rejected token=%s", secret)
	case behaveDialRefused:
		return toolmw.Result{}, fmt.Errorf("dial supplier with key %s: %w", secret, syscall.ECONNREFUSED)
	case behaveReset:
		return toolmw.Result{}, fmt.Errorf("read from supplier (auth %s): %w", secret, syscall.ECONNRESET)
	case behaveSlow:
		<-ctx.Done()
		return toolmw.Result{}, ctx.Err()
	case behaveIgnoreCtx:
		c.ignoring.Add(1)
		time.Sleep(3 * c.perAttempt)
		return toolmw.Text("late"), nil
	case behavePanic:
		panic("corrupt state near " + secret)
	}
	return toolmw.Text("ok"), nil
}

// spanChecker is a span processor that counts spans and looks for canaries
// in everything a span carries.
type spanChecker struct {
	ended  atomic.Int64
	leaked atomic.Value // string
}

func (p *spanChecker) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (p *spanChecker) OnEnd(s sdktrace.ReadOnlySpan) {
	p.ended.Add(1)
	var b bytes.Buffer
	b.WriteString(s.Name())
	b.WriteString(s.Status().Description)
	kvs := s.Attributes()
	for _, e := range s.Events() {
		b.WriteString(e.Name)
		kvs = append(kvs, e.Attributes...)
	}
	for _, kv := range kvs {
		b.WriteString(string(kv.Key))
		b.WriteString(kv.Value.String())
	}
	if l := leak(b.Bytes()); l != "" {
		p.leaked.Store("span: " + l)
	}
}
func (p *spanChecker) Shutdown(context.Context) error   { return nil }
func (p *spanChecker) ForceFlush(context.Context) error { return nil }

// logChecker counts log lines and looks for canaries in lines at WARN or above.
type logChecker struct {
	lines, warn atomic.Int64
	leaked      atomic.Value
}

func (w *logChecker) Write(p []byte) (int, error) {
	w.lines.Add(1)
	if bytes.Contains(p, []byte(`"level":"warn"`)) || bytes.Contains(p, []byte(`"level":"error"`)) {
		w.warn.Add(1)
		if l := leak(p); l != "" {
			w.leaked.Store("log: " + l)
		}
	}
	return len(p), nil
}

// TestChaosDefaultStack drives many calls through the default stack, from
// many goroutines, against a tool that mixes transient failures, refusals,
// foreign errors, latency past the timeout, calls that ignore their context,
// panics and caller cancellations, and checks toolmw's promises under all of
// it. Run it longer with -chaos.calls.
func TestChaosDefaultStack(t *testing.T) {
	// The calls run in a testing/synctest bubble: timeouts, backoffs, open
	// periods and the tools' latencies pass on its fake time, which moves on
	// only when every goroutine in it is blocked, so the run waits on no
	// real timer. The -chaos.for bound is real time, kept outside the
	// bubble.
	bound := newTimeBound(t)
	realStart := time.Now()
	synctest.Test(t, func(t *testing.T) {
		baseline := testutil.Goroutines()
		const perAttempt = 2 * time.Millisecond
		calls, floor := soakSize(1, 5_000)
		workers := *chaosWorkers
		bound.floor = floor

		spans := &spanChecker{}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		logs := &logChecker{}
		logger := zerolog.New(logs).Level(zerolog.InfoLevel)

		var evCount atomic.Int64
		var evLeak atomic.Value
		emitter := events.NewEmitter(events.SinkFunc(func(e events.Event) {
			evCount.Add(1)
			js, _ := json.Marshal(e)
			if l := leak(js); l != "" {
				evLeak.Store("event: " + l)
			}
		}), events.WithQueueSize(calls+1))

		var late, lateIgnoring atomic.Int64
		retries := budget.NewRetry()
		var retried atomic.Int64 // attempts after the first, as the retry layer made them
		countRetries := func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				if c, _ := toolmw.CallFrom(ctx); c.Attempt > 1 {
					retried.Add(1)
				}
				return next(ctx, args)
			}
		}

		stack := middleware.Default(
			middleware.WithTracing(tracing.WithTracerProvider(tp), tracing.WithMeterProvider(metricnoop.NewMeterProvider())),
			middleware.WithLogger(logger),
			middleware.WithRetry(retry.WithBackoff(50*time.Microsecond, time.Millisecond), retry.WithBudget(retries)),
			middleware.WithBreaker(breaker.WithOpenFor(5*time.Millisecond)),
			middleware.WithTimeout(perAttempt, timeout.WithAbandon(), timeout.WithOnLate(func(l timeout.Late) {
				late.Add(1)
				if l.Result.Content == "late" {
					lateIgnoring.Add(1)
				}
			})),
		)
		stack, err := stack.Replace(middleware.Events, emitter.Middleware())
		if err != nil {
			t.Fatal(err)
		}
		stack, err = stack.InsertAfter(middleware.Retry, middleware.Layer{Name: "count", Middleware: countRetries})
		if err != nil {
			t.Fatal(err)
		}

		tools := map[string]*chaosTool{}
		wrapped := map[string]toolmw.Tool{}
		for _, spec := range []toolmw.Spec{{Name: "pay"}, {Name: "search", Idempotent: true}} {
			ct := &chaosTool{perAttempt: perAttempt, execs: map[string][]behaviour{}, runs: map[*budget.Run]int{}, plan: map[string]*rand.Rand{}}
			for i := range calls {
				ct.plan[callID(i)] = rand.New(rand.NewPCG(uint64(i), uint64(len(spec.Name))))
			}
			tools[spec.Name] = ct
			if wrapped[spec.Name], err = stack.Wrap(spec, ct.tool); err != nil {
				t.Fatal(err)
			}
		}

		type outcome struct {
			tool string
			err  error
			told string
		}
		outcomes := make([]outcome, calls)
		var runsMu sync.Mutex
		var runs []*budget.Run
		var next, made atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var run context.Context
				for {
					i := int(next.Add(1)) - 1
					if i >= calls || bound.over(i) {
						return
					}
					made.Add(1)
					if i%10 == 0 || run == nil { // a run of about ten calls shares a budget
						run = budget.WithRun(context.Background())
						r, _ := budget.RunFrom(run)
						runsMu.Lock()
						runs = append(runs, r)
						runsMu.Unlock()
					}
					name := "pay"
					if i%2 == 1 {
						name = "search"
					}
					ctx, cancel := context.WithCancel(toolmw.WithCallID(run, callID(i)))
					if i%20 == 7 { // the caller gives up mid-call
						timer := time.AfterFunc(time.Duration(i%3)*time.Millisecond, cancel)
						defer timer.Stop()
					}
					res, err := wrapped[name](ctx, nil)
					cancel()
					outcomes[i] = outcome{name, err, toolmw.ForModel(res, err)}
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)

		// Abandoned executions go on after their calls returned (one may not
		// even have entered the tool yet): the goroutines return to the
		// baseline once they are all done, and only then are the tools' records
		// complete. The wait is on the bubble's time: it moves on as soon as
		// every goroutine left is blocked, so it costs no real time.
		after := settled(t, baseline)
		for _, ct := range tools {
			ct.mu.Lock() // the records are complete; the lock orders the reads after the writes
			defer ct.mu.Unlock()
		}
		if n := int(made.Load()); n < calls {
			t.Logf("chaos: the time bound (-chaos.for=%v) stopped the run after %d of %d calls", *chaosFor, n, calls)
			if n < floor {
				t.Errorf("only %d calls, fewer than the floor %d", n, floor)
			}
			calls, outcomes = n, outcomes[:n]
		}

		// Every call ended in exactly one outcome: a result, a typed error, or
		// the caller's cancellation.
		byKind := map[string]int{}
		failed, returnedLate := 0, 0
		for i, o := range outcomes {
			if o.err == nil && strings.Contains(o.told, ">late<") {
				returnedLate++ // a context-ignoring execution that beat its timer
			}
			switch _, typed := taxonomy.From(o.err); {
			case o.err == nil:
				byKind["ok"]++
			case errors.Is(o.err, context.Canceled) && !typed:
				byKind["(context.Canceled)"]++
				failed++
			case typed:
				byKind[string(taxonomy.InfoOf(o.err).Kind)+"/"+taxonomy.InfoOf(o.err).Code]++
				failed++
			default:
				t.Fatalf("call %d ended with an untyped error: %v", i, o.err)
			}
			if l := leak([]byte(o.told)); l != "" {
				t.Fatalf("call %d: a secret reached the model: %s", i, o.told)
			}
		}

		// Observers saw each call once.
		if err := emitter.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := spans.ended.Load(); got != int64(calls) {
			t.Errorf("%d spans for %d calls", got, calls)
		}
		if st := emitter.Stats(); st.Dropped != 0 || evCount.Load() != int64(failed) {
			t.Errorf("%d events (stats %+v) for %d failed calls", evCount.Load(), st, failed)
		}
		for _, v := range []*atomic.Value{&spans.leaked, &logs.leaked, &evLeak} {
			if l := v.Load(); l != nil {
				t.Errorf("planted secret leaked: %s", l)
			}
		}

		// A non-idempotent call is executed again only after a typed transient failure.
		most := 0
		for name, ct := range tools {
			for id, ex := range ct.execs {
				most = max(most, len(ex))
				if name == "pay" {
					for _, b := range ex[:len(ex)-1] {
						if !retryPermitted(b) {
							t.Fatalf("pay %s executed again after %v: %v", id, b, ex)
						}
					}
				}
			}
		}

		// Run caps hold, counted at the tool itself.
		for _, ct := range tools {
			for run, n := range ct.runs {
				if run == nil || n > budget.DefaultRunAttempts {
					t.Fatalf("a run executed a tool %d times (cap %d)", n, budget.DefaultRunAttempts)
				}
			}
		}
		// The retry budget holds: retries ≤ reserve + ratio × calls.
		if limit := budget.DefaultReserve + budget.DefaultRatio*float64(calls); float64(retried.Load()) > limit+1 {
			t.Errorf("%d retries with a budget of %.0f", retried.Load(), limit)
		}

		// Every execution that ignored its context either returned to its
		// caller in time or was abandoned and reported late: exactly one of the
		// two, never dropped.
		ignoring := tools["pay"].ignoring.Load() + tools["search"].ignoring.Load()
		if got := lateIgnoring.Load() + int64(returnedLate); got != ignoring {
			t.Errorf("%d late reports + %d returned for %d context-ignoring executions", lateIgnoring.Load(), returnedLate, ignoring)
		}

		kinds := make([]string, 0, len(byKind))
		for k := range byKind {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		var sb strings.Builder
		for _, k := range kinds {
			fmt.Fprintf(&sb, "\n  %-50s %7d", k, byKind[k])
		}
		t.Logf("chaos: %d calls by %d goroutines in %v of the bubble's time; most executions of one call %d; retries %d (budget %.0f); "+
			"late reports %d; log lines %d (WARN+ %d); events %d; spans %d; goroutines before %d after %d; outcomes:%s",
			calls, workers, elapsed.Round(time.Millisecond), most, retried.Load(),
			budget.DefaultReserve+budget.DefaultRatio*float64(calls), late.Load(), logs.lines.Load(), logs.warn.Load(),
			evCount.Load(), spans.ended.Load(), baseline, after, sb.String())
	})
	t.Logf("chaos: %v of real time", time.Since(realStart).Round(time.Millisecond))
}

func callID(i int) string { return fmt.Sprintf("call_%06d", i) }

// TestChaosExactlyOnce drives the default stack with the dedupe, fallback,
// hedge and (adaptive) bulkhead layers inserted against the same flaky tools, issuing every
// call id two or three times from different goroutines at about the same
// moment (a model re-issuing calls), and checks: every issue ends in
// exactly one outcome; a non-idempotent call is executed again only after a
// typed transient failure, across its duplicates as across its attempts
// (zero double executions otherwise); the bulkhead's limit holds at the
// tool; no goroutine outlives the run.
func TestChaosExactlyOnce(t *testing.T) {
	bound := newTimeBound(t)
	synctest.Test(t, func(t *testing.T) {
		baseline := testutil.Goroutines()
		const perAttempt = 2 * time.Millisecond
		const slots = 4
		calls, floor := soakSize(5, 2_000)
		workers := *chaosWorkers
		var late atomic.Int64
		stack := middleware.Default(
			middleware.WithTracing(tracing.WithTracerProvider(sdktrace.NewTracerProvider()), tracing.WithMeterProvider(metricnoop.NewMeterProvider())),
			middleware.WithRetry(retry.WithBackoff(50*time.Microsecond, time.Millisecond)),
			middleware.WithBreaker(breaker.WithOpenFor(5*time.Millisecond)),
			middleware.WithTimeout(perAttempt, timeout.WithAbandon(), timeout.WithOnLate(func(timeout.Late) { late.Add(1) })),
		)
		stack, err := stack.InsertBefore(middleware.Retry, middleware.Layer{Name: middleware.Dedupe, Middleware: dedupe.New()})
		if err != nil {
			t.Fatal(err)
		}
		// Outside retry: the last good result of an idempotent call stands
		// in, marked, for a call that ends circuit-open, rate-limited or
		// timed out.
		stack, err = stack.InsertBefore(middleware.Retry, middleware.Layer{Name: middleware.Fallback, Middleware: fallback.New(fallback.WithLastGood(time.Hour), fallback.WithSharedResults())})
		if err != nil {
			t.Fatal(err)
		}
		var hedgeLate atomic.Int64
		stack, err = stack.InsertAfter(middleware.Retry, middleware.Layer{Name: middleware.Hedge,
			Middleware: hedge.New(hedge.WithDelay(perAttempt/2), hedge.WithOnLate(func(hedge.Late) { hedgeLate.Add(1) }))})
		if err != nil {
			t.Fatal(err)
		}
		// Inside the timeout, so an abandoned execution keeps its slot until
		// it really returns, and the limit holds at the tool itself.
		// Adaptive, so the soak moves its limit too; never above slots.
		stack, err = stack.InsertAfter(middleware.Timeout, middleware.Layer{Name: middleware.Bulkhead,
			Middleware: bulkhead.New(slots, bulkhead.WithAdaptive(bulkhead.Adaptive{Min: 1, Max: slots, Target: perAttempt / 2}))})
		if err != nil {
			t.Fatal(err)
		}

		tools := map[string]*chaosTool{}
		wrapped := map[string]toolmw.Tool{}
		var inTool, peak atomic.Int64
		for _, spec := range []toolmw.Spec{{Name: "pay"}, {Name: "search", Idempotent: true}} {
			ct := &chaosTool{perAttempt: perAttempt, execs: map[string][]behaviour{}, runs: map[*budget.Run]int{}, plan: map[string]*rand.Rand{}}
			for i := range calls {
				ct.plan[callID(i)] = rand.New(rand.NewPCG(uint64(i), uint64(len(spec.Name))))
			}
			tools[spec.Name] = ct
			var gauge sync.Mutex
			concurrent := 0
			measured := func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				gauge.Lock()
				concurrent++
				if int64(concurrent) > peak.Load() {
					peak.Store(int64(concurrent))
				}
				gauge.Unlock()
				inTool.Add(1)
				defer func() {
					gauge.Lock()
					concurrent--
					gauge.Unlock()
				}()
				return ct.tool(ctx, args)
			}
			if wrapped[spec.Name], err = stack.Wrap(spec, measured); err != nil {
				t.Fatal(err)
			}
		}

		// Each call id is issued 2 or 3 times, the issues next to each other
		// in the queue so that workers make them at about the same moment.
		type issue struct{ call, n int }
		var jobs []issue
		for i := range calls {
			for n := range 2 + boolInt(i%5 == 0) {
				jobs = append(jobs, issue{i, n})
			}
		}
		runs := make([]context.Context, calls/10+1)
		for i := range runs {
			runs[i] = budget.WithRun(context.Background())
		}
		type outcome struct {
			res toolmw.Result
			err error
			set bool
		}
		outcomes := make([]outcome, len(jobs))
		bound.floor = floor * len(jobs) / calls
		drive(workers, len(jobs), bound, func(j int) {
			i := jobs[j].call
			name := "pay"
			if i%2 == 1 {
				name = "search"
			}
			ctx, cancel := context.WithCancel(toolmw.WithCallID(runs[i/10], callID(i)))
			if i%20 == 7 && jobs[j].n == 0 { // the first issuer gives up mid-call
				if d := time.Duration(i%3) * time.Millisecond; d > 0 {
					timer := time.AfterFunc(d, cancel)
					defer timer.Stop()
				} else {
					// At once, on another goroutine. Not AfterFunc(0): a
					// zero-duration AfterFunc, made by many goroutines of a
					// synctest bubble at once under -race, crashed the Go
					// 1.26.8 runtime once (SIGSEGV in runtime.(*timer).modify).
					go cancel()
				}
			}
			res, err := wrapped[name](ctx, nil)
			cancel()
			outcomes[j] = outcome{res, err, true}
		})
		after := settled(t, baseline)
		for _, ct := range tools {
			ct.mu.Lock()
			defer ct.mu.Unlock()
		}

		issued, answered, stoodIn := 0, 0, 0
		for j, o := range outcomes {
			if !o.set {
				continue // the time bound stopped the run first
			}
			issued++
			if m, _, ok := fallback.Parse(o.res); ok {
				stoodIn++
				if jobs[j].call%2 == 0 || m.Source != fallback.SourceLastGood {
					t.Errorf("issue %d: a fallback (%+v) for a call of pay, which is not idempotent", j, m)
				}
			}
			switch _, typed := taxonomy.From(o.err); {
			case o.err == nil, typed, errors.Is(o.err, context.Canceled):
				answered++
			default:
				t.Fatalf("issue %d ended with an untyped error: %v", j, o.err)
			}
		}
		if issued < bound.floor {
			t.Errorf("only %d issues, fewer than the floor %d", issued, bound.floor)
		}
		// Zero double executions: a non-idempotent call, however many times
		// it was issued, ran again only after a typed transient failure.
		doubles, pays := 0, 0
		for id, ex := range tools["pay"].execs {
			pays++
			for _, b := range ex[:len(ex)-1] {
				if !retryPermitted(b) {
					doubles++
					t.Errorf("pay %s executed again after %v: %v", id, b, ex)
				}
			}
		}
		if p := peak.Load(); p > slots {
			t.Errorf("%d executions of one tool at once, bulkhead %d", p, slots)
		}
		t.Logf("chaos exactly-once: %d issues of %d calls, %d answered; pay calls executed %d, double executions %d; "+
			"executions %d; bulkhead peak %d of %d; fallbacks %d; late reports %d (timeout) %d (hedge losers); goroutines before %d after %d",
			issued, calls, answered, pays, doubles, inTool.Load(), peak.Load(), slots, stoodIn, late.Load(), hedgeLate.Load(), baseline, after)
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestChaosApproval drives an approval-gated tool through two replicas of
// the default stack (the approval layer outside retry) sharing one store,
// against the flaky tool of the other soaks, while two reviewers approve
// (some with approvals that expire at once) or deny the requests as they
// come, and a quarter of the approved calls are made by both replicas at
// the same moment. It checks: every call ends in exactly one outcome; the
// tool runs only for a call whose approval the layer admitted, and each
// approval admits at most one call; no planted secret in the arguments
// reaches the reviewer's summary, a span, a WARN+ log, an event or the
// model.
func TestChaosApproval(t *testing.T) {
	bound := newTimeBound(t)
	synctest.Test(t, func(t *testing.T) {
		const perAttempt = 2 * time.Millisecond
		calls, floor := soakSize(50, 1_000)
		workers := *chaosWorkers
		bound.floor = floor
		spans := &spanChecker{}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		logs := &logChecker{}
		var evCount atomic.Int64
		var evLeak atomic.Value
		emitter := events.NewEmitter(events.SinkFunc(func(e events.Event) {
			evCount.Add(1)
			if js, _ := json.Marshal(e); leak(js) != "" {
				evLeak.Store("event: " + leak(js))
			}
		}), events.WithQueueSize(4*calls+1))

		store := approval.NewMemoryStore()
		key := bytes.Repeat([]byte("chaos key "), 4)
		ct := &chaosTool{perAttempt: perAttempt, execs: map[string][]behaviour{}, runs: map[*budget.Run]int{}, plan: map[string]*rand.Rand{}}
		for i := range calls {
			ct.plan[callID(i)] = rand.New(rand.NewPCG(uint64(i), 7))
		}
		var admitMu sync.Mutex
		admitted := map[string]int{} // call id → calls the approval layer let through
		admit := func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				c, _ := toolmw.CallFrom(ctx)
				admitMu.Lock()
				admitted[c.ID]++
				admitMu.Unlock()
				return next(ctx, args)
			}
		}
		var desks [2]*approval.Desk
		var replicas [2]toolmw.Tool
		for r := range replicas {
			desks[r] = approval.NewDesk(approval.WithStore(store), approval.WithSealKey(key))
			stack, err := middleware.Default(
				middleware.WithTracing(tracing.WithTracerProvider(tp), tracing.WithMeterProvider(metricnoop.NewMeterProvider())),
				middleware.WithLogger(zerolog.New(logs).Level(zerolog.InfoLevel)),
				middleware.WithRetry(retry.WithBackoff(50*time.Microsecond, time.Millisecond)),
				middleware.WithTimeout(perAttempt),
			).Replace(middleware.Events, emitter.Middleware())
			if err == nil {
				stack, err = stack.InsertBefore(middleware.Retry, middleware.Layer{Name: middleware.Approval, Middleware: desks[r].Middleware(approval.Tools("cancel"))})
			}
			if err == nil {
				stack, err = stack.InsertAfter("approval", middleware.Layer{Name: "admit", Middleware: admit})
			}
			if err == nil {
				replicas[r], err = stack.Wrap(toolmw.Spec{Name: "cancel"}, ct.tool)
			}
			if err != nil {
				t.Fatal(err)
			}
		}

		// Reviewers decide what they are asked: deny one in five, approve
		// the rest, one approval in ten for a nanosecond (it expires).
		asks := make(chan string, 4*calls)
		var reviewLeak atomic.Value
		var granted atomic.Int64
		var reviewers sync.WaitGroup
		for r := range desks {
			reviewers.Go(func() {
				for id := range asks {
					req, err := desks[r].Get(context.Background(), id)
					if err != nil {
						t.Errorf("review %s: %v", id, err)
						continue
					}
					if l := leak([]byte(req.Summary)); l != "" {
						reviewLeak.Store("summary: " + l)
					}
					h := int(req.Summary[len(req.Summary)-2]) + int(id[5])
					switch {
					case h%5 == 0:
						err = desks[r].Deny(context.Background(), req)
					case h%10 == 1:
						err = desks[r].Approve(context.Background(), req, time.Nanosecond)
					default:
						if err = desks[r].Approve(context.Background(), req, time.Hour); err == nil {
							granted.Add(1)
						}
					}
					if err != nil && !errors.Is(err, approval.ErrChanged) && !errors.Is(err, approval.ErrDecided) {
						t.Errorf("decide %s: %v", id, err)
					}
				}
			})
		}

		type outcome struct {
			err  error
			told string
		}
		var outMu sync.Mutex
		var outcomes []outcome
		record := func(res toolmw.Result, err error) {
			outMu.Lock()
			outcomes = append(outcomes, outcome{err, toolmw.ForModel(res, err)})
			outMu.Unlock()
		}
		started := drive(workers, calls, bound, func(i int) {
			secret := canary.Secrets[i%len(canary.Secrets)].Value
			args := json.RawMessage(fmt.Sprintf(`{"booking":"BK-%d","token":%q}`, i, secret))
			ctx := toolmw.WithCallID(budget.WithRun(context.Background(), budget.WithID(fmt.Sprintf("run_%d", i/10))), callID(i))
			// Ask, wait for the decision, ask again: at most a few rounds.
			for round := range 4 {
				if i%4 == 0 && round > 0 { // both replicas at once
					var both sync.WaitGroup
					for r := range replicas {
						both.Go(func() { res, err := replicas[r](ctx, args); record(res, err) })
					}
					both.Wait()
					break
				}
				res, err := replicas[(i+round)%2](ctx, args)
				record(res, err)
				info := taxonomy.InfoOf(err)
				if info.Kind != taxonomy.KindApprovalPending {
					break
				}
				asks <- info.Approval.ID
				time.Sleep(time.Millisecond) // the bubble's time: the reviewers decide meanwhile
			}
		})
		close(asks)
		reviewers.Wait()
		ct.mu.Lock()
		defer ct.mu.Unlock()

		byCode := map[string]int{}
		for i, o := range outcomes {
			switch _, typed := taxonomy.From(o.err); {
			case o.err == nil:
				byCode["ok"]++
			case typed:
				byCode[taxonomy.InfoOf(o.err).Code]++
			case errors.Is(o.err, context.Canceled):
				byCode["(cancelled)"]++
			default:
				t.Fatalf("outcome %d is untyped: %v", i, o.err)
			}
			if l := leak([]byte(o.told)); l != "" {
				t.Fatalf("a secret reached the model: %s", o.told)
			}
		}
		// The tool ran only for admitted calls, and each approval admitted
		// at most one call.
		admitMu.Lock()
		defer admitMu.Unlock()
		total := 0
		for id, n := range admitted {
			total += n
			if n > 1 {
				t.Errorf("call %s was admitted %d times by one approval", id, n)
			}
		}
		for id := range ct.execs {
			if admitted[id] == 0 {
				t.Errorf("call %s ran without an admitted approval", id)
			}
		}
		if int64(total) > granted.Load() {
			t.Errorf("%d calls admitted with %d approvals granted", total, granted.Load())
		}
		if err := emitter.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		failed := len(outcomes) - byCode["ok"]
		if spans.ended.Load() != int64(len(outcomes)) || evCount.Load() != int64(failed) {
			t.Errorf("%d spans and %d events for %d calls, %d failed", spans.ended.Load(), evCount.Load(), len(outcomes), failed)
		}
		for _, v := range []*atomic.Value{&spans.leaked, &logs.leaked, &evLeak, &reviewLeak} {
			if l := v.Load(); l != nil {
				t.Errorf("planted secret leaked: %s", l)
			}
		}
		if byCode["ok"] == 0 || byCode[taxonomy.CodeApprovalDenied] == 0 || byCode[taxonomy.CodeApprovalReplayed] == 0 || byCode[taxonomy.CodeApprovalExpired] == 0 {
			t.Errorf("the soak did not reach every outcome: %v", byCode)
		}
		t.Logf("chaos approval: %d calls, %d outcomes, %d approvals granted, %d admitted, %d executions: %v",
			started, len(outcomes), granted.Load(), total, len(ct.execs), byCode)
	})
}

// TestChaosLimits drives a once-per-run tool and two spend-limited tools
// (one fixed cost, one metered whose cost function is hostile on every
// outcome but a plain success) through the default stack with the
// runlimit layer outside retry and the spend layer just inside it, against
// the flaky tools of the other soaks, in runs of about ten calls with a
// spend limit each. It checks, counted at the tools: every call ends in
// exactly one outcome; no run spends past its limit; a run's once-per-run
// tool executes for at most one call that kept its slot (a call whose
// executions ended in a typed transient failure had no effect and gives
// the slot back); no goroutine outlives the run.
func TestChaosLimits(t *testing.T) {
	bound := newTimeBound(t)
	synctest.Test(t, func(t *testing.T) {
		baseline := testutil.Goroutines()
		const perAttempt = 2 * time.Millisecond
		const limit, payCost, searchMax, searchCost = 1.0, 0.3, 0.2, 0.05
		calls, floor := soakSize(5, 2_000)
		workers := *chaosWorkers
		bound.floor = floor
		stack := middleware.Default(
			middleware.WithTracing(tracing.WithTracerProvider(sdktrace.NewTracerProvider()), tracing.WithMeterProvider(metricnoop.NewMeterProvider())),
			middleware.WithRetry(retry.WithBackoff(50*time.Microsecond, time.Millisecond)),
			middleware.WithBreaker(breaker.WithOpenFor(5*time.Millisecond)),
			middleware.WithTimeout(perAttempt, timeout.WithAbandon(), timeout.WithOnLate(func(timeout.Late) {})),
		)
		costOf := func(res toolmw.Result) float64 {
			if res.Content == "ok" {
				return searchCost
			}
			return math.NaN() // hostile: charged the maximum
		}
		stack, err := stack.InsertBefore(middleware.Retry, middleware.Layer{Name: middleware.RunLimit, Middleware: runlimit.New(runlimit.Once("cancel"))})
		if err == nil {
			stack, err = stack.InsertAfter(middleware.Retry, middleware.Layer{Name: middleware.Spend,
				Middleware: spend.New(spend.Fixed("pay", payCost), spend.Metered("search", searchMax, costOf))})
		}
		if err != nil {
			t.Fatal(err)
		}

		// What each run's executions cost, counted at the tools: pay its
		// fixed cost; search its read cost when it returned "ok", else its
		// maximum (what it cost is unknown).
		var spentMu sync.Mutex
		spent := map[*spend.Account]float64{}
		tools := map[string]*chaosTool{}
		wrapped := map[string]toolmw.Tool{}
		for _, spec := range []toolmw.Spec{{Name: "pay"}, {Name: "search", Idempotent: true}, {Name: "cancel"}} {
			ct := &chaosTool{perAttempt: perAttempt, execs: map[string][]behaviour{}, runs: map[*budget.Run]int{}, plan: map[string]*rand.Rand{}}
			for i := range calls {
				ct.plan[callID(i)] = rand.New(rand.NewPCG(uint64(i), uint64(len(spec.Name))))
			}
			tools[spec.Name] = ct
			measured := func(ctx context.Context, args json.RawMessage) (res toolmw.Result, err error) {
				defer func() {
					cost := searchMax
					switch {
					case spec.Name == "pay":
						cost = payCost
					case spec.Name == "cancel":
						return
					case err == nil && res.Content == "ok":
						cost = searchCost
					}
					acct, _ := spend.AccountFrom(ctx)
					spentMu.Lock()
					spent[acct] += cost
					spentMu.Unlock()
				}()
				return ct.tool(ctx, args)
			}
			if wrapped[spec.Name], err = stack.Wrap(spec, measured); err != nil {
				t.Fatal(err)
			}
		}

		runs := make([]context.Context, calls/10+1)
		accounts := make([]*spend.Account, len(runs))
		for i := range runs {
			runs[i] = spend.ContextWithLimit(budget.WithRun(context.Background()), limit)
			accounts[i], _ = spend.AccountFrom(runs[i])
		}
		type outcome struct {
			err error
			set bool
		}
		outcomes := make([]outcome, calls)
		drive(workers, calls, bound, func(i int) {
			name := [...]string{"pay", "search", "cancel"}[i%3]
			ctx, cancel := context.WithCancel(toolmw.WithCallID(runs[i/10], callID(i)))
			if i%20 == 7 { // the caller gives up mid-call
				if d := time.Duration(i%3) * time.Millisecond; d > 0 {
					timer := time.AfterFunc(d, cancel)
					defer timer.Stop()
				} else {
					// At once, on another goroutine. Not AfterFunc(0): a
					// zero-duration AfterFunc, made by many goroutines of a
					// synctest bubble at once under -race, crashed the Go
					// 1.26.8 runtime once (SIGSEGV in runtime.(*timer).modify).
					go cancel()
				}
			}
			_, err := wrapped[name](ctx, nil)
			cancel()
			outcomes[i] = outcome{err, true}
		})
		after := settled(t, baseline)
		for _, ct := range tools {
			ct.mu.Lock()
			defer ct.mu.Unlock()
		}
		spentMu.Lock()
		defer spentMu.Unlock()

		made, byCode := 0, map[string]int{}
		for i, o := range outcomes {
			if !o.set {
				continue // the time bound stopped the run first
			}
			made++
			switch _, typed := taxonomy.From(o.err); {
			case o.err == nil:
			case typed:
				byCode[taxonomy.InfoOf(o.err).Code]++
			case errors.Is(o.err, context.Canceled):
			default:
				t.Fatalf("call %d ended with an untyped error: %v", i, o.err)
			}
		}
		if made < floor {
			t.Errorf("only %d calls, fewer than the floor %d", made, floor)
		}

		// No run spent past its limit, counted at the tools; the accounts
		// hold nothing once every call has returned.
		peak := 0.0
		for i, acct := range accounts {
			peak = math.Max(peak, spent[acct])
			if spent[acct] > limit+1e-9 {
				t.Errorf("run %d: the tools cost %.4f, limit %.2f", i, spent[acct], limit)
			}
			if acct.Held() != 0 || acct.Spent() < spent[acct]-1e-9 {
				t.Errorf("run %d: account spent %.4f held %.4f; the tools cost %.4f", i, acct.Spent(), acct.Held(), spent[acct])
			}
		}

		// The once-per-run tool executed, per run, for at most one call that
		// kept its slot.
		kept := map[int]int{} // run → calls of cancel that kept the slot
		for id, ex := range tools["cancel"].execs {
			var i int
			if _, err := fmt.Sscanf(id, "call_%d", &i); err != nil {
				t.Fatal(err)
			}
			if last := ex[len(ex)-1]; !retryPermitted(last) {
				kept[i/10]++
			}
		}
		for run, n := range kept {
			if n > 1 {
				t.Errorf("run %d: %d calls of the once-per-run tool executed and kept their slot", run, n)
			}
		}
		if byCode[taxonomy.CodeRunCallLimit] == 0 || byCode[taxonomy.CodeSpendLimit] == 0 {
			t.Errorf("the limits never refused a call: %v", byCode)
		}
		t.Logf("chaos limits: %d calls in %d runs; refused: %d run_call_limit, %d spend_limit; most a run's tools cost %.2f of %.2f; runs with a kept cancel %d; goroutines before %d after %d",
			made, len(runs), byCode[taxonomy.CodeRunCallLimit], byCode[taxonomy.CodeSpendLimit], peak, limit, len(kept), baseline, after)
	})
}

// drive hands the indexes 0 to n-1 to workers goroutines, each calling f
// with the next index until they run out or the time bound is over, waits
// for them, and returns how many indexes were handed out.
func drive(workers, n int, bound *timeBound, f func(i int)) int {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || bound.over(i) {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
	return min(int(next.Load()), n)
}

// settled waits, on the bubble's fake time, up to 10 s for the goroutines a
// soak started to end, fails t when more than baseline are left in the
// bubble, and returns how many there are. It counts the bubble's own
// goroutines (testutil.Goroutines): a count taken across the process can
// fall to the baseline while an abandoned execution still sleeps in the
// bubble, and the bubble would end in a deadlock panic.
func settled(t *testing.T, baseline int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	after := testutil.Goroutines()
	for after > baseline && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		after = testutil.Goroutines()
	}
	if after > baseline {
		t.Errorf("goroutines: %d before, %d after", baseline, after)
	}
	return after
}
