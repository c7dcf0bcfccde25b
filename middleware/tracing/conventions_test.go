package tracing_test

// This file checks the spans and metrics of the layer against the
// OpenTelemetry semantic conventions, quoting the rules it checks. The
// sources, as read for issue 33:
//
//   - open-telemetry/semantic-conventions-genai, docs/gen-ai/gen-ai-spans.md,
//     "Execute tool span"; docs/gen-ai/gen-ai-metrics.md, "Metric:
//     gen_ai.execute_tool.duration"; docs/gen-ai/gen-ai-guardrails.md,
//     "Event: gen_ai.guardrail.result";
//   - open-telemetry/semantic-conventions, docs/general/recording-errors.md
//     (the execute_tool span's status "SHOULD follow the Recording Errors
//     document").

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/guardrail"
	"github.com/toolmw/toolmw/middleware/recovery"
	"github.com/toolmw/toolmw/middleware/timeout"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// startSampler samples every span and keeps the attributes each span had
// when it started, as a sampler sees them.
type startSampler struct {
	mu    sync.Mutex
	attrs map[string][]attribute.KeyValue // by span name
}

func (s *startSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attrs[p.Name] = p.Attributes
	return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample, Tracestate: trace.SpanContextFromContext(p.ParentContext).TraceState()}
}

func (s *startSampler) Description() string { return "startSampler" }

// scenario is one call of the acceptance list: its tool (one per scenario,
// so each has its own metric series), what the tool does, and how the
// call must end.
type scenario struct {
	tool    string
	run     func(ctx context.Context, c *clock.Fake, attempt int) (toolmw.Result, error)
	outcome taxonomy.Outcome
	code    string // "" for ok
	isError bool   // error.type and status Error, per the decision in doc.go
}

// blockedUntilDone waits for the call's context to end, as a slow tool
// that honours its context does.
func blockedUntilDone(ctx context.Context) (toolmw.Result, error) {
	<-ctx.Done()
	return toolmw.Result{}, ctx.Err()
}

// TestConventions runs a success, a refusal, a transient failure then
// success, a timeout, a panic, a cancellation and a call pending approval
// through tracing, approval, retry, attempts, timeout and recovery layers,
// with secrets planted in the arguments, results, errors and call ids and
// the opt-in content on, and checks each rule of the conventions on the
// recorded spans and metrics.
func TestConventions(t *testing.T) {
	secrets := canary.Values()
	secret := strings.Join(secrets, " ")
	scenarios := []scenario{
		{tool: "success", outcome: taxonomy.OutcomeOK,
			run: func(_ context.Context, c *clock.Fake, _ int) (toolmw.Result, error) {
				c.Advance(120 * time.Millisecond)
				return toolmw.Text("booked for " + secret), nil
			}},
		{tool: "refusal", outcome: taxonomy.OutcomeRefused, code: "booking_not_cancellable",
			run: func(_ context.Context, c *clock.Fake, _ int) (toolmw.Result, error) {
				c.Advance(30 * time.Millisecond)
				return toolmw.Result{}, taxonomy.Refusal("booking_not_cancellable", "fare of "+secret+" is non-refundable")
			}},
		{tool: "transient_then_ok", outcome: taxonomy.OutcomeOK,
			run: func(_ context.Context, c *clock.Fake, attempt int) (toolmw.Result, error) {
				c.Advance(250 * time.Millisecond)
				if attempt == 1 {
					return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier down").
						WithCause(fmt.Errorf("dial %s", secret))
				}
				return toolmw.JSON(map[string]string{"receipt": secret})
			}},
		{tool: "timeout", outcome: taxonomy.OutcomeTimedOut, code: taxonomy.CodeTimeout, isError: true,
			run: func(ctx context.Context, c *clock.Fake, _ int) (toolmw.Result, error) {
				c.Advance(2 * time.Second)
				return blockedUntilDone(ctx)
			}},
		{tool: "panic", outcome: taxonomy.OutcomeFailed, code: taxonomy.CodeToolPanicked, isError: true,
			run: func(_ context.Context, c *clock.Fake, _ int) (toolmw.Result, error) {
				c.Advance(5 * time.Millisecond)
				panic(fmt.Errorf("panicked holding %s", secret))
			}},
		{tool: "cancellation", outcome: taxonomy.OutcomeCancelled, code: "cancelled",
			run: func(ctx context.Context, c *clock.Fake, _ int) (toolmw.Result, error) {
				c.Advance(40 * time.Millisecond)
				cancelCaller(ctx)
				return toolmw.Result{}, fmt.Errorf("stopped holding %s: %w", secret, ctx.Err())
			}},
		{tool: "approval_pending", outcome: taxonomy.OutcomePending, code: taxonomy.CodeApprovalPending,
			run: func(context.Context, *clock.Fake, int) (toolmw.Result, error) {
				return toolmw.Text("must not run"), nil
			}},
	}

	spans := tracetest.NewInMemoryExporter()
	sampler := &startSampler{attrs: map[string][]attribute.KeyValue{}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	clk := clock.NewFake(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	opts := []tracing.Option{tracing.WithTracerProvider(tp), tracing.WithMeterProvider(mp), tracing.WithClock(clk),
		tracing.WithCodes("booking_not_cancellable"), tracing.WithContent(0)}
	desk := approval.NewDesk()

	args := json.RawMessage(`{"booking":"BK-1042","card":"` + secrets[len(secrets)-1] + `","note":"` + strings.ReplaceAll(secret, `"`, ``) + `"}`)
	for _, sc := range scenarios {
		attempt := 0
		tool := toolmw.MustWrap(toolmw.Spec{Name: sc.tool, Description: "Books with key " + secrets[0] + "."},
			func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
				attempt++
				return sc.run(ctx, clk, attempt)
			},
			tracing.New(opts...), desk.Middleware(approval.Tools("approval_pending")), testutil.RetryN(3),
			tracing.NewAttempts(opts...), timeout.New(20*time.Millisecond), recovery.New())
		ctx, cancel := context.WithCancel(budget.WithRun(context.Background(), budget.WithID("run_1")))
		ctx = context.WithValue(ctx, cancelKey{}, cancel)
		ctx = tracing.ContextWithAgent(toolmw.WithCallID(ctx, "call_"+secrets[0]), "Travel Agent")
		_, err := tool(ctx, args)
		cancel()
		if got := taxonomy.OutcomeOf(err); got != sc.outcome {
			t.Fatalf("%s: outcome %s (%v), want %s", sc.tool, got, err, sc.outcome)
		}
	}

	recorded := spans.GetSpans()
	if len(recorded) != len(scenarios) {
		t.Fatalf("%d spans for %d calls", len(recorded), len(scenarios))
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	points := durationPoints(t, rm)

	statusErrors, metricErrors := 0, 0
	for i, sc := range scenarios {
		s := recorded[i]
		attrs := attrMap(s.Attributes)
		t.Run(sc.tool, func(t *testing.T) {
			// "gen_ai.operation.name SHOULD be execute_tool." "Span name
			// SHOULD be execute_tool {gen_ai.tool.name}." "Span kind SHOULD
			// be INTERNAL." gen_ai.tool.name is Required.
			if s.Name != "execute_tool "+sc.tool || s.SpanKind != trace.SpanKindInternal ||
				attrs["gen_ai.operation.name"] != "execute_tool" || attrs["gen_ai.tool.name"] != sc.tool {
				t.Errorf("span %q kind %v attributes %v", s.Name, s.SpanKind, attrs)
			}
			// "The following attributes can be important for making
			// sampling decisions and SHOULD be provided at span creation
			// time: gen_ai.operation.name."
			if got := attrMap(sampler.attrs[s.Name]); got["gen_ai.operation.name"] != "execute_tool" || got["gen_ai.tool.name"] != sc.tool {
				t.Errorf("at creation time the sampler saw %v", got)
			}
			// gen_ai.tool.type and gen_ai.tool.description: "Recommended if
			// available"; gen_ai.tool.call.id: "Recommended if available".
			if attrs["gen_ai.tool.type"] != "function" || attrs["gen_ai.tool.description"] != "Books with key [REDACTED:github_token]." ||
				!strings.HasPrefix(fmt.Sprint(attrs["gen_ai.tool.call.id"]), "invalid_call_id_") || attrs["gen_ai.agent.name"] != "Travel Agent" {
				t.Errorf("recommended attributes: %v", attrs)
			}

			// Recording Errors: "When the instrumented operation failed,
			// the instrumentation: SHOULD set the span status code to
			// Error, SHOULD set the error.type attribute"; "Span Status
			// Code MUST be left unset if the instrumented operation has
			// ended without any errors."
			errType, hasType := attrs["error.type"]
			if sc.isError {
				statusErrors++
				if s.Status.Code != codes.Error || !hasType || errType != sc.code {
					t.Errorf("an error: status %v, error.type %v; want Error and %s", s.Status.Code, errType, sc.code)
				}
			} else if s.Status.Code != codes.Unset || hasType {
				t.Errorf("not an error: status %v, error.type %v; want Unset and none", s.Status.Code, errType)
			}
			// The status description "SHOULD be set when it has
			// additional information about the error": error.type holds
			// the code, so the description adds nothing and stays empty.
			if s.Status.Description != "" {
				t.Errorf("status description %q", s.Status.Description)
			}
			// A handled outcome keeps its outcome and code for answers.
			if attrs["toolmw.outcome"] != string(sc.outcome) || (sc.code != "" && attrs["toolmw.error.code"] != sc.code) {
				t.Errorf("toolmw.outcome %v toolmw.error.code %v", attrs["toolmw.outcome"], attrs["toolmw.error.code"])
			}
			// "Errors that were retried or handled (allowing an operation
			// to complete gracefully) SHOULD NOT be recorded on spans or
			// metrics that describe this operation": no attempt event
			// carries error.type, the failed attempt of the call that
			// recovered included.
			for _, e := range s.Events {
				if _, ok := attrMap(e.Attributes)["error.type"]; ok {
					t.Errorf("event %s carries error.type: %v", e.Name, e.Attributes)
				}
			}
			if sc.tool == "transient_then_ok" {
				if len(s.Events) != 2 || attrMap(s.Events[0].Attributes)["toolmw.error.code"] != taxonomy.CodeUpstreamUnavailable {
					t.Errorf("the attempts of the call that recovered: %v", s.Events)
				}
			}
			// A panic leaves an exception event with exception.type only
			// ("exception.type: Required if exception.message is not
			// set"): no message, no stack trace.
			var exceptions []map[string]any
			for _, e := range s.Events {
				if e.Name == "exception" {
					exceptions = append(exceptions, attrMap(e.Attributes))
				}
			}
			if want := sc.tool == "panic"; want != (len(exceptions) == 1) ||
				(want && !equalMaps(exceptions[0], map[string]any{"exception.type": tracing.ExceptionPanic})) {
				t.Errorf("exception events %v", exceptions)
			}

			// gen_ai.tool.call.arguments, Opt-In: on here, scrubbed.
			if !strings.Contains(fmt.Sprint(attrs["gen_ai.tool.call.arguments"]), `"booking":"BK-1042"`) {
				t.Errorf("gen_ai.tool.call.arguments %q", attrs["gen_ai.tool.call.arguments"])
			}
			// gen_ai.tool.call.result: "The result returned by the tool
			// call (if any and if execution was successful)."
			result, hasResult := attrs["gen_ai.tool.call.result"]
			if hasResult != (sc.outcome == taxonomy.OutcomeOK) || (hasResult && !strings.Contains(fmt.Sprint(result), "[REDACTED:")) {
				t.Errorf("gen_ai.tool.call.result %q", result)
			}

			// gen_ai.execute_tool.duration: "When this metric is reported
			// alongside a gen_ai.execute_tool span, the metric value
			// SHOULD be the same as the span duration."
			p, ok := points[sc.tool]
			if !ok {
				t.Fatalf("no duration point for %s", sc.tool)
			}
			if p.Count != 1 || p.Sum != s.EndTime.Sub(s.StartTime).Seconds() {
				t.Errorf("duration %v over %d calls, span %v", p.Sum, p.Count, s.EndTime.Sub(s.StartTime))
			}
			// The metric's attributes: gen_ai.tool.name Required,
			// gen_ai.tool.type "Recommended If available",
			// gen_ai.agent.name "Conditionally Required When applicable",
			// error.type "Conditionally Required If the operation ended in
			// an error" — and, for metrics, "Operations that complete
			// successfully SHOULD NOT include the error.type attribute".
			m := attrMap(p.Attributes.ToSlice())
			if m["gen_ai.tool.name"] != sc.tool || m["gen_ai.tool.type"] != "function" || m["gen_ai.agent.name"] != "Travel Agent" {
				t.Errorf("metric attributes %v", m)
			}
			if mt, ok := m["error.type"]; ok != sc.isError || (ok && mt != errType) {
				t.Errorf("metric error.type %v, span error.type %v", mt, errType)
			} else if ok {
				metricErrors++
			}
			// "Instrumentation SHOULD ensure that, for a given error, the
			// same value is used as the error.type attribute on spans and
			// metrics."
			if m["toolmw.outcome"] != attrs["toolmw.outcome"] {
				t.Errorf("metric outcome %v, span outcome %v", m["toolmw.outcome"], attrs["toolmw.outcome"])
			}
		})
	}
	// The status-based and the metric-based error rates agree: two errors
	// (the timeout and the panic) in seven calls.
	if statusErrors != 2 || metricErrors != 2 {
		t.Errorf("status errors %d, metric errors %d; want 2 and 2", statusErrors, metricErrors)
	}

	// The scope of the tracer and the meter: name, version, schema URL.
	version := moduleVersion(t)
	for _, s := range recorded {
		if sc := s.InstrumentationScope; sc.Name != tracing.ScopeName || sc.Version != version || sc.SchemaURL != semconv.SchemaURL {
			t.Errorf("span scope %+v", sc)
		}
	}
	for _, sm := range rm.ScopeMetrics {
		if sc := sm.Scope; sc.Name != tracing.ScopeName || sc.Version != version || sc.SchemaURL != semconv.SchemaURL {
			t.Errorf("metric scope %+v", sc)
		}
	}

	// No planted secret in any span, event, attribute or metric, the
	// opt-in content attributes included.
	text := dumpTelemetry(recorded, rm)
	if family, found := canary.Find(text); family != "" {
		t.Errorf("the telemetry holds %q of the planted %s", found, family)
	}
	for _, word := range []string{"panicked holding", "stopped holding", "non-refundable", "dial "} {
		if strings.Contains(text, word) {
			t.Errorf("the telemetry holds message text %q", word)
		}
	}
}

type cancelKey struct{}

// cancelCaller cancels the caller's context, as an agent loop that gives
// up on the call does.
func cancelCaller(ctx context.Context) {
	ctx.Value(cancelKey{}).(context.CancelFunc)()
}

// durationPoints returns the duration histogram's points by tool name.
func durationPoints(t *testing.T, rm metricdata.ResourceMetrics) map[string]metricdata.HistogramDataPoint[float64] {
	t.Helper()
	out := map[string]metricdata.HistogramDataPoint[float64]{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != tracing.MetricDuration {
				continue
			}
			// "This metric SHOULD be specified with ExplicitBucketBoundaries
			// of [0.01, 0.02, …, 81.92]"; unit s.
			h := m.Data.(metricdata.Histogram[float64])
			if m.Unit != "s" {
				t.Errorf("unit %q", m.Unit)
			}
			for _, p := range h.DataPoints {
				if len(p.Bounds) != 14 || p.Bounds[0] != 0.01 || p.Bounds[13] != 81.92 {
					t.Errorf("bounds %v", p.Bounds)
				}
				v, _ := p.Attributes.Value("gen_ai.tool.name")
				out[v.AsString()] = p
			}
		}
	}
	return out
}

// moduleVersion is the version of the toolmw module in the test binary's
// build information, as the scope must carry it.
func moduleVersion(t *testing.T) string {
	t.Helper()
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if bi.Main.Path == "github.com/toolmw/toolmw" {
		return bi.Main.Version
	}
	t.Fatalf("the test binary's main module is %s", bi.Main.Path)
	return ""
}

func dumpTelemetry(spans tracetest.SpanStubs, rm metricdata.ResourceMetrics) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "%s %v %v %q\n", s.Name, s.Attributes, s.Status.Code, s.Status.Description)
		for _, e := range s.Events {
			fmt.Fprintf(&b, "  %s %v\n", e.Name, e.Attributes)
		}
	}
	fmt.Fprintf(&b, "%+v\n", rm)
	return b.String()
}

// TestContentIsOptIn: without WithContent no span carries the arguments
// or the result ("Instrumentations SHOULD NOT capture them by default").
func TestContentIsOptIn(t *testing.T) {
	r := newRig(t)
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, toolmwtest.Returning(toolmw.Text("found it"), nil), tracing.New(r.opts()...))
	if _, err := tool(context.Background(), json.RawMessage(`{"q":"x"}`)); err != nil {
		t.Fatal(err)
	}
	attrs := attrMap(r.spans.GetSpans()[0].Attributes)
	for _, k := range []string{"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} {
		if v, ok := attrs[k]; ok {
			t.Errorf("%s = %v without WithContent", k, v)
		}
	}
}

// TestContentScrubbedThenCut: the content attributes are scrubbed whole,
// then cut to their bound at a character boundary; a secret straddling
// the cut leaves nothing of itself; a result with parts shows its parts'
// text.
func TestContentScrubbedThenCut(t *testing.T) {
	const bound = 256
	for _, s := range canary.Secrets {
		t.Run(s.Family, func(t *testing.T) {
			r := newRig(t)
			// The secret starts 10 bytes before the cut, so a cut made
			// before scrubbing would leave its first bytes unredacted.
			pad := strings.Repeat("é", 118) + " " // 237 bytes, after 6 of `{"q":"`
			args := json.RawMessage(`{"q":"` + pad + s.Value + ` and more"}`)
			res := toolmw.Text("see part").WithParts(toolmw.TextPart("part text "+s.Value), toolmw.ImagePart([]byte("PNG"), "image/png"))
			tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, toolmwtest.Returning(res, nil),
				tracing.New(append(r.opts(), tracing.WithContent(bound))...))
			if _, err := tool(context.Background(), args); err != nil {
				t.Fatal(err)
			}
			attrs := attrMap(r.spans.GetSpans()[0].Attributes)
			arguments, result := fmt.Sprint(attrs["gen_ai.tool.call.arguments"]), fmt.Sprint(attrs["gen_ai.tool.call.result"])
			if len(arguments) > bound || !strings.HasSuffix(arguments, "…") || !strings.HasPrefix(arguments, `{"q":"éé`) {
				t.Errorf("arguments (%d bytes) %q", len(arguments), arguments)
			}
			if !strings.HasPrefix(result, "see part\npart text [REDACTED:") || !strings.HasSuffix(result, "]") {
				t.Errorf("result %q", result)
			}
			for _, v := range []string{arguments, result} {
				for _, frag := range append(canary.Fragments(s.Value), s.Body, s.Value[:6]) {
					if strings.Contains(v, frag) {
						t.Errorf("%q holds %q of the planted secret", v, frag)
					}
				}
			}
		})
	}
	if err := tracing.Validate(tracing.WithContent(tracing.MinContentBytes - 1)); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
		t.Errorf("a bound below the minimum: %v", err)
	}
}

// TestDescription: gen_ai.tool.description ("Recommended if available")
// is the spec's description, scrubbed and cut to MaxDescriptionBytes;
// WithoutDescription leaves it off.
func TestDescription(t *testing.T) {
	r := newRig(t)
	long := "Looks up " + canary.Secrets[0].Value + " " + strings.Repeat("x", 2*tracing.MaxDescriptionBytes)
	spec := toolmw.Spec{Name: "lookup", Description: long}
	on := toolmw.MustWrap(spec, toolmwtest.OK, tracing.New(r.opts()...))
	off := toolmw.MustWrap(spec, toolmwtest.OK, tracing.New(append(r.opts(), tracing.WithoutDescription())...))
	_, _ = on(context.Background(), nil)
	_, _ = off(context.Background(), nil)
	spans := r.spans.GetSpans()
	desc := fmt.Sprint(attrMap(spans[0].Attributes)["gen_ai.tool.description"])
	if len(desc) > tracing.MaxDescriptionBytes || !strings.HasPrefix(desc, "Looks up [REDACTED:github_token] xxx") || !strings.HasSuffix(desc, "…") {
		t.Errorf("description (%d bytes) %q", len(desc), desc)
	}
	if v, ok := attrMap(spans[1].Attributes)["gen_ai.tool.description"]; ok {
		t.Errorf("WithoutDescription: %v", v)
	}
}

// TestAgentName: gen_ai.agent.name comes from the context, else the
// option; an invalid name is written as _OTHER, never as given; the
// metrics carry it.
func TestAgentName(t *testing.T) {
	r := newRig(t)
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, toolmwtest.OK, tracing.New(append(r.opts(), tracing.WithAgentName("Planner"))...))
	ctx := context.Background()
	for _, c := range []context.Context{
		ctx,
		tracing.ContextWithAgent(ctx, "Math Tutor"),
		tracing.ContextWithAgent(ctx, "leaks "+canary.Secrets[1].Value),
		tracing.ContextWithAgent(ctx, ""),
	} {
		if _, err := tool(c, nil); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, s := range r.spans.GetSpans() {
		got = append(got, fmt.Sprint(attrMap(s.Attributes)["gen_ai.agent.name"]))
	}
	if want := "Planner|Math Tutor|_OTHER|<nil>"; strings.Join(got, "|") != want {
		t.Errorf("agent names %q, want %q", strings.Join(got, "|"), want)
	}
	series := map[string]int64{}
	for _, p := range r.metrics(t)[tracing.MetricCalls].Data.(metricdata.Sum[int64]).DataPoints {
		v, _ := p.Attributes.Value("gen_ai.agent.name")
		series[v.AsString()] += p.Value
	}
	if fmt.Sprint(series) != "map[:1 Math Tutor:1 Planner:1 _OTHER:1]" {
		t.Errorf("agent series %v", series)
	}
	for _, bad := range []string{"a\tb", strings.Repeat("a", tracing.MaxAgentNameBytes+1), "key " + canary.Secrets[0].Value, "\xff"} {
		if tracing.ValidAgentName(bad) {
			t.Errorf("ValidAgentName(%q)", bad)
		}
		if err := tracing.Validate(tracing.WithAgentName(bad)); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
			t.Errorf("WithAgentName(%q): %v", bad, err)
		}
	}
}

// TestGuardrailResultEvent: a call blocked by the guardrail layer, before
// the tool or after it, gets the gen_ai.guardrail.result event ("This
// event SHOULD be emitted for results returned by remote guardrail
// services and dedicated in-process guardrail APIs") with the guardrail
// layer's own words ("Instrumentations MUST preserve provider-native
// result values"), and is a handled outcome: no error.type, status Unset.
func TestGuardrailResultEvent(t *testing.T) {
	r := newRig(t)
	block := func(context.Context, toolmw.Call, json.RawMessage) error {
		return fmt.Errorf("found %s", canary.Secrets[4].Value)
	}
	blockResult := func(context.Context, toolmw.Call, toolmw.Result) error { return fmt.Errorf("found a url") }
	args := toolmw.MustWrap(toolmw.Spec{Name: "send"}, toolmwtest.OK, tracing.New(r.opts()...),
		guardrail.New(guardrail.Args("no_emails", block)))
	result := toolmw.MustWrap(toolmw.Spec{Name: "fetch"}, toolmwtest.OK, tracing.New(r.opts()...),
		guardrail.New(guardrail.Result("no_internal_urls", blockResult)))
	_, _ = args(context.Background(), json.RawMessage(`{"to":"x"}`))
	_, _ = result(context.Background(), json.RawMessage(`{}`))
	for i, want := range []struct{ policy, source string }{{"no_emails", "args"}, {"no_internal_urls", "result"}} {
		s := r.spans.GetSpans()[i]
		attrs := attrMap(s.Attributes)
		if attrs["toolmw.outcome"] != "blocked" || s.Status.Code != codes.Unset {
			t.Errorf("%s: outcome %v status %v", s.Name, attrs["toolmw.outcome"], s.Status.Code)
		}
		if _, ok := attrs["error.type"]; ok {
			t.Errorf("%s: error.type on a block", s.Name)
		}
		if len(s.Events) != 1 || s.Events[0].Name != tracing.EventGuardrail {
			t.Fatalf("%s: events %v", s.Name, s.Events)
		}
		wantAttrs := map[string]any{
			"gen_ai.guardrail.component.name": tracing.GuardrailComponent,
			"gen_ai.guardrail.policy.id":      want.policy,
			"gen_ai.guardrail.source":         want.source,
			"gen_ai.guardrail.result.type":    "outcome",
			"gen_ai.guardrail.result.value":   "blocked",
		}
		if got := attrMap(s.Events[0].Attributes); !equalMaps(got, wantAttrs) {
			t.Errorf("%s: event\n got %v\nwant %v", s.Name, got, wantAttrs)
		}
	}
	if family, found := canary.Find(dumpTelemetry(r.spans.GetSpans(), metricdata.ResourceMetrics{})); family != "" {
		t.Errorf("the spans hold %q of the planted %s", found, family)
	}
}

// TestDurationIsSpanDurationOnTheSystemClock: without WithClock the SDK's
// own start and end readings time the span and the histogram alike ("the
// metric value SHOULD be the same as the span duration").
func TestDurationIsSpanDurationOnTheSystemClock(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	opts := []tracing.Option{tracing.WithTracerProvider(tp), tracing.WithMeterProvider(mp)}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "slow"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		time.Sleep(2 * time.Millisecond)
		return toolmw.Text("ok"), nil
	}, tracing.New(opts...), testutil.RetryN(2), tracing.NewAttempts(opts...))
	if _, err := tool(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	s := spans.GetSpans()[0]
	p := durationPoints(t, rm)["slow"]
	if d := s.EndTime.Sub(s.StartTime); p.Count != 1 || p.Sum != d.Seconds() || d < 2*time.Millisecond {
		t.Errorf("histogram %v over %d calls, span %v", p.Sum, p.Count, d)
	}
	if len(s.Events) != 1 || s.Events[0].Time.Before(s.StartTime) || s.Events[0].Time.After(s.EndTime) {
		t.Errorf("attempt events %v within %v–%v", s.Events, s.StartTime, s.EndTime)
	}
}
