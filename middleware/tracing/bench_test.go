package tracing_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/toolmwtest"
)

func benchCall(b *testing.B, mws ...toolmw.Middleware) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "bench"}, toolmwtest.OK, mws...)
	ctx := toolmw.WithCallID(context.Background(), "call_1")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSuccess measures the success path: the bare tool under Wrap,
// the no-op providers, the global providers with no SDK installed, and the
// SDK sampling every span (no exporter) with a manual metric reader.
func BenchmarkSuccess(b *testing.B) {
	b.Run("bare", func(b *testing.B) { benchCall(b) })
	b.Run("noop", func(b *testing.B) {
		benchCall(b, tracing.New(tracing.WithTracerProvider(tracenoop.NewTracerProvider()), tracing.WithMeterProvider(metricnoop.NewMeterProvider())))
	})
	b.Run("global-unset", func(b *testing.B) {
		if _, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider); ok {
			b.Skip("a global SDK is installed")
		}
		benchCall(b, tracing.New())
	})
	b.Run("sdk", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		defer func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) }()
		benchCall(b, tracing.New(tracing.WithTracerProvider(tp), tracing.WithMeterProvider(mp)))
	})
	b.Run("sdk+attempts", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		defer func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) }()
		opts := []tracing.Option{tracing.WithTracerProvider(tp), tracing.WithMeterProvider(mp)}
		benchCall(b, tracing.New(opts...), tracing.NewAttempts(opts...))
	})
	b.Run("sdk-never-sampled", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		benchCall(b, tracing.New(tracing.WithTracerProvider(tp), tracing.WithMeterProvider(metricnoop.NewMeterProvider())))
	})
}
