package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/cache"
	"github.com/toolmw/toolmw/middleware/tracing"
)

// TestCacheLookupsSeen: what the cache layer found shows in the span
// (toolmw.cache), the lookups metric and the log line of each call.
func TestCacheLookupsSeen(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	var logs bytes.Buffer
	stack, err := middleware.Default(
		middleware.WithTracing(tracing.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))),
			tracing.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))),
		middleware.WithSlog(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))).
		InsertBefore(middleware.Retry, middleware.Layer{Name: middleware.Cache, Middleware: cache.New(time.Minute, cache.WithSharedResults())})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	rate := toolmw.MustWrap(toolmw.Spec{Name: "exchange_rate", Idempotent: true}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		calls++
		return toolmw.Text("1.08"), nil
	}, stack.Middleware())
	for range 3 {
		if _, err := rate(context.Background(), json.RawMessage(`{"pair":"EURUSD"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rate(context.Background(), json.RawMessage(`{"pair":"EURUSD","pair":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("the tool ran %d times, want 2 (a miss, two hits, a bypass)", calls)
	}
	var got []string
	for _, s := range spans.Ended() {
		for _, a := range s.Attributes() {
			if a.Key == tracing.KeyCache {
				got = append(got, a.Value.AsString())
			}
		}
	}
	if strings.Join(got, " ") != "miss hit hit bypass" {
		t.Errorf("spans' toolmw.cache: %q, want miss hit hit bypass", got)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != tracing.MetricCacheLookups {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				v, _ := dp.Attributes.Value(tracing.KeyCache)
				counts[v.AsString()] += dp.Value
			}
		}
	}
	if counts["hit"] != 2 || counts["miss"] != 1 || counts["bypass"] != 1 {
		t.Errorf("%s: %v, want 2 hits, a miss and a bypass", tracing.MetricCacheLookups, counts)
	}
	if n := strings.Count(logs.String(), `"cache":"hit"`); n != 2 {
		t.Errorf("%d log lines say cache hit, want 2:\n%s", n, logs.String())
	}
}
