package tracing_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/bulkhead"
	"github.com/toolmw/toolmw/middleware/hedge"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/taxonomy"
)

// stateRig reads the state instruments of state.Default with the SDK's
// manual reader. The scenarios below give their tools names of their own:
// the layers publish into the one Default registry.
type stateRig struct {
	reader *sdkmetric.ManualReader
}

func newStateRig(t *testing.T) *stateRig {
	t.Helper()
	r := &stateRig{reader: sdkmetric.NewManualReader()}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	stop, err := tracing.RegisterStateMetrics(mp, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
		_ = mp.Shutdown(context.Background())
	})
	return r
}

// point is one data point: its value and attributes.
type point struct {
	value float64
	attrs map[string]string
}

// collect returns the points of every state instrument, by metric name,
// and checks each instrument's kind and unit on the way.
func (r *stateRig) collect(t *testing.T) map[string][]point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string][]point{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Unit == "" {
				t.Errorf("%s has no unit", m.Name)
			}
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out[m.Name] = append(out[m.Name], point{float64(p.Value), attrsOf(p.Attributes.ToSlice())})
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					out[m.Name] = append(out[m.Name], point{p.Value, attrsOf(p.Attributes.ToSlice())})
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[m.Name] = append(out[m.Name], point{float64(p.Value), attrsOf(p.Attributes.ToSlice())})
				}
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					out[m.Name] = append(out[m.Name], point{p.Value, attrsOf(p.Attributes.ToSlice())})
				}
			default:
				t.Errorf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return out
}

func attrsOf(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsString()
	}
	return m
}

// value returns the value of metric name whose attributes include want.
func (r *stateRig) value(t *testing.T, name string, want map[string]string) (float64, bool) {
	t.Helper()
	for _, p := range r.collect(t)[name] {
		match := true
		for k, v := range want {
			match = match && p.attrs[k] == v
		}
		if match {
			return p.value, true
		}
	}
	return 0, false
}

// expect checks metric name of the series named (and, with detail, its
// second attribute) reads want.
func (r *stateRig) expect(t *testing.T, name string, want float64, attrs ...string) {
	t.Helper()
	m := map[string]string{}
	for i := 0; i+1 < len(attrs); i += 2 {
		m[attrs[i]] = attrs[i+1]
	}
	got, ok := r.value(t, name, m)
	if !ok {
		t.Errorf("%s%v: no series", name, attrs)
		return
	}
	if got != want {
		t.Errorf("%s%v = %v, want %v", name, attrs, got, want)
	}
}

func wrap(t *testing.T, name string, idempotent bool, tool toolmw.Tool, mws ...toolmw.Middleware) toolmw.Tool {
	t.Helper()
	w, err := toolmw.Wrap(toolmw.Spec{Name: name, Description: "a tool", Idempotent: idempotent}, tool, mws...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

var errDown = errors.New("dependency down")

const name = tracing.AttrName

// TestStateBreakerTripsAndRecovers: state 0 → 2 → 1 → 0, and a transition
// counted for each state entered.
func TestStateBreakerTripsAndRecovers(t *testing.T) {
	// gobreaker reads time.Now: the bubble's fake time drives it.
	synctest.Test(t, func(t *testing.T) {
		r := newStateRig(t)
		var failing atomic.Bool
		failing.Store(true)
		tool := wrap(t, "state_breaker", false, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			if failing.Load() {
				return toolmw.Result{}, errDown
			}
			return toolmw.Text("ok"), nil
		}, breaker.New(breaker.WithConsecutiveFailures(2), breaker.WithOpenFor(10*time.Second)))
		ctx := context.Background()
		_, _ = tool(ctx, nil)
		r.expect(t, "toolmw.breaker.state", 0, name, "state_breaker")
		_, _ = tool(ctx, nil)
		r.expect(t, "toolmw.breaker.state", 2, name, "state_breaker")
		r.expect(t, "toolmw.breaker.transitions", 1, name, "state_breaker", tracing.AttrState, "open")
		time.Sleep(10 * time.Second)
		r.expect(t, "toolmw.breaker.state", 1, name, "state_breaker") // read at collection: the open period ended
		failing.Store(false)
		if _, err := tool(ctx, nil); err != nil {
			t.Fatal(err)
		}
		r.expect(t, "toolmw.breaker.state", 0, name, "state_breaker")
		for _, to := range []string{"open", "half-open", "closed"} {
			r.expect(t, "toolmw.breaker.transitions", 1, name, "state_breaker", tracing.AttrState, to)
		}
		runtime.KeepAlive(tool)
	})
}

// TestStateBulkheadSaturates: two calls hold the slots, one waits, one is
// refused; all read back at collection, then drained.
func TestStateBulkheadSaturates(t *testing.T) {
	r := newStateRig(t)
	release := make(chan struct{})
	tool := wrap(t, "state_bulkhead", false, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		<-release
		return toolmw.Text("ok"), nil
	}, bulkhead.New(2, bulkhead.WithMaxQueue(1)))
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { _, _ = tool(context.Background(), nil) })
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		in, _ := r.value(t, "toolmw.bulkhead.in_flight", map[string]string{name: "state_bulkhead"})
		q, _ := r.value(t, "toolmw.bulkhead.queued", map[string]string{name: "state_bulkhead"})
		if in == 2 && q == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("in flight %v, queued %v: want 2 and 1", in, q)
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := tool(context.Background(), nil); taxonomy.InfoOf(err).Code != taxonomy.CodeBulkheadFull {
		t.Fatalf("a fourth call: %v, want bulkhead_full", err)
	}
	r.expect(t, "toolmw.bulkhead.refusals", 1, name, "state_bulkhead")
	r.expect(t, "toolmw.bulkhead.limit", 2, name, "state_bulkhead")
	close(release)
	wg.Wait()
	r.expect(t, "toolmw.bulkhead.in_flight", 0, name, "state_bulkhead")
	r.expect(t, "toolmw.bulkhead.queued", 0, name, "state_bulkhead")
	runtime.KeepAlive(tool)
}

// TestStateRateLimiter: a call that waits adds its wait; one whose wait
// is too long is refused.
func TestStateRateLimiter(t *testing.T) {
	r := newStateRig(t)
	fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ok := func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }
	waits := wrap(t, "state_rl_wait", false, ok, ratelimit.New(1, 1, ratelimit.WithClock(fake), ratelimit.WithMaxWait(time.Minute)))
	refuses := wrap(t, "state_rl_refuse", false, ok, ratelimit.New(rate.Every(time.Hour), 1, ratelimit.WithClock(fake), ratelimit.WithMaxWait(time.Minute)))
	ctx := context.Background()
	_, _ = waits(ctx, nil)
	done := make(chan error)
	go func() { _, err := waits(ctx, nil); done <- err }()
	fake.WaitForTimers(1)
	fake.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.expect(t, "toolmw.ratelimit.wait", 1, name, "state_rl_wait")
	r.expect(t, "toolmw.ratelimit.refusals", 0, name, "state_rl_wait")
	_, _ = refuses(ctx, nil)
	if _, err := refuses(ctx, nil); taxonomy.InfoOf(err).Kind != taxonomy.KindRateLimited {
		t.Fatalf("second call: %v, want rate-limited", err)
	}
	r.expect(t, "toolmw.ratelimit.refusals", 1, name, "state_rl_refuse")
	r.expect(t, "toolmw.ratelimit.wait", 0, name, "state_rl_refuse")
	runtime.KeepAlive([]toolmw.Tool{waits, refuses})
}

// TestStateBudgetsDrain: a retry budget of two tokens is spent and then
// refuses; a run budget of three attempts is used up and refuses.
func TestStateBudgetsDrain(t *testing.T) {
	r := newStateRig(t)
	fails := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Transient("upstream_unavailable", "down")
	}
	b := budget.NewRetry(budget.WithReserve(2), budget.WithRatio(0))
	zero := func() float64 { return 0 }
	drains := wrap(t, "state_retry_budget", false, fails, retry.New(retry.WithMaxAttempts(10), retry.WithBudget(b), retry.WithRand(zero)))
	r.expect(t, "toolmw.retry_budget.tokens", 2, name, state.Unnamed) // not called yet
	if _, err := drains(context.Background(), nil); taxonomy.InfoOf(err).Kind != taxonomy.KindRetryBudgetExhausted {
		t.Fatalf("%v, want retry-budget-exhausted", err)
	}
	r.expect(t, "toolmw.retry_budget.tokens", 0, name, "state_retry_budget")
	r.expect(t, "toolmw.retry_budget.refusals", 1, name, "state_retry_budget")

	runs := wrap(t, "state_run_budget", false, fails, retry.New(retry.WithMaxAttempts(10), retry.WithRand(zero), retry.WithoutBudget()))
	ctx := budget.WithRun(context.Background(), budget.WithMaxAttempts(3))
	if _, err := runs(ctx, nil); taxonomy.InfoOf(err).Kind != taxonomy.KindRunLimitExceeded {
		t.Fatalf("%v, want run-limit-exceeded", err)
	}
	r.expect(t, "toolmw.run_budget.used", 3, name, "state_run_budget")
	r.expect(t, "toolmw.run_budget.refusals", 1, name, "state_run_budget")
	runtime.KeepAlive([]any{drains, runs, ctx})
}

// TestStateHedge: a slow first attempt is hedged and the hedge wins.
func TestStateHedge(t *testing.T) {
	r := newStateRig(t)
	fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var n atomic.Int32
	first := make(chan struct{})
	tool := wrap(t, "state_hedge", true, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		if n.Add(1) == 1 {
			close(first)
			<-ctx.Done() // the first attempt hangs until the race ends
			return toolmw.Result{}, ctx.Err()
		}
		return toolmw.Text("hedge"), nil
	}, hedge.New(hedge.WithDelay(10*time.Millisecond), hedge.WithClock(fake)))
	done := make(chan error)
	go func() { _, err := tool(context.Background(), nil); done <- err }()
	<-first
	fake.WaitForTimers(1)
	fake.Advance(10 * time.Millisecond)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.expect(t, "toolmw.hedge.started", 1, name, "state_hedge")
	r.expect(t, "toolmw.hedge.won", 1, name, "state_hedge")
	runtime.KeepAlive(tool)
}

// failingStore is a rate-limit Store that is down.
type failingStore struct{}

func (failingStore) Admit(context.Context, ratelimit.Request) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errDown
}

// TestStateStorePort: every call decided without the store counts as
// degraded, and each failure (the outage, then the rest) as a store error
// of the port and operation, with no user wiring.
func TestStateStorePort(t *testing.T) {
	r := newStateRig(t)
	before, _ := r.value(t, "toolmw.store.degraded", map[string]string{tracing.AttrStorePort: "ratelimit"})
	beforeErr, _ := r.value(t, "toolmw.store.errors", map[string]string{tracing.AttrStorePort: "ratelimit", tracing.AttrStoreOp: "admit"})
	tool := wrap(t, "state_store", false, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("ok"), nil
	}, ratelimit.New(100, 100, ratelimit.WithStore(failingStore{})))
	for range 2 {
		if _, err := tool(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	r.expect(t, "toolmw.store.degraded", before+2, tracing.AttrStorePort, "ratelimit")
	r.expect(t, "toolmw.store.errors", beforeErr+2, tracing.AttrStorePort, "ratelimit", tracing.AttrStoreOp, "admit")
	runtime.KeepAlive(tool)
}

// TestStateSpendAndRunLimit: a costed call is settled at its cost and
// holds nothing after; a second call of a once-per-run tool is refused.
func TestStateSpendAndRunLimit(t *testing.T) {
	r := newStateRig(t)
	ok := func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }
	tool := wrap(t, "state_spend", false, ok, runlimit.New(runlimit.Once("state_spend")), spend.New(spend.Fixed("state_spend", 2.5)))
	ctx := spend.ContextWithLimit(budget.WithRun(context.Background()), 10)
	if _, err := tool(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tool(ctx, nil); taxonomy.InfoOf(err).Code != taxonomy.CodeRunCallLimit {
		t.Fatalf("%v, want run_call_limit", err)
	}
	r.expect(t, "toolmw.spend.settled", 2.5, name, "state_spend")
	r.expect(t, "toolmw.spend.reserved", 0, name, "state_spend")
	r.expect(t, "toolmw.runlimit.refusals", 1, name, "state_spend")
	runtime.KeepAlive(tool)
}

// TestStateHostileKeysBounded: a keyed breaker given 1,000 distinct
// hostile keys makes 1,000 breakers, and each state instrument still
// reports at most state.DefaultMaxSeries+1 series, with bounded, scrubbed
// names; the breakers past the bound are folded into _OTHER. Run last: it
// fills the Default registry's series.
func TestStateHostileKeysBounded(t *testing.T) {
	r := newStateRig(t)
	const secret = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s01"
	tool := wrap(t, "state_hostile", false, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, errDown
	}, breaker.New(breaker.WithConsecutiveFailures(1), breaker.WithKey(func(c toolmw.Call) string { return c.ID })))
	for i := range 1000 {
		ctx := toolmw.WithCallID(context.Background(), secret+"\x00\xff"+strconv.Itoa(i))
		_, _ = tool(ctx, nil)
	}
	all := r.collect(t)
	for metric, points := range all {
		if len(points) > state.DefaultMaxSeries+1 {
			t.Errorf("%s: %d series, bound %d", metric, len(points), state.DefaultMaxSeries+1)
		}
		for _, p := range points {
			for _, v := range p.attrs {
				if len(v) > 2*state.MaxNameLen || containsSecret(v, secret) {
					t.Errorf("%s: attribute %q", metric, v)
				}
			}
		}
	}
	if v, ok := r.value(t, "toolmw.breaker.state", map[string]string{name: state.Other}); !ok || v != 2 {
		t.Errorf("the _OTHER breaker state = %v, %v: want 2 (open, the highest)", v, ok)
	}
	runtime.KeepAlive(tool)
}

func containsSecret(s, secret string) bool {
	for i := 0; i+12 <= len(secret); i++ {
		if len(s) >= 12 && contains(s, secret[i:i+12]) {
			return true
		}
	}
	return false
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
