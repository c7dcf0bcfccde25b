package tracing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/canary"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/taxonomy"
)

// secrets are planted canaries of several families.
var secrets = canary.Values()

// failures returns the ways a tool can fail carrying secret: untyped, as the
// cause of a typed error, wrapped around a typed error, in a typed error's
// own message and in a field error.
func failures(secret string) map[string]error {
	return map[string]error{
		"untyped":              fmt.Errorf("dial upstream with %s: refused", secret),
		"typed cause":          taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier is down").WithCause(fmt.Errorf("auth %s rejected", secret)),
		"wrapping typed":       fmt.Errorf("call with %s: %w", secret, taxonomy.Refusal("booking_not_cancellable", "non-refundable")),
		"typed own message":    taxonomy.Failure("ledger_rejected", "ledger refused key "+secret),
		"field error":          taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "value_error", Loc: []any{secret}, Msg: secret}),
		"typed permitted deny": taxonomy.NotPermitted(taxonomy.CodeNotPermitted, "user "+secret+" may not"),
	}
}

func TestCanaryNoSecretOnSpansOrMetrics(t *testing.T) {
	r := newRig(t)
	ctx := toolmw.WithCallID(context.Background(), "call_canary")
	calls := 0
	for _, secret := range secrets {
		for name, ferr := range failures(secret) {
			tool := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, script(r.clock, 0, ferr),
				tracing.New(r.opts()...), retryN(2), tracing.Attempts(r.opts()...))
			if _, err := tool(ctx, nil); err == nil {
				t.Fatalf("%s: no error", name)
			}
			calls++
		}
		panicky := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			panic(fmt.Errorf("panicked holding %s", secret))
		}, tracing.New(r.opts()...), tracing.Attempts(r.opts()...))
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
	// The dump is not vacuous: it holds what the spans should hold.
	for _, want := range []string{"unmapped_failure", "upstream_unavailable", "ledger_rejected", "tool_panicked", "call_canary", tracing.EventAttempt, tracing.MetricCalls} {
		if !strings.Contains(text, want) {
			t.Fatalf("the telemetry lacks %q:\n%s", want, text)
		}
	}
	for _, secret := range secrets {
		for _, frag := range fragments(secret) {
			if strings.Contains(text, frag) {
				t.Errorf("telemetry holds %q of a planted secret", frag)
			}
		}
	}
	for _, word := range []string{"refused key", "supplier is down", "dial upstream", "non-refundable", "panicked holding", "may not"} {
		if strings.Contains(text, word) {
			t.Errorf("telemetry holds message text %q", word)
		}
	}
}

// fragments returns the secret and pieces of it distinctive enough that
// finding one means the secret leaked, even cut or re-encoded.
func fragments(secret string) []string {
	out := []string{secret}
	if len(secret) > 16 {
		out = append(out, secret[len(secret)-12:], secret[4:16])
	}
	return out
}
