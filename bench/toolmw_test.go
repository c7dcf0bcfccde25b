package bench

import (
	"io"
	"time"

	"github.com/rs/zerolog"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/classify"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/middleware/logging"
	"github.com/toolmw/toolmw/middleware/permit"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/middleware/recovery"
	"github.com/toolmw/toolmw/middleware/redact"
	"github.com/toolmw/toolmw/middleware/result"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/timeout"
	"github.com/toolmw/toolmw/middleware/tracing"
)

// spec is the benchmarked tool's spec.
var spec = toolmw.Spec{Name: "get_weather", Description: "Current weather in a city.", Idempotent: true}

// The shared settings: a per-attempt timeout as long as failsafe-go's, and a
// rate limit so high it never throttles. rate.Inf is not used: the
// ratelimit layer (like the limiter itself) treats it as "no limit" and
// steps aside, and the point is to measure the layer at work.
const (
	attemptTimeout = 2 * time.Second
	hugeRate       = rate.Limit(1e9)
	hugeBurst      = 1 << 30
)

// discard is an events sink that drops every event.
var discard = events.SinkFunc(func(events.Event) {})

// quietLogger writes nothing for a successful call (successes are written at
// DEBUG) but is on: the layer runs, as it does in production.
var quietLogger = zerolog.New(io.Discard).Level(zerolog.InfoLevel)

// toolmwSystems lists the toolmw systems, toolmw_default first: the default
// Stack, Wrap with no layer (the floor of every toolmw figure) and each layer
// alone, all wrapped with toolmw.Wrap as a user would.
func toolmwSystems() []system {
	wrap := func(mws ...toolmw.Middleware) func() toolmw.Tool {
		return func() toolmw.Tool { return toolmw.MustWrap(spec, noop, mws...) }
	}
	return []system{
		{"toolmw_default", func() toolmw.Tool { return defaultStack(noopTracing(), zerolog.Nop()) }},
		{"toolmw_wrap", wrap()},
		{"toolmw_default_nolimit", func() toolmw.Tool { return plainDefault() }},
		{"toolmw_default_sdk", func() toolmw.Tool { return defaultStack(sdkTracing(), quietLogger) }},
		{"toolmw_tracing", wrap(tracing.New(sdkTracing()...))},
		{"toolmw_logging", wrap(logging.New(quietLogger))},
		{"toolmw_events", wrap(events.New(discard))},
		{"toolmw_retry", wrap(retry.New())},
		{"toolmw_breaker", wrap(breaker.New())},
		{"toolmw_ratelimit", wrap(ratelimit.New(hugeRate, hugeBurst))},
		{"toolmw_timeout", wrap(timeout.New(attemptTimeout))},
		{"toolmw_recovery", wrap(recovery.New())},
		{"toolmw_redact", wrap(redact.New())},
		{"toolmw_classify", wrap(classify.New())},
		{"toolmw_permit", wrap(permit.New(permit.Allow(spec.Name)))},
		{"toolmw_result", wrap(result.New())},
		{"toolmw_chaos_disabled", wrap(chaosDisabled())},
	}
}

// defaultStack is the default Stack with every layer on: the per-attempt
// timeout, a rate limit that never throttles, events to a discarding sink,
// and the given tracing and logging set-up.
func defaultStack(tracingOpts []tracing.Option, logger zerolog.Logger) toolmw.Tool {
	stack := middleware.Default(
		middleware.WithTracing(tracingOpts...),
		middleware.WithLogger(logger),
		middleware.WithEvents(discard),
		middleware.WithRateLimit(hugeRate, hugeBurst),
		middleware.WithTimeout(attemptTimeout),
	)
	return toolmw.MustWrap(spec, noop, stack.Middleware())
}

// plainDefault is middleware.Default as it comes, but for the no-op
// tracing and events to a discarding sink as in defaultStack: no rate
// limit (the default stack has none until WithRateLimit) and the default
// 30 s timeout.
func plainDefault() toolmw.Tool {
	stack := middleware.Default(middleware.WithTracing(noopTracing()...), middleware.WithEvents(discard))
	return toolmw.MustWrap(spec, noop, stack.Middleware())
}

// noopTracing is the set-up of the toolmw_default benchmark: the
// OpenTelemetry no-op tracer and meter providers, with the default stack's
// disabled logger (zerolog.Nop). The tracing and logging layers document
// that they then step aside and return the tool unchanged.
func noopTracing() []tracing.Option {
	return []tracing.Option{
		tracing.WithTracerProvider(tracenoop.NewTracerProvider()),
		tracing.WithMeterProvider(metricnoop.NewMeterProvider()),
	}
}

// sdkTracing is a production set-up with nothing exported: the
// OpenTelemetry SDK recording every span (no exporter attached) and
// aggregating metrics (a manual reader never collected). The
// toolmw_default_sdk benchmark pairs it with a logger at INFO, which writes
// nothing for a success.
func sdkTracing() []tracing.Option {
	return []tracing.Option{
		tracing.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))),
		tracing.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))),
	}
}
