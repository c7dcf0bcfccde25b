package tracing_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rig is an SDK tracer and meter provider recording into memory, with a
// fake clock.
type rig struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
	clock  *clock.Fake
}

func newRig(t testing.TB) *rig {
	r := &rig{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader(),
		clock: clock.NewFake(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSyncer(r.spans))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		_ = r.tp.Shutdown(context.Background())
		_ = r.mp.Shutdown(context.Background())
	})
	return r
}

func (r *rig) opts() []tracing.Option {
	return []tracing.Option{tracing.WithTracerProvider(r.tp), tracing.WithMeterProvider(r.mp), tracing.WithClock(r.clock),
		tracing.WithCodes("booking_not_cancellable")}
}

func (r *rig) metrics(t testing.TB) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != tracing.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, tracing.ScopeName)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// script returns a tool that returns errs[i] on its i-th call (the last one
// after that) and advances the clock by step each time.
func script(c *clock.Fake, step time.Duration, errs ...error) toolmw.Tool {
	i := 0
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		c.Advance(step)
		err := errs[min(i, len(errs)-1)]
		i++
		if err != nil {
			return toolmw.Result{}, err
		}
		return toolmw.Text("done"), nil
	}
}

func attrMap(kvs []attribute.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

func equalMaps(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || fmt.Sprint(w) != fmt.Sprint(v) || fmt.Sprintf("%T", w) != fmt.Sprintf("%T", v) {
			return false
		}
	}
	return true
}

func TestSpan(t *testing.T) {
	refusal := taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
	transient := taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier down")
	tests := []struct {
		name       string
		errs       []error
		id         string
		wantErr    bool
		wantAttrs  map[string]any
		wantStatus codes.Code
		wantEvents []map[string]any
	}{
		{
			name: "ok", errs: []error{nil}, id: "call_1",
			wantAttrs: map[string]any{"gen_ai.tool.call.id": "call_1", "toolmw.outcome": "ok", "toolmw.attempts": int64(1)},
			wantEvents: []map[string]any{
				{"toolmw.attempt": int64(1), "toolmw.outcome": "ok"},
			},
		},
		{
			name: "retried then ok", errs: []error{transient, transient, nil},
			wantAttrs: map[string]any{"toolmw.outcome": "ok", "toolmw.attempts": int64(3)},
			wantEvents: []map[string]any{
				{"toolmw.attempt": int64(1), "toolmw.outcome": "failed", "toolmw.error.code": "upstream_unavailable", "toolmw.error.kind": "tool-failed", "toolmw.retryable": true},
				{"toolmw.attempt": int64(2), "toolmw.outcome": "failed", "toolmw.error.code": "upstream_unavailable", "toolmw.error.kind": "tool-failed", "toolmw.retryable": true},
				{"toolmw.attempt": int64(3), "toolmw.outcome": "ok"},
			},
		},
		{
			name: "retries exhausted", errs: []error{transient}, wantErr: true,
			wantAttrs: map[string]any{"toolmw.outcome": "failed", "toolmw.attempts": int64(3), "error.type": "upstream_unavailable",
				"toolmw.error.kind": "tool-failed", "toolmw.error.code": "upstream_unavailable", "toolmw.retryable": true},
			wantStatus: codes.Error,
			wantEvents: []map[string]any{
				{"toolmw.attempt": int64(1), "toolmw.outcome": "failed", "toolmw.error.code": "upstream_unavailable", "toolmw.error.kind": "tool-failed", "toolmw.retryable": true},
				{"toolmw.attempt": int64(2), "toolmw.outcome": "failed", "toolmw.error.code": "upstream_unavailable", "toolmw.error.kind": "tool-failed", "toolmw.retryable": true},
				{"toolmw.attempt": int64(3), "toolmw.outcome": "failed", "toolmw.error.code": "upstream_unavailable", "toolmw.error.kind": "tool-failed", "toolmw.retryable": true},
			},
		},
		{
			name: "refusal is an answer", errs: []error{refusal}, wantErr: true, id: "call_2",
			wantAttrs: map[string]any{"gen_ai.tool.call.id": "call_2", "toolmw.outcome": "refused", "toolmw.attempts": int64(1),
				"toolmw.error.kind": "tool-refused", "toolmw.error.code": "booking_not_cancellable", "toolmw.retryable": false},
			wantEvents: []map[string]any{
				{"toolmw.attempt": int64(1), "toolmw.outcome": "refused", "toolmw.error.code": "booking_not_cancellable", "toolmw.error.kind": "tool-refused", "toolmw.retryable": false},
			},
		},
		{
			name: "not permitted is an answer", errs: []error{taxonomy.NotPermitted(taxonomy.CodeNotPermitted, "policy says no")}, wantErr: true,
			wantAttrs: map[string]any{"toolmw.outcome": "not_permitted", "toolmw.attempts": int64(1),
				"toolmw.error.kind": "tool-not-permitted", "toolmw.error.code": "not_permitted", "toolmw.retryable": false},
			wantEvents: []map[string]any{
				{"toolmw.attempt": int64(1), "toolmw.outcome": "not_permitted", "toolmw.error.code": "not_permitted", "toolmw.error.kind": "tool-not-permitted", "toolmw.retryable": false},
			},
		},
		{
			name: "a pending approval is a pause", errs: []error{taxonomy.New(taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending, "waiting").WithApproval("apr_1", "s")}, wantErr: true,
			wantAttrs: map[string]any{"toolmw.outcome": "pending", "toolmw.attempts": int64(1),
				"toolmw.error.kind": "approval-pending", "toolmw.error.code": "approval_pending", "toolmw.retryable": false},
			wantEvents: []map[string]any{
				{"toolmw.attempt": int64(1), "toolmw.outcome": "pending", "toolmw.error.code": "approval_pending", "toolmw.error.kind": "approval-pending", "toolmw.retryable": false},
			},
		},
		{
			name: "a reviewer's no is an answer", errs: []error{taxonomy.New(taxonomy.KindApprovalDenied, taxonomy.CodeApprovalDenied, "")}, wantErr: true,
			wantAttrs: map[string]any{"toolmw.outcome": "denied", "toolmw.attempts": int64(1),
				"toolmw.error.kind": "approval-denied", "toolmw.error.code": "approval_denied", "toolmw.retryable": false},
			wantEvents: []map[string]any{
				{"toolmw.attempt": int64(1), "toolmw.outcome": "denied", "toolmw.error.code": "approval_denied", "toolmw.error.kind": "approval-denied", "toolmw.retryable": false},
			},
		},
		{
			name: "cancellation is not an error of the tool", errs: []error{context.Canceled}, wantErr: true,
			wantAttrs: map[string]any{"toolmw.outcome": "cancelled", "toolmw.attempts": int64(1),
				"toolmw.error.kind": "tool-cancelled", "toolmw.error.code": "cancelled", "toolmw.retryable": false},
			wantEvents: []map[string]any{
				{"toolmw.attempt": int64(1), "toolmw.outcome": "cancelled", "toolmw.error.code": "cancelled", "toolmw.error.kind": "tool-cancelled", "toolmw.retryable": false},
			},
		},
		{
			name: "timeout", errs: []error{taxonomy.Timeout(taxonomy.CodeTimeout, "slow", false)}, wantErr: true,
			wantAttrs: map[string]any{"toolmw.outcome": "timed_out", "toolmw.attempts": int64(1), "error.type": "timeout",
				"toolmw.error.kind": "tool-timeout", "toolmw.error.code": "timeout", "toolmw.retryable": false},
			wantStatus: codes.Error,
			wantEvents: []map[string]any{
				{"toolmw.attempt": int64(1), "toolmw.outcome": "timed_out", "toolmw.error.code": "timeout", "toolmw.error.kind": "tool-timeout", "toolmw.retryable": false},
			},
		},
		{
			name: "untyped error", errs: []error{errors.New("boom")}, wantErr: true,
			wantAttrs: map[string]any{"toolmw.outcome": "failed", "toolmw.attempts": int64(1), "error.type": "unmapped_failure",
				"toolmw.error.kind": "tool-failed", "toolmw.error.code": "unmapped_failure", "toolmw.retryable": false},
			wantStatus: codes.Error,
			wantEvents: []map[string]any{
				{"toolmw.attempt": int64(1), "toolmw.outcome": "failed", "toolmw.error.code": "unmapped_failure", "toolmw.error.kind": "tool-failed", "toolmw.retryable": false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			tool := toolmw.MustWrap(toolmw.Spec{Name: "book_flight"}, script(r.clock, time.Second, tt.errs...),
				tracing.New(r.opts()...), testutil.RetryN(3), tracing.NewAttempts(r.opts()...))
			ctx := context.Background()
			if tt.id != "" {
				ctx = toolmw.WithCallID(ctx, tt.id)
			}
			_, err := tool(ctx, nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			spans := r.spans.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans, want 1", len(spans))
			}
			s := spans[0]
			if s.Name != "execute_tool book_flight" || s.SpanKind != trace.SpanKindInternal {
				t.Errorf("span %q kind %v", s.Name, s.SpanKind)
			}
			want := map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "book_flight", "gen_ai.tool.type": "function"}
			for k, v := range tt.wantAttrs {
				want[k] = v
			}
			if got := attrMap(s.Attributes); !equalMaps(got, want) {
				t.Errorf("attributes\n got %v\nwant %v", got, want)
			}
			// The status description stays empty: error.type holds the code.
			if s.Status.Code != tt.wantStatus || s.Status.Description != "" {
				t.Errorf("status %v %q, want %v and no description", s.Status.Code, s.Status.Description, tt.wantStatus)
			}
			if len(s.Events) != len(tt.wantEvents) {
				t.Fatalf("%d events, want %d: %v", len(s.Events), len(tt.wantEvents), s.Events)
			}
			for i, e := range s.Events {
				if e.Name != tracing.EventAttempt || !equalMaps(attrMap(e.Attributes), tt.wantEvents[i]) {
					t.Errorf("event %d: %s %v, want %v", i, e.Name, attrMap(e.Attributes), tt.wantEvents[i])
				}
			}
		})
	}
}

func TestSpanWithoutCall(t *testing.T) {
	r := newRig(t)
	tool := tracing.New(r.opts()...)(script(r.clock, 0, nil))
	if _, err := tool(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	s := r.spans.GetSpans()[0]
	want := map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tracing.UnknownTool, "toolmw.outcome": "ok"}
	if s.Name != "execute_tool unknown" || !equalMaps(attrMap(s.Attributes), want) {
		t.Errorf("span %q %v, want execute_tool unknown %v", s.Name, attrMap(s.Attributes), want)
	}
}

// TestSpanOutsideWrapKeepsToolName: WithToolName names the tool of a layer
// used outside toolmw.Wrap, on the span and the metrics (gen_ai.tool.name
// is required); inside Wrap the Call's name wins.
func TestSpanOutsideWrapKeepsToolName(t *testing.T) {
	r := newRig(t)
	mw := tracing.New(append(r.opts(), tracing.WithToolName("search"))...)
	if _, err := mw(script(r.clock, 0, nil))(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := toolmw.MustWrap(toolmw.Spec{Name: "lookup"}, script(r.clock, 0, nil), mw)(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	spans := r.spans.GetSpans()
	if len(spans) != 2 || spans[0].Name != "execute_tool search" || attrMap(spans[0].Attributes)["gen_ai.tool.name"] != "search" ||
		spans[1].Name != "execute_tool lookup" {
		t.Fatalf("spans %v", spans)
	}
	names := map[string]bool{}
	for _, p := range r.metrics(t)[tracing.MetricCalls].Data.(metricdata.Sum[int64]).DataPoints {
		v, _ := p.Attributes.Value("gen_ai.tool.name")
		names[v.AsString()] = true
	}
	if len(names) != 2 || !names["search"] || !names["lookup"] {
		t.Errorf("gen_ai.tool.name on the metrics: %v", names)
	}
}

func TestSpanParentAndContext(t *testing.T) {
	r := newRig(t)
	var inner trace.SpanContext
	tool := toolmw.MustWrap(toolmw.Spec{Name: "lookup", Type: "datastore"}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		inner = trace.SpanContextFromContext(ctx)
		return toolmw.Text("x"), nil
	}, tracing.New(r.opts()...))
	ctx, parent := r.tp.Tracer("test").Start(context.Background(), "agent turn")
	if _, err := tool(ctx, nil); err != nil {
		t.Fatal(err)
	}
	parent.End()
	spans := r.spans.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	s := spans[0]
	if s.Parent.SpanID() != parent.SpanContext().SpanID() {
		t.Error("the tool's span is not a child of the caller's")
	}
	if inner.SpanID() != s.SpanContext.SpanID() {
		t.Error("the tool does not see its span in the context")
	}
	if got := attrMap(s.Attributes)["gen_ai.tool.type"]; got != "datastore" {
		t.Errorf("gen_ai.tool.type = %v", got)
	}
}

func TestPanicEndsSpanAndGoesOn(t *testing.T) {
	r := newRig(t)
	tool := toolmw.MustWrap(toolmw.Spec{Name: "boom"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		panic("the value of the panic")
	}, tracing.New(r.opts()...), tracing.NewAttempts(r.opts()...))
	func() {
		defer func() {
			if v := recover(); v != "the value of the panic" {
				t.Errorf("recovered %v", v)
			}
		}()
		_, _ = tool(context.Background(), nil)
	}()
	s := r.spans.GetSpans()[0]
	got := attrMap(s.Attributes)
	if got["error.type"] != "tool_panicked" || s.Status.Code != codes.Error || s.Status.Description != "" {
		t.Errorf("span %v status %v", got, s.Status)
	}
	if len(s.Events) != 2 || attrMap(s.Events[0].Attributes)["toolmw.error.code"] != "tool_panicked" ||
		s.Events[1].Name != tracing.EventException || !equalMaps(attrMap(s.Events[1].Attributes), map[string]any{"exception.type": tracing.ExceptionPanic}) {
		t.Errorf("events %v", s.Events)
	}
}

func TestMetrics(t *testing.T) {
	r := newRig(t)
	transient := taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier down")
	refusal := taxonomy.Refusal("booking_not_cancellable", "non-refundable")
	// Three calls of 250 ms, one of two attempts (2 × 250 ms), one refused.
	ok := toolmw.MustWrap(toolmw.Spec{Name: "book"}, script(r.clock, 250*time.Millisecond, nil),
		tracing.New(r.opts()...), testutil.RetryN(3), tracing.NewAttempts(r.opts()...))
	flaky := toolmw.MustWrap(toolmw.Spec{Name: "book"}, script(r.clock, 250*time.Millisecond, transient, nil),
		tracing.New(r.opts()...), testutil.RetryN(3), tracing.NewAttempts(r.opts()...))
	refused := toolmw.MustWrap(toolmw.Spec{Name: "book"}, script(r.clock, 250*time.Millisecond, refusal),
		tracing.New(r.opts()...), testutil.RetryN(3), tracing.NewAttempts(r.opts()...))
	ctx := context.Background()
	_, _ = ok(ctx, nil)
	_, _ = ok(ctx, nil)
	_, _ = flaky(ctx, nil)
	_, _ = refused(ctx, nil)

	ms := r.metrics(t)
	if len(ms) != 3 {
		t.Fatalf("metrics %v", keys(ms))
	}
	// A refusal is handled: toolmw.error.code, no error.type.
	okSet := "gen_ai.operation.name=execute_tool,gen_ai.tool.name=book,gen_ai.tool.type=function,toolmw.outcome=ok"
	refusedSet := "gen_ai.operation.name=execute_tool,gen_ai.tool.name=book,gen_ai.tool.type=function,toolmw.error.code=booking_not_cancellable,toolmw.outcome=refused"
	failedSet := "error.type=upstream_unavailable,gen_ai.operation.name=execute_tool,gen_ai.tool.name=book,gen_ai.tool.type=function,toolmw.error.code=upstream_unavailable,toolmw.outcome=failed"

	d := ms[tracing.MetricDuration]
	if d.Unit != "s" {
		t.Errorf("duration unit %q", d.Unit)
	}
	hist, _ := d.Data.(metricdata.Histogram[float64])
	type point struct {
		count uint64
		sum   float64
	}
	gotHist := map[string]point{}
	for _, p := range hist.DataPoints {
		gotHist[p.Attributes.Encoded(attribute.DefaultEncoder())] = point{p.Count, p.Sum}
		if len(p.Bounds) != 14 || p.Bounds[0] != 0.01 || p.Bounds[13] != 81.92 {
			t.Errorf("bounds %v", p.Bounds)
		}
	}
	wantHist := map[string]point{okSet: {3, 0.25 + 0.25 + 0.5}, refusedSet: {1, 0.25}}
	if fmt.Sprint(gotHist) != fmt.Sprint(wantHist) {
		t.Errorf("duration\n got %v\nwant %v", gotHist, wantHist)
	}

	c := ms[tracing.MetricCalls]
	if c.Unit != "{call}" {
		t.Errorf("calls unit %q", c.Unit)
	}
	if got, want := sums(t, c), map[string]int64{okSet: 3, refusedSet: 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("calls\n got %v\nwant %v", got, want)
	}
	a := ms[tracing.MetricAttempts]
	if a.Unit != "{attempt}" {
		t.Errorf("attempts unit %q", a.Unit)
	}
	if got, want := sums(t, a), map[string]int64{okSet: 3, failedSet: 1, refusedSet: 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("attempts\n got %v\nwant %v", got, want)
	}
}

func sums(t *testing.T, m metricdata.Metrics) map[string]int64 {
	t.Helper()
	s, ok := m.Data.(metricdata.Sum[int64])
	if !ok || !s.IsMonotonic {
		t.Fatalf("%s is %T, want a monotonic Sum[int64]", m.Name, m.Data)
	}
	out := map[string]int64{}
	for _, p := range s.DataPoints {
		out[p.Attributes.Encoded(attribute.DefaultEncoder())] = p.Value
	}
	return out
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func TestNoopProvidersReturnTheToolUnchanged(t *testing.T) {
	called := 0
	tool := func(context.Context, json.RawMessage) (toolmw.Result, error) { called++; return toolmw.Result{}, nil }
	wrapped := tracing.New(tracing.WithTracerProvider(tracenoop.NewTracerProvider()), tracing.WithMeterProvider(metricnoop.NewMeterProvider()))(tool)
	if fmt.Sprintf("%p", wrapped) != fmt.Sprintf("%p", toolmw.Tool(tool)) {
		t.Error("the layer wrapped the tool although both providers are no-ops")
	}
}

func TestNilOptionsKeepDefaults(t *testing.T) {
	tool := tracing.New(nil, tracing.WithTracerProvider(nil), tracing.WithMeterProvider(nil), tracing.WithClock(nil))(
		func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("x"), nil })
	if res, err := tool(context.Background(), nil); err != nil || res.Content != "x" {
		t.Fatal(res, err)
	}
}

// TestToolNameChange: one wrapped tool used under two names labels each
// call with its own name.
func TestToolNameChange(t *testing.T) {
	r := newRig(t)
	inner := tracing.New(r.opts()...)(script(r.clock, 0, nil))
	a := toolmw.MustWrap(toolmw.Spec{Name: "a"}, inner)
	b := toolmw.MustWrap(toolmw.Spec{Name: "b"}, inner)
	_, _ = a(context.Background(), nil)
	_, _ = b(context.Background(), nil)
	_, _ = a(context.Background(), nil)
	var names []string
	for _, s := range r.spans.GetSpans() {
		names = append(names, s.Name+"/"+fmt.Sprint(attrMap(s.Attributes)["gen_ai.tool.name"]))
	}
	if got := strings.Join(names, " "); got != "execute_tool a/a execute_tool b/b execute_tool a/a" {
		t.Error(got)
	}
}

// TestConcurrent exercises the per-tool label cache under the race detector.
func TestConcurrent(t *testing.T) {
	r := newRig(t)
	inner := tracing.New(r.opts()...)(func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("done"), nil
	})
	tools := []toolmw.Tool{toolmw.MustWrap(toolmw.Spec{Name: "a"}, inner), toolmw.MustWrap(toolmw.Spec{Name: "b"}, inner)}
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 50; i++ {
				_, _ = tools[(g+i)%2](context.Background(), nil)
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	for _, s := range r.spans.GetSpans() {
		if s.Name != "execute_tool "+fmt.Sprint(attrMap(s.Attributes)["gen_ai.tool.name"]) {
			t.Fatalf("span %q labelled %v", s.Name, attrMap(s.Attributes))
		}
	}
}

// TestBoundedCodes: 3000 calls failing with 1500 distinct well-formed codes
// make one metric series for all of them, and the spans never carry a code
// that is neither built in nor registered.
func TestBoundedCodes(t *testing.T) {
	r := newRig(t)
	for i := range 3000 {
		code := fmt.Sprintf("reason_%d", i%1500)
		tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, script(r.clock, 0, taxonomy.Failure(code, "no")), tracing.New(r.opts()...))
		_, _ = tool(context.Background(), nil)
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, script(r.clock, 0, taxonomy.Failure(taxonomy.CodeUpstreamError, "no")), tracing.New(r.opts()...))
	_, _ = tool(context.Background(), nil)

	series := map[string]bool{}
	for _, dp := range r.metrics(t)[tracing.MetricCalls].Data.(metricdata.Sum[int64]).DataPoints {
		v, _ := dp.Attributes.Value("error.type")
		series[v.AsString()] = true
	}
	if len(series) != 2 || !series[tracing.OtherCode] || !series[taxonomy.CodeUpstreamError] {
		t.Fatalf("error.type series %v, want %s and %s only", series, tracing.OtherCode, taxonomy.CodeUpstreamError)
	}
	for _, s := range r.spans.GetSpans() {
		for _, kv := range s.Attributes {
			if v := kv.Value.AsString(); strings.HasPrefix(v, "reason_") {
				t.Fatalf("span %s carries %s=%s", s.Name, kv.Key, v)
			}
		}
	}
	if err := tracing.Validate(tracing.WithCodes("Not-A-Code")); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
		t.Fatalf("a malformed code: %v", err)
	}
	if _, err := toolmw.Wrap(toolmw.Spec{Name: "book"}, tool, tracing.New(tracing.WithCodes("x y"))); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
		t.Fatalf("Wrap with a malformed code: %v", err)
	}
}

// TestSpanSaysWhatStoodIn: a call whose result a fallback layer inside
// stood in for, and which a layer decided on local state, has
// toolmw.fallback and toolmw.degraded on its span; another call has
// neither.
func TestSpanSaysWhatStoodIn(t *testing.T) {
	r := newRig(t)
	marked := true
	mark := func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			if marked {
				toolmw.SetFallback(ctx, "last_good")
				toolmw.SetDegraded(ctx, "ratelimit")
			}
			return next(ctx, args)
		}
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, script(r.clock, 0, nil), tracing.New(r.opts()...), mark)
	_, _ = tool(context.Background(), nil)
	marked = false
	_, _ = tool(context.Background(), nil)
	spans := r.spans.GetSpans()
	first, second := attrMap(spans[0].Attributes), attrMap(spans[1].Attributes)
	if first["toolmw.fallback"] != "last_good" || first["toolmw.degraded"] != "ratelimit" {
		t.Errorf("the marked call's span: %v", first)
	}
	if _, ok := second["toolmw.fallback"]; ok {
		t.Errorf("the plain call's span: %v", second)
	}
	if _, ok := second["toolmw.degraded"]; ok {
		t.Errorf("the plain call's span: %v", second)
	}
}
