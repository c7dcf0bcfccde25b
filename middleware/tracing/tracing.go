package tracing

import (
	"context"
	"encoding/json"
	"runtime/debug"
	"sync"
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
		l := &layer{next: next, clock: cfg.clock, stamped: cfg.clock != clock.System, cfg: cfg}
		if !noTraces {
			l.tracer = cfg.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(scopeVersion()), trace.WithSchemaURL(SchemaURL))
		}
		meter := newMeter(cfg.mp)
		l.duration = float64Histogram(meter, MetricDuration,
			metric.WithDescription("Duration of tool calls."),
			metric.WithUnit("s"),
			metric.WithExplicitBucketBoundaries(durationBounds...))
		l.calls = int64Counter(meter, MetricCalls,
			metric.WithDescription("Number of tool calls."),
			metric.WithUnit("{call}"))
		l.lookups = int64Counter(meter, MetricCacheLookups,
			metric.WithDescription("Number of tool calls a cache layer looked up, by what it found."),
			metric.WithUnit("{lookup}"))
		return l.call
	}
}

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/toolmw/toolmw/middleware/tracing"

// SchemaURL is the schema URL of the tracer's and the meter's scope: the
// semantic conventions 1.41.0, the last release that held the GenAI
// conventions, which open-telemetry/semantic-conventions-genai continues.
const SchemaURL = "https://opentelemetry.io/schemas/1.41.0"

// scopeVersion returns the version of the instrumentation scope: the
// version of the module github.com/toolmw/toolmw in the running binary's
// build information ("(devel)" when it is the main module, built from a
// work tree), or "unknown" when the binary carries none.
var scopeVersion = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if bi.Main.Path == modulePath && bi.Main.Version != "" {
		return bi.Main.Version
	}
	for _, m := range bi.Deps {
		if m.Path == modulePath {
			if m.Replace != nil && m.Replace.Version != "" {
				return m.Replace.Version
			}
			if m.Version != "" {
				return m.Version
			}
		}
	}
	return "unknown"
})

const modulePath = "github.com/toolmw/toolmw"

func newMeter(mp metric.MeterProvider) metric.Meter {
	return mp.Meter(ScopeName, metric.WithInstrumentationVersion(scopeVersion()), metric.WithSchemaURL(SchemaURL))
}

// OperationName is the gen_ai.operation.name of a tool call, and the first
// word of its span name.
const OperationName = "execute_tool"

// UnknownTool is the gen_ai.tool.name of a call whose tool the layer
// cannot name: its context carries no toolmw.Call and [WithToolName] was
// not given.
const UnknownTool = "unknown"

// The attribute keys of the OpenTelemetry GenAI and general semantic
// conventions that the layer sets.
const (
	KeyOperationName   = attribute.Key("gen_ai.operation.name")      // always "execute_tool"
	KeyToolName        = attribute.Key("gen_ai.tool.name")           // the tool's name
	KeyToolCallID      = attribute.Key("gen_ai.tool.call.id")        // the model's call id, when known
	KeyToolType        = attribute.Key("gen_ai.tool.type")           // Spec.Type, when known
	KeyToolDescription = attribute.Key("gen_ai.tool.description")    // Spec.Description, scrubbed, unless WithoutDescription
	KeyAgentName       = attribute.Key("gen_ai.agent.name")          // WithAgentName or ContextWithAgent, when given
	KeyToolArguments   = attribute.Key("gen_ai.tool.call.arguments") // the arguments, scrubbed and cut; only with WithContent
	KeyToolResult      = attribute.Key("gen_ai.tool.call.result")    // a success's result, scrubbed and cut; only with WithContent
	KeyErrorType       = attribute.Key("error.type")                 // the code, when the call ended in an error (failed, timed_out)
	KeyExceptionType   = attribute.Key("exception.type")             // ExceptionPanic, on the exception event of a panic
)

// The keys of the gen_ai.guardrail.result event (see the package
// documentation).
const (
	KeyGuardrailComponent   = attribute.Key("gen_ai.guardrail.component.name")
	KeyGuardrailPolicyID    = attribute.Key("gen_ai.guardrail.policy.id")
	KeyGuardrailSource      = attribute.Key("gen_ai.guardrail.source")
	KeyGuardrailResultType  = attribute.Key("gen_ai.guardrail.result.type")
	KeyGuardrailResultValue = attribute.Key("gen_ai.guardrail.result.value")
)

// The attribute keys of toolmw's own attributes.
const (
	KeyOutcome   = attribute.Key("toolmw.outcome")    // taxonomy.OutcomeOf: ok, failed, refused, not_permitted, timed_out, cancelled, pending, denied, blocked
	KeyErrorKind = attribute.Key("toolmw.error.kind") // the taxonomy kind, whenever the call returned an error
	KeyErrorCode = attribute.Key("toolmw.error.code") // the taxonomy code, whenever the call returned an error
	KeyRetryable = attribute.Key("toolmw.retryable")  // whether the error is retryable, whenever the call returned an error
	KeyAttempts  = attribute.Key("toolmw.attempts")   // attempts made, on the call's span
	KeyAttempt   = attribute.Key("toolmw.attempt")    // the attempt's number, on an attempt event
	KeyFallback  = attribute.Key("toolmw.fallback")   // what stood in for the result (toolmw.SetFallback), when something did
	KeyDegraded  = attribute.Key("toolmw.degraded")   // the layer that fell back from its shared store to local state (toolmw.SetDegraded)
	KeyCache     = attribute.Key("toolmw.cache")      // what a cache layer found (toolmw.SetCache): hit, miss or bypass
	KeyChaos     = attribute.Key("toolmw.chaos")      // what a chaos layer injected (toolmw.SetChaos), when it did
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
	// MetricCacheLookups counts the calls a cache layer looked up
	// (toolmw.SetCache), by tool and KeyCache: hit, miss or bypass.
	MetricCacheLookups = "toolmw.cache.lookups" // counter, {lookup}
)

// The names of the span events the layers add.
const (
	EventAttempt   = "toolmw.attempt"          // one per attempt, added by Attempts
	EventException = "exception"               // a call that panicked
	EventGuardrail = "gen_ai.guardrail.result" // a call a guardrail blocked
)

// ExceptionPanic is the exception.type of the exception event of a call
// that panicked. The panic value, and so its type, is never read: the
// recovery layer keeps it for its debug hook, and a panic passing through
// goes on unread.
const ExceptionPanic = "panic"

// GuardrailComponent is the gen_ai.guardrail.component.name of the
// guardrail events: toolmw's guardrail layer.
const GuardrailComponent = "toolmw guardrail"

// durationBounds are the bucket boundaries advised for the duration
// histogram, in seconds: those the GenAI conventions advise for operation
// durations, from 10 ms doubling up to about 80 s.
var durationBounds = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

// OtherCode is what the layer writes as error.type and toolmw.error.code
// for a code that is neither in the taxonomy's catalogue,
// nor declared (taxonomy.Declare, which the mapper's verdicts call), nor
// given to [WithCodes]: the attributes of spans and metrics take their
// values from a bounded vocabulary, so a stream of distinct codes cannot
// grow the metric series without bound or carry data into them. It is
// written for an agent name that is not valid, too.
const OtherCode = "_OTHER"

// IsError reports whether the layer records an outcome as an error of the
// call, with error.type and the span status Error: failed and timed_out.
// Every other outcome is either a success (ok) or handled: an answer, a
// pause or the caller's decision, which carries neither (see the package
// documentation).
func IsError(o taxonomy.Outcome) bool {
	switch o {
	case taxonomy.OutcomeOK, taxonomy.OutcomeRefused, taxonomy.OutcomeNotPermitted, taxonomy.OutcomeCancelled,
		taxonomy.OutcomePending, taxonomy.OutcomeDenied, taxonomy.OutcomeBlocked:
		return false
	}
	return true
}

// layer is the per-tool state of New. Its fields are set once; the cached
// labels change atomically.
type layer struct {
	next     toolmw.Tool
	clock    clock.Clock
	stamped  bool // the clock is not clock.System: the layer stamps spans and events itself
	cfg      config
	tracer   trace.Tracer // nil when traces are off
	duration metric.Float64Histogram
	calls    metric.Int64Counter
	lookups  metric.Int64Counter // toolmw.cache.lookups
	labels   atomic.Pointer[labels]
}

// timedSpan is a span that tells its timestamps, as the OpenTelemetry Go
// SDK's spans do (sdktrace.ReadOnlySpan). On the system clock the layer
// reads a call's start and end from such a span, so the tracer's own
// readings time both the span and the histogram.
type timedSpan interface {
	StartTime() time.Time
	EndTime() time.Time
}

// noSpan is the span of a call when traces are off: it records nothing.
var noSpan = trace.SpanFromContext(context.Background())

func (l *layer) call(ctx context.Context, args json.RawMessage) (res toolmw.Result, err error) {
	c, known := toolmw.CallFrom(ctx)
	lb := l.labelsOf(c, l.cfg.agentOf(ctx))
	measured := l.duration.Enabled(ctx) || l.calls.Enabled(ctx)
	// One clock reading starts both the span and the measured duration:
	// the layer's clock, or on the system clock the tracer's own.
	var start time.Time
	span, inner := noSpan, ctx
	switch {
	case l.tracer == nil:
		if measured {
			start = l.clock.Now()
		}
	case l.stamped:
		start = l.clock.Now()
		inner, span = l.tracer.Start(ctx, lb.spanName, lb.startOpts[0], lb.startOpts[1], trace.WithTimestamp(start))
	default:
		inner, span = l.tracer.Start(ctx, lb.spanName, lb.startOpts...)
		if ts, ok := span.(timedSpan); ok && span.IsRecording() {
			start = ts.StartTime()
		} else if measured || span.IsRecording() {
			start = l.clock.Now()
		}
	}
	if l.cfg.contentBytes > 0 && span.IsRecording() {
		span.SetAttributes(KeyToolArguments.String(clean(l.cfg.scrubber, string(args), l.cfg.contentBytes)))
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
	var end time.Time
	if l.stamped {
		end = l.clock.Now()
	}
	outcome := taxonomy.OutcomeOf(err)
	var info taxonomy.Info
	if err != nil {
		info = taxonomy.InfoOf(err)
		info.Code = l.cfg.bounded(info.Code)
	}
	recording := span.IsRecording()
	var c toolmw.Call
	if known && (recording || measured) {
		// The retry layer inside advances the attempt, a fallback layer
		// marks a substitute, a layer with a store marks its fall back to
		// local state, a cache what it found, a chaos layer what it
		// injected; read them now, once.
		c, _ = toolmw.CallFrom(ctx)
	}
	if recording {
		annotate(span, id, outcome, info, known, c)
		l.addEvents(span, info, end)
		if err == nil && len(res.Parts()) > 0 {
			parts := res.AllParts()
			span.SetAttributes(KeyResultParts.Int(len(parts)),
				KeyResultPartDescriptions.StringSlice(partinfo.List(parts, MaxPartsDescribed)))
		}
		if err == nil && l.cfg.contentBytes > 0 {
			span.SetAttributes(KeyToolResult.String(clean(l.cfg.scrubber, resultText(res), l.cfg.contentBytes)))
		}
	}
	// One clock reading ends both, as one started both.
	switch ts, timed := span.(timedSpan); {
	case l.stamped:
		span.End(trace.WithTimestamp(end))
	case recording && timed:
		span.End()
		end = ts.EndTime()
	case recording:
		end = l.clock.Now()
		span.End(trace.WithTimestamp(end))
	default:
		span.End()
		if measured {
			end = l.clock.Now()
		}
	}
	if !measured {
		return
	}
	if c.Cache != "" {
		l.lookups.Add(ctx, 1, metric.WithAttributes(KeyToolName.String(lb.tool), KeyCache.String(c.Cache)))
	}
	secs := end.Sub(start).Seconds()
	if err == nil {
		l.duration.Record(ctx, secs, lb.okRecord...)
		l.calls.Add(ctx, 1, lb.okAdd...)
		return
	}
	set := metric.WithAttributeSet(lb.set(outcome, info.Code))
	l.duration.Record(ctx, secs, set)
	l.calls.Add(ctx, 1, set)
}

// addEvents adds the events of how a call ended: the exception event of a
// panic, the guardrail event of a block. They are stamped at the call's
// end when the layer stamps (a clock other than the system's), else by
// the tracer.
func (l *layer) addEvents(span trace.Span, info taxonomy.Info, end time.Time) {
	var kv []attribute.KeyValue
	name := ""
	switch {
	case info.Kind == taxonomy.KindFailed && info.Code == taxonomy.CodeToolPanicked:
		name, kv = EventException, []attribute.KeyValue{KeyExceptionType.String(ExceptionPanic)}
	case info.Kind == taxonomy.KindGuardrailBlocked && info.Guardrail != "":
		source := "args"
		if info.Code == taxonomy.CodeGuardrailResult {
			source = "result"
		}
		name, kv = EventGuardrail, []attribute.KeyValue{
			KeyGuardrailComponent.String(GuardrailComponent),
			KeyGuardrailPolicyID.String(info.Guardrail),
			KeyGuardrailSource.String(source),
			KeyGuardrailResultType.String("outcome"),
			KeyGuardrailResultValue.String(string(taxonomy.OutcomeBlocked)),
		}
	default:
		return
	}
	if l.stamped {
		span.AddEvent(name, trace.WithTimestamp(end), trace.WithAttributes(kv...))
		return
	}
	span.AddEvent(name, trace.WithAttributes(kv...))
}

// annotate sets the call id, the outcome attributes and the status of a recording span.
// Nothing in them is free text: kinds, codes and outcomes are snake_case or
// kebab-case identifiers, so no error message can reach the span.
func annotate(span trace.Span, id string, outcome taxonomy.Outcome, info taxonomy.Info, known bool, c toolmw.Call) {
	var kv [12]attribute.KeyValue
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
	if c.Cache != "" {
		kv[n] = KeyCache.String(c.Cache)
		n++
	}
	if c.Chaos != "" {
		kv[n] = KeyChaos.String(c.Chaos)
		n++
	}
	if outcome != taxonomy.OutcomeOK {
		kv[n] = KeyErrorKind.String(string(info.Kind))
		kv[n+1] = KeyErrorCode.String(info.Code)
		kv[n+2] = KeyRetryable.Bool(info.Retryable)
		n += 3
	}
	failed := IsError(outcome)
	if failed {
		kv[n] = KeyErrorType.String(info.Code)
		n++
	}
	span.SetAttributes(kv[:n]...)
	if failed {
		// The description stays empty: error.type holds the code, and
		// the message is never read.
		span.SetStatus(codes.Error, "")
	}
}

// labels holds what the layer precomputes for one tool and agent: the span
// name, the start options and the attribute set of a successful call.
type labels struct {
	spec       *toolmw.Spec // the call's spec (nil outside Wrap), and
	agentGiven string       // the agent name given: what the labels were made for
	tool, typ  string
	agent      string // as written
	spanName   string
	startOpts  []trace.SpanStartOption // the span kind, then the start attributes
	okRecord   []metric.RecordOption
	okAdd      []metric.AddOption
}

// labelsOf returns the labels of a call of the tool c names, made by the
// agent named agent: the cached ones when they match, else new ones.
func (l *layer) labelsOf(c toolmw.Call, agent string) *labels {
	return cachedLabels(&l.labels, &l.cfg, c, agent)
}

func cachedLabels(p *atomic.Pointer[labels], cfg *config, c toolmw.Call, agent string) *labels {
	lb := p.Load()
	if lb == nil || lb.spec != c.Spec || lb.agentGiven != agent {
		lb = newLabels(cfg, c, agent)
		p.Store(lb)
	}
	return lb
}

// toolName returns the gen_ai.tool.name of a call: the Call's, else
// WithToolName's, else UnknownTool.
func toolName(cfg *config, c toolmw.Call) string {
	switch {
	case c.Tool != "":
		return c.Tool
	case cfg.toolName != "":
		return cfg.toolName
	}
	return UnknownTool
}

func newLabels(cfg *config, c toolmw.Call, agent string) *labels {
	lb := &labels{spec: c.Spec, agentGiven: agent, tool: toolName(cfg, c), typ: specType(c), agent: agentName(agent)}
	lb.spanName = OperationName + " " + lb.tool
	attrs := []attribute.KeyValue{KeyOperationName.String(OperationName), KeyToolName.String(lb.tool)}
	if lb.typ != "" {
		attrs = append(attrs, KeyToolType.String(lb.typ))
	}
	if !cfg.noDescription && c.Spec != nil && c.Spec.Description != "" {
		attrs = append(attrs, KeyToolDescription.String(clean(cfg.scrubber, c.Spec.Description, MaxDescriptionBytes)))
	}
	if lb.agent != "" {
		attrs = append(attrs, KeyAgentName.String(lb.agent))
	}
	lb.startOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...)}
	ok := metric.WithAttributeSet(lb.set(taxonomy.OutcomeOK, ""))
	lb.okRecord = []metric.RecordOption{ok}
	lb.okAdd = []metric.AddOption{ok}
	return lb
}

// set returns the metric attributes of a call of the tool: the operation,
// the tool's name and type, the agent, the outcome and, unless the call
// succeeded, toolmw.error.code = the code, and error.type = the code when
// the outcome is an error (IsError).
func (lb *labels) set(outcome taxonomy.Outcome, code string) attribute.Set {
	kv := make([]attribute.KeyValue, 0, 7)
	kv = append(kv, KeyOperationName.String(OperationName), KeyToolName.String(lb.tool))
	if lb.typ != "" {
		kv = append(kv, KeyToolType.String(lb.typ))
	}
	if lb.agent != "" {
		kv = append(kv, KeyAgentName.String(lb.agent))
	}
	kv = append(kv, KeyOutcome.String(string(outcome)))
	if outcome != taxonomy.OutcomeOK {
		kv = append(kv, KeyErrorCode.String(code))
		if IsError(outcome) {
			kv = append(kv, KeyErrorType.String(code))
		}
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
