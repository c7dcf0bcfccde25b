package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/chaos"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/taxonomy"
)

// TestChaosLayer: chaos is never in Default; a stack with a chaos layer
// says so in its String; and through the default stack an injected
// failure marks the call's span (toolmw.chaos) and nothing else tells it
// from the real one.
func TestChaosLayer(t *testing.T) {
	if d := middleware.Default(); slices.Contains(d.Names(), middleware.Chaos) || strings.Contains(d.String(), "chaos") {
		t.Fatalf("Default has chaos: %s", d)
	}
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	unavailable := taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the supplier is unavailable")
	stack, err := middleware.Default(middleware.WithTracing(tracing.WithTracerProvider(tp)),
		middleware.WithRetry(retry.WithMaxAttempts(1))).
		InsertAfter(middleware.Classify, middleware.Layer{Name: middleware.Chaos,
			Middleware: chaos.New(chaos.WithFault(chaos.Failure(unavailable), 1))})
	if err != nil {
		t.Fatal(err)
	}
	want := "tracing → logging → events → retry → breaker → ratelimit → timeout → recovery → redact → classify → chaos → tool (chaos: injects faults)"
	if stack.String() != want {
		t.Errorf("String() = %s\nwant       %s", stack, want)
	}

	injected, err := stack.Wrap(toolmw.Spec{Name: "search"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("ok"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := middleware.Default(middleware.WithTracing(tracing.WithTracerProvider(tp)),
		middleware.WithRetry(retry.WithMaxAttempts(1))).
		Wrap(toolmw.Spec{Name: "search"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			return toolmw.Result{}, unavailable
		})
	if err != nil {
		t.Fatal(err)
	}
	_, ierr := injected(chaos.Enable(context.Background()), nil)
	_, rerr := plain(context.Background(), nil)
	if ierr.Error() != rerr.Error() || fmt.Sprint(taxonomy.InfoOf(ierr)) != fmt.Sprint(taxonomy.InfoOf(rerr)) {
		t.Errorf("injected %v (%+v)\nreal     %v (%+v)", ierr, taxonomy.InfoOf(ierr), rerr, taxonomy.InfoOf(rerr))
	}
	ended := spans.Ended()
	if len(ended) != 2 {
		t.Fatalf("%d spans", len(ended))
	}
	attrs := func(s sdktrace.ReadOnlySpan) map[string]string {
		m := map[string]string{}
		for _, a := range s.Attributes() {
			m[string(a.Key)] = a.Value.String()
		}
		return m
	}
	a, b := attrs(ended[0]), attrs(ended[1])
	if a[string(tracing.KeyChaos)] != "failure" {
		t.Errorf("the injected call's span: toolmw.chaos = %q, want failure", a[string(tracing.KeyChaos)])
	}
	delete(a, string(tracing.KeyChaos))
	if len(a) != len(b) {
		t.Errorf("spans differ beyond toolmw.chaos:\n%v\n%v", a, b)
	}
	for k, v := range a {
		if b[k] != v {
			t.Errorf("span attribute %s: injected %q, real %q", k, v, b[k])
		}
	}
}
