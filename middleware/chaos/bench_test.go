package chaos_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/chaos"
)

//go:noinline
func noop(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }

func run(b *testing.B, ctx context.Context, tool toolmw.Tool) {
	b.ReportAllocs()
	for b.Loop() {
		tool(ctx, nil)
	}
}

// faulty is a layer with faults that nothing enables: what a build with
// chaos compiled in, and switched off, runs.
func faulty(opts ...chaos.Option) toolmw.Middleware {
	return chaos.New(append([]chaos.Option{chaos.WithSeed(1),
		chaos.WithFault(chaos.Failure(unavailable), 0.1),
		chaos.WithFault(chaos.Latency(0), 0.1, "search")}, opts...)...)
}

// BenchmarkNoLayer is the baseline: the tool inside toolmw.Wrap alone.
func BenchmarkNoLayer(b *testing.B) {
	run(b, context.Background(), toolmw.MustWrap(toolmw.Spec{Name: "search"}, noop))
}

// BenchmarkDisabled is the layer, with faults, that nothing enables: its
// cost over BenchmarkNoLayer is what chaos costs in production (≤ 5 ns).
// It runs before any Enable of the process (the benchmarks that enable
// come after it); bench/ measures it in a process of its own.
func BenchmarkDisabled(b *testing.B) {
	run(b, context.Background(), toolmw.MustWrap(toolmw.Spec{Name: "search"}, noop, faulty()))
}

// BenchmarkDisabledByContext: enabled by the option, and switched off by
// the call's context.
func BenchmarkDisabledByContext(b *testing.B) {
	run(b, chaos.Disable(context.Background()), toolmw.MustWrap(toolmw.Spec{Name: "search"}, noop, faulty(chaos.WithEnabled(true))))
}

// BenchmarkEnabled: every call draws; 10% or 20% get a fault (a failure,
// or a latency of 0).
func BenchmarkEnabled(b *testing.B) {
	run(b, context.Background(), toolmw.MustWrap(toolmw.Spec{Name: "search"}, noop, faulty(chaos.WithEnabled(true))))
}

// BenchmarkEnabledByContext: enabled by the call's context.
func BenchmarkEnabledByContext(b *testing.B) {
	run(b, chaos.Enable(context.Background()), toolmw.MustWrap(toolmw.Spec{Name: "search"}, noop, faulty()))
}
