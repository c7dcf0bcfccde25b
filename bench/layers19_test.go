package bench

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fsadaptive "github.com/failsafe-go/failsafe-go/adaptivelimiter"
	fsbulkhead "github.com/failsafe-go/failsafe-go/bulkhead"
	fsfallback "github.com/failsafe-go/failsafe-go/fallback"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/bulkhead"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/fallback"
	"github.com/toolmw/toolmw/middleware/hedge"
)

// The layers of issue 19 alone, against failsafe-go's policies of the same
// job, on the no-op tool: the overhead of a call that is not limited, not
// hedged (the delay is far longer than the call) and not a repeat.
func newLayerSystems() []system {
	wrap := func(mws ...toolmw.Middleware) func() toolmw.Tool {
		return func() toolmw.Tool { return toolmw.MustWrap(spec, noop, mws...) }
	}
	fs := func(p failsafe.Policy[toolmw.Result]) func() toolmw.Tool {
		return func() toolmw.Tool {
			exec := failsafe.With(p)
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				return exec.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[toolmw.Result]) (toolmw.Result, error) {
					return noop(e.Context(), args)
				})
			}
		}
	}
	return []system{
		{"toolmw_bulkhead", wrap(bulkhead.New(64))},
		{"toolmw_bulkhead_adaptive", wrap(bulkhead.New(20, bulkhead.WithAdaptive(bulkhead.Adaptive{Min: 1, Max: 200, Target: time.Second})))},
		{"failsafe_adaptivelimiter", fs(fsadaptive.NewBuilder[toolmw.Result]().WithLimits(1, 200, 20).Build())},
		{"failsafe_bulkhead", fs(fsbulkhead.NewBuilder[toolmw.Result](64).WithMaxWaitTime(time.Second).Build())},
		{"toolmw_hedge", wrap(hedge.New(hedge.WithDelay(time.Second)))},
		{"failsafe_hedge", fs(hedgepolicy.NewWithDelay[toolmw.Result](time.Second))},
		{"toolmw_dedupe", func() toolmw.Tool { return dedupeSystem() }},
		{"toolmw_fallback", wrap(fallback.New(fallback.WithLastGood(0), fallback.WithSharedResults()))}, // remembers each success: the costlier mode
		{"failsafe_fallback", fs(fsfallback.NewWithResult(toolmw.Text("no data")))},
	}
}

// dedupeSystem calls through the dedupe layer with a run and a new call id
// each time: the path of a first call, which records its outcome.
func dedupeSystem() toolmw.Tool {
	tool := toolmw.MustWrap(spec, noop, dedupe.New())
	run := budget.WithRun(context.Background())
	var n atomic.Int64
	ids := make([]string, 4096)
	for i := range ids {
		ids[i] = "call_" + strconv.Itoa(i)
	}
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		i := n.Add(1)
		if i%int64(len(ids)) == 0 {
			run = budget.WithRun(context.Background()) // a new run before the ids repeat
		}
		return tool(toolmw.WithCallID(run, ids[i%int64(len(ids))]), args)
	}
}

func BenchmarkNewLayers(b *testing.B) {
	for _, s := range newLayerSystems() {
		b.Run(s.name, func(b *testing.B) {
			tool := s.make()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := tool(ctx, benchArgs)
				if err != nil {
					b.Fatal(err)
				}
				sink = res
			}
		})
	}
}

// heavyTail is a test dependency whose latency has a heavy tail: 95% of
// calls take median, 5% take ten times as long. It honours its context.
func heavyTail(median time.Duration, seed uint64) toolmw.Tool {
	r := rand.New(rand.NewPCG(seed, seed))
	var mu = make(chan struct{}, 1)
	return func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		mu <- struct{}{}
		slow := r.IntN(100) < 5
		<-mu
		d := median
		if slow {
			d = 10 * median
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return toolmw.Text("ok"), nil
		case <-ctx.Done():
			return toolmw.Result{}, ctx.Err()
		}
	}
}

// BenchmarkHedgeTail calls the heavy-tailed dependency (median 5ms, 5% of
// calls at 50ms) one call at a time, without and with hedging, and reports
// the latency percentiles of the calls and the executions per call. Run it
// with a fixed count, e.g. -benchtime=1000x. toolmw's hedges draw on a
// retry token budget (10% of calls, reserve 10); failsafe-go's hedge policy
// has no budget here.
func BenchmarkHedgeTail(b *testing.B) {
	const median = 5 * time.Millisecond
	idem := toolmw.Spec{Name: "search", Idempotent: true}
	for _, c := range []struct {
		name string
		mws  []toolmw.Middleware
	}{
		{"none", nil},
		{"toolmw_hedge_2x", []toolmw.Middleware{hedge.New(hedge.WithDelay(2 * median))}},
		{"toolmw_hedge_p95", []toolmw.Middleware{hedge.New()}}, // the default: the tracked 95th percentile
		{"failsafe_hedge_2x", nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			var execs atomic.Int64
			dep := heavyTail(median, 19)
			counted := func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				execs.Add(1)
				return dep(ctx, args)
			}
			tool := toolmw.MustWrap(idem, counted, c.mws...)
			if c.name == "failsafe_hedge_2x" {
				exec := failsafe.With(hedgepolicy.NewWithDelay[toolmw.Result](2 * median))
				tool = func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
					return exec.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[toolmw.Result]) (toolmw.Result, error) {
						return counted(e.Context(), args)
					})
				}
			}
			ctx := context.Background()
			for range 64 { // warm up: the percentile needs samples
				_, _ = tool(ctx, nil)
			}
			execs.Store(0)
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				if _, err := tool(ctx, nil); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			at := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond) }
			b.ReportMetric(at(0.50), "p50-ms")
			b.ReportMetric(at(0.99), "p99-ms")
			b.ReportMetric(float64(execs.Load())/float64(len(lat)), "execs/call")
			time.Sleep(20 * median) // let the last losers return before goleak looks
		})
	}
}
