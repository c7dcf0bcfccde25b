package bench

import (
	"context"
	"strconv"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/state"
)

// BenchmarkStateMetrics measures the state metrics of issue 33 (package
// state, tracing.RegisterStateMetrics): default_stack_observed is the
// default stack (as toolmw_default in BenchmarkOverhead) while the state
// instruments are registered on an SDK meter provider: the call path does
// not change, since the instruments are read at collection only (compare
// it with BenchmarkOverhead/toolmw_default, and that one before and after
// the change: README's "State metrics" numbers). collect_100_tools is one
// collection by the SDK's manual reader with 100 tools wrapped in the
// default stack, what a scrape costs.
func BenchmarkStateMetrics(b *testing.B) {
	b.Run("default_stack_observed", func(b *testing.B) {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		stop, err := tracing.RegisterStateMetrics(mp, state.NewRegistry())
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = stop() }()
		tool := defaultStack(noopTracing(), quietLogger)
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			res, err := tool(ctx, benchArgs)
			if err != nil {
				b.Fatal(err)
			}
			sink = res
		}
	})
	b.Run("collect_100_tools", func(b *testing.B) {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		stop, err := tracing.RegisterStateMetrics(mp, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = stop() }()
		stack := middleware.Default(middleware.WithTracing(noopTracing()...), middleware.WithLogger(quietLogger),
			middleware.WithEvents(discard), middleware.WithRateLimit(hugeRate, hugeBurst), middleware.WithTimeout(attemptTimeout))
		tools := make([]toolmw.Tool, 100)
		for i := range tools {
			s := spec
			s.Name = "tool_" + strconv.Itoa(i)
			tools[i] = toolmw.MustWrap(s, noop, stack.Middleware())
			if _, err := tools[i](context.Background(), benchArgs); err != nil {
				b.Fatal(err)
			}
		}
		var rm metricdata.ResourceMetrics
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := reader.Collect(ctx, &rm); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		sinkTools = tools
	})
}

var sinkTools []toolmw.Tool
