package tracing

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/internal/panicked"
	"github.com/toolmw/toolmw/middleware/internal/partinfo"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns a middleware that traces each tool call as one span named
// "execute_tool {tool}" and records its duration and outcome as metrics.
// See the package documentation for the attributes, the status and the
// metrics. With a no-op tracer provider and a no-op meter provider (the
// types of the otel noop packages) it returns each tool unchanged.
func New(opts ...Option) toolmw.Middleware {
	if err := Validate(opts...); err != nil {
		return toolmw.Reject(err)
	}
	return func(next toolmw.Tool) toolmw.Tool {
		cfg := newConfig(opts)
		_, noTraces := cfg.tp.(tracenoop.TracerProvider)
		_, noMetrics := cfg.mp.(metricnoop.MeterProvider)
		if noTraces && noMetrics {
			return next
		}
		l := &layer{next: next, clock: cfg.clock, cfg: cfg}
		if !noTraces {
			l.tracer = cfg.tp.Tracer(ScopeName)
		}
		meter := cfg.mp.Meter(ScopeName)
		l.duration = float64Histogram(meter, MetricDuration,
			metric.WithDescription("Duration of tool calls."),
			metric.WithUnit("s"),
			metric.WithExplicitBucketBoundaries(durationBounds...))
		l.calls = int64Counter(meter, MetricCalls,
			metric.WithDescription("Number of tool calls."),
			metric.WithUnit("{call}"))
		return l.call
	}
}

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/toolmw/toolmw/middleware/tracing"

// OperationName is the gen_ai.operation.name of a tool call, and the first
// word of its span name.
const OperationName = "execute_tool"

// The attribute keys of the OpenTelemetry GenAI and general semantic
// conventions that the layer sets.
const (
	KeyOperationName = attribute.Key("gen_ai.operation.name") // always "execute_tool"
	KeyToolName      = attribute.Key("gen_ai.tool.name")      // the tool's name, when known
	KeyToolCallID    = attribute.Key("gen_ai.tool.call.id")   // the model's call id, when known
	KeyToolType      = attribute.Key("gen_ai.tool.type")      // Spec.Type, when known
	KeyErrorType     = attribute.Key("error.type")            // the code, when the call returned an error
)

// The attribute keys of toolmw's own attributes.
const (
	KeyOutcome   = attribute.Key("toolmw.outcome")    // taxonomy.OutcomeOf: ok, failed, refused, not_permitted, timed_out, cancelled, pending, denied, blocked
	KeyErrorKind = attribute.Key("toolmw.error.kind") // the taxonomy kind, on error
	KeyErrorCode = attribute.Key("toolmw.error.code") // the taxonomy code, on error
	KeyRetryable = attribute.Key("toolmw.retryable")  // whether the error is retryable, on error
	KeyAttempts  = attribute.Key("toolmw.attempts")   // attempts made, on the call's span
	KeyAttempt   = attribute.Key("toolmw.attempt")    // the attempt's number, on an attempt event
	KeyFallback  = attribute.Key("toolmw.fallback")   // what stood in for the result (toolmw.SetFallback), when something did
	KeyDegraded  = attribute.Key("toolmw.degraded")   // the layer that fell back from its shared store to local state (toolmw.SetDegraded)
	// KeyResultParts is the number of parts of a successful result that
	// has parts (toolmw.Result.AllParts); unset for a text result.
	KeyResultParts = attribute.Key("toolmw.result.parts")
	// KeyResultPartDescriptions describes the first MaxPartsDescribed of
	// those parts, each "kind MIME-type N bytes" ("image image/png 48213
	// bytes"), then "+N more": never their content, names or URIs, a kind
	// that is not toolmw's reads "unknown", a MIME type that is not well
	// formed "invalid-mime".
	KeyResultPartDescriptions = attribute.Key("toolmw.result.part_descriptions")
)

// MaxPartsDescribed is how many parts KeyResultPartDescriptions describes.
const MaxPartsDescribed = partinfo.MaxListed

// The metric names; see the package documentation for why these.
const (
	MetricDuration = "gen_ai.execute_tool.duration" // histogram, s
	MetricCalls    = "toolmw.tool.calls"            // counter, {call}
	MetricAttempts = "toolmw.tool.attempts"         // counter, {attempt}; recorded by Attempts
)

// EventAttempt is the name of the span event Attempts adds per attempt.
const EventAttempt = "toolmw.attempt"

// durationBounds are the bucket boundaries advised for the duration
// histogram, in seconds: those the GenAI conventions advise for operation
// durations, from 10 ms doubling up to about 80 s.
var durationBounds = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

// OtherCode is what the layer writes as error.type, toolmw.error.code and
// the span status for a code that is neither in the taxonomy's catalogue,
// nor declared (taxonomy.Declare, which the mapper's verdicts call), nor
// given to [WithCodes]: the attributes of spans and metrics take their
// values from a bounded vocabulary, so a stream of distinct codes cannot
// grow the metric series without bound or carry data into them.
const OtherCode = "_OTHER"

// layer is the per-tool state of New. Its fields are set once; the cached
// labels change atomically.
type layer struct {
	next     toolmw.Tool
	clock    clock.Clock
	cfg      config
	tracer   trace.Tracer // nil when traces are off
	duration metric.Float64Histogram
	calls    metric.Int64Counter
	labels   atomic.Pointer[labels]
}

// noSpan is the span of a call when traces are off: it records nothing.
var noSpan = trace.SpanFromContext(context.Background())

func (l *layer) call(ctx context.Context, args json.RawMessage) (res toolmw.Result, err error) {
	c, known := toolmw.CallFrom(ctx)
	lb := l.labels.Load()
	if lb == nil || !lb.matches(c) {
		lb = newLabels(c)
		l.labels.Store(lb)
	}
	measured := l.duration.Enabled(ctx) || l.calls.Enabled(ctx)
	var start time.Time
	if measured {
		start = l.clock.Now()
	}
	span, inner := noSpan, ctx
	if l.tracer != nil {
		inner, span = l.tracer.Start(ctx, lb.spanName, lb.startOpts...)
	}
	done := false
	defer func() {
		if !done {
			// The tool panicked; the panic goes on.
			l.finish(ctx, span, lb, c.ID, known, start, measured, toolmw.Result{}, panicked.Err)
		}
	}()
	res, err = l.next(inner, args)
	done = true
	l.finish(ctx, span, lb, c.ID, known, start, measured, res, err)
	return res, err
}

func (l *layer) finish(ctx context.Context, span trace.Span, lb *labels, id string, known bool, start time.Time, measured bool, res toolmw.Result, err error) {
	outcome := taxonomy.OutcomeOf(err)
	var info taxonomy.Info
	if err != nil {
		info = taxonomy.InfoOf(err)
		info.Code = l.cfg.bounded(info.Code)
	}
	if span.IsRecording() {
		var c toolmw.Call
		if known {
			// The retry layer inside advances the attempt, a fallback
			// layer marks a substitute, a layer with a store marks its
			// fall back to local state; read them now.
			c, _ = toolmw.CallFrom(ctx)
		}
		annotate(span, id, outcome, info, known, c)
		if err == nil && len(res.Parts()) > 0 {
			parts := res.AllParts()
			span.SetAttributes(KeyResultParts.Int(len(parts)),
				KeyResultPartDescriptions.StringSlice(partinfo.List(parts, MaxPartsDescribed)))
		}
	}
	span.End()
	if !measured {
		return
	}
	secs := l.clock.Now().Sub(start).Seconds()
	if err == nil {
		l.duration.Record(ctx, secs, lb.okRecord...)
		l.calls.Add(ctx, 1, lb.okAdd...)
		return
	}
	set := metric.WithAttributeSet(lb.set(outcome, info.Code))
	l.duration.Record(ctx, secs, set)
	l.calls.Add(ctx, 1, set)
}

// annotate sets the call id, the outcome attributes and the status of a recording span.
// Nothing in them is free text: kinds, codes and outcomes are snake_case or
// kebab-case identifiers, so no error message can reach the span.
func annotate(span trace.Span, id string, outcome taxonomy.Outcome, info taxonomy.Info, known bool, c toolmw.Call) {
	var kv [10]attribute.KeyValue
	n := 0
	if id != "" {
		kv[n] = KeyToolCallID.String(id)
		n++
	}
	kv[n] = KeyOutcome.String(string(outcome))
	n++
	if known {
		kv[n] = KeyAttempts.Int(c.Attempt)
		n++
	}
	if c.Fallback != "" {
		kv[n] = KeyFallback.String(c.Fallback)
		n++
	}
	if c.Degraded != "" {
		kv[n] = KeyDegraded.String(c.Degraded)
		n++
	}
	if outcome != taxonomy.OutcomeOK {
		kv[n] = KeyErrorType.String(info.Code)
		kv[n+1] = KeyErrorKind.String(string(info.Kind))
		kv[n+2] = KeyErrorCode.String(info.Code)
		kv[n+3] = KeyRetryable.Bool(info.Retryable)
		n += 4
	}
	span.SetAttributes(kv[:n]...)
	if isFailure(outcome) {
		span.SetStatus(codes.Error, info.Code)
	}
}

// isFailure reports whether an outcome marks the span as an error: a
// failure or a timeout. An answer (a refusal, a permission denial, a
// reviewer's no, a guardrail's block), a call waiting for a person and a
// cancellation by the caller are not errors of the tool.
func isFailure(o taxonomy.Outcome) bool {
	switch o {
	case taxonomy.OutcomeOK, taxonomy.OutcomeRefused, taxonomy.OutcomeNotPermitted, taxonomy.OutcomeCancelled,
		taxonomy.OutcomePending, taxonomy.OutcomeDenied, taxonomy.OutcomeBlocked:
		return false
	}
	return true
}

// labels holds what the layer precomputes for one tool: the span name, the
// start options and the attribute set of a successful call.
type labels struct {
	tool, typ string
	spanName  string
	startOpts []trace.SpanStartOption
	okRecord  []metric.RecordOption
	okAdd     []metric.AddOption
}

func newLabels(c toolmw.Call) *labels {
	lb := &labels{tool: c.Tool, typ: specType(c), spanName: OperationName}
	attrs := []attribute.KeyValue{KeyOperationName.String(OperationName)}
	if c.Tool != "" {
		lb.spanName = OperationName + " " + c.Tool
		attrs = append(attrs, KeyToolName.String(c.Tool))
	}
	if lb.typ != "" {
		attrs = append(attrs, KeyToolType.String(lb.typ))
	}
	lb.startOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...)}
	ok := metric.WithAttributeSet(lb.set(taxonomy.OutcomeOK, ""))
	lb.okRecord = []metric.RecordOption{ok}
	lb.okAdd = []metric.AddOption{ok}
	return lb
}

func (lb *labels) matches(c toolmw.Call) bool {
	return lb.tool == c.Tool && lb.typ == specType(c)
}

// set returns the metric attributes of a call of the tool: the operation,
// the tool's name, the outcome and, on error, error.type = the code.
func (lb *labels) set(outcome taxonomy.Outcome, code string) attribute.Set {
	kv := make([]attribute.KeyValue, 0, 4)
	kv = append(kv, KeyOperationName.String(OperationName))
	if lb.tool != "" {
		kv = append(kv, KeyToolName.String(lb.tool))
	}
	kv = append(kv, KeyOutcome.String(string(outcome)))
	if code != "" {
		kv = append(kv, KeyErrorType.String(code))
	}
	return attribute.NewSet(kv...)
}

func specType(c toolmw.Call) string {
	if c.Spec == nil {
		return ""
	}
	return c.Spec.Type
}

func float64Histogram(m metric.Meter, name string, opts ...metric.Float64HistogramOption) metric.Float64Histogram {
	h, err := m.Float64Histogram(name, opts...)
	if err != nil {
		otel.Handle(err)
	}
	if h == nil {
		return metricnoop.Float64Histogram{}
	}
	return h
}

func int64Counter(m metric.Meter, name string, opts ...metric.Int64CounterOption) metric.Int64Counter {
	c, err := m.Int64Counter(name, opts...)
	if err != nil {
		otel.Handle(err)
	}
	if c == nil {
		return metricnoop.Int64Counter{}
	}
	return c
}
