package tracing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// secrets are planted canaries of several families.
var secrets = canary.Values()

func TestCanaryNoSecretOnSpansOrMetrics(t *testing.T) {
	r := newRig(t)
	ctx := toolmw.WithCallID(context.Background(), "call_canary")
	calls := 0
	for _, secret := range secrets {
		for name, ferr := range canary.All(secret) {
			tool := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, script(r.clock, 0, ferr),
				tracing.New(r.opts()...), testutil.RetryN(2), tracing.NewAttempts(r.opts()...))
			if _, err := tool(ctx, nil); err == nil {
				t.Fatalf("%s: no error", name)
			}
			calls++
		}
		panicky := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			panic(fmt.Errorf("panicked holding %s", secret))
		}, tracing.New(r.opts()...), tracing.NewAttempts(r.opts()...))
		func() {
			defer func() { _ = recover() }()
			_, _ = panicky(ctx, nil)
		}()
		calls++
	}

	var dump strings.Builder
	spans := r.spans.GetSpans()
	if len(spans) != calls {
		t.Fatalf("%d spans for %d calls", len(spans), calls)
	}
	for _, s := range spans {
		fmt.Fprintf(&dump, "%s %v %v %q %v\n", s.Name, s.Attributes, s.Status.Code, s.Status.Description, s.Links)
		for _, e := range s.Events {
			fmt.Fprintf(&dump, "  %s %v\n", e.Name, e.Attributes)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&dump, "%+v\n", rm)

	text := dump.String()
	// The dump is not vacuous: it holds what the spans should hold (an
	// author's code that was not registered with WithCodes is OtherCode).
	for _, want := range []string{"unmapped_failure", "upstream_unavailable", tracing.OtherCode, "tool_panicked", "call_canary", tracing.EventAttempt, tracing.MetricCalls} {
		if !strings.Contains(text, want) {
			t.Fatalf("the telemetry lacks %q:\n%s", want, text)
		}
	}
	for _, secret := range secrets {
		for _, frag := range canary.Fragments(secret) {
			if strings.Contains(text, frag) {
				t.Errorf("telemetry holds %q of a planted secret", frag)
			}
		}
	}
	for _, word := range append(append(canary.HiddenText, canary.MessageText...), "panicked holding") {
		if strings.Contains(text, word) {
			t.Errorf("telemetry holds message text %q", word)
		}
	}
}
