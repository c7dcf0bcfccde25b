package tracing_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/middleware/classify"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/taxonomy"
)

// codeSoldOut is declared once, where it is named; no tracing option
// repeats it.
var codeSoldOut = taxonomy.Declare("fare_sold_out")

// TestDeclaredCodeWrittenAsIs: the span and the metrics of a Typed tool
// that refuses with a code declared once (taxonomy.Declare) show that
// code, with no tracing.WithCodes; a code a mapper rule gives is known the
// same way; a code nobody declared is still OtherCode.
func TestDeclaredCodeWrittenAsIs(t *testing.T) {
	upstream := errors.New("the supplier says: sold out")
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"declared", taxonomy.Refusal(codeSoldOut, "this fare is sold out"), "fare_sold_out"},
		{"a mapper rule's", upstream, "supplier_sold_out"},
		{"undeclared", taxonomy.Refusal("seat_gone_undeclared", "gone"), tracing.OtherCode},
	}
	rules := mapper.New().With(mapper.Is(upstream, mapper.Permanent("supplier_sold_out")))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			type in struct {
				Fare string `json:"fare"`
			}
			tool, err := toolmw.Wrap(toolmw.Spec{Name: "book"}, toolmw.Typed(func(context.Context, in) (string, error) {
				return "", c.err
			}), tracing.New(tracing.WithTracerProvider(r.tp), tracing.WithMeterProvider(r.mp), tracing.WithClock(r.clock)),
				classify.New(classify.WithMap(rules)))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = tool(context.Background(), []byte(`{"fare":"f1"}`))
			spans := r.spans.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans, want 1", len(spans))
			}
			got := attrMap(spans[0].Attributes)
			// error.type is the code too, where the outcome is an error.
			wantType := any(nil)
			if tracing.IsError(taxonomy.OutcomeOf(c.err)) {
				wantType = c.want
			}
			if got["error.type"] != wantType || got["toolmw.error.code"] != c.want {
				t.Errorf("error.type %v, toolmw.error.code %v; want %v, %s", got["error.type"], got["toolmw.error.code"], wantType, c.want)
			}
		})
	}
}
