package bench

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/chaos"
	"github.com/toolmw/toolmw/taxonomy"
)

// chaosDisabled is a chaos layer with faults that nothing enables (no
// option, no predicate, no chaos.Enable in the process): what a build
// with chaos compiled in and switched off runs. Issue 34's target: at
// most 5 ns per call over toolmw_wrap.
func chaosDisabled() toolmw.Middleware {
	return chaos.New(chaos.WithSeed(1),
		chaos.WithFault(chaos.Failure(taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down")), 0.1),
		chaos.WithFault(chaos.Latency(time.Second), 0.1))
}

// chaosTarget is issue 34's bound on what disabled chaos adds to a call.
const chaosTarget = 5 // ns

// BenchmarkChaosDisabled reports what a disabled chaos layer adds to a
// call through toolmw.Wrap, as the metric ns_over_wrap: both tools are
// called in alternating batches within one benchmark, so that the two
// share the machine's load, and the median of their differences per batch
// is reported. Its sub-benchmarks give the two plain figures.
func BenchmarkChaosDisabled(b *testing.B) {
	wrap := toolmw.MustWrap(spec, noop)
	disabled := toolmw.MustWrap(spec, noop, chaosDisabled())
	ctx := context.Background()
	b.Run("overhead", func(b *testing.B) {
		// Each round times a batch of each, in alternating order (so that
		// neither always runs first, after the other warmed the caches);
		// the median of the rounds' differences is reported, which a
		// round slowed by the machine's other work does not move.
		const batch = 1000
		var diffs []float64
		round := 0
		timeBatch := func(tool toolmw.Tool) time.Duration {
			start := time.Now()
			for range batch {
				sink, _ = tool(ctx, benchArgs)
			}
			return time.Since(start)
		}
		for b.Loop() {
			var w, c time.Duration
			if round%2 == 0 {
				w, c = timeBatch(wrap), timeBatch(disabled)
			} else {
				c, w = timeBatch(disabled), timeBatch(wrap)
			}
			diffs = append(diffs, float64(c-w)/batch)
			round++
		}
		slices.Sort(diffs)
		b.ReportMetric(diffs[len(diffs)/2], "ns_over_wrap")
		b.ReportMetric(chaosTarget, "ns_target")
	})
	for _, s := range []struct {
		name string
		tool toolmw.Tool
	}{{"toolmw_wrap", wrap}, {"toolmw_chaos_disabled", disabled}} {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink, _ = s.tool(ctx, benchArgs)
			}
		})
	}
}
