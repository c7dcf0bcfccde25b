package permit_test

import (
	"context"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/permit"
	"github.com/toolmw/toolmw/toolmwtest"
)

// BenchmarkSuccess measures the success path: an allow-list that permits the
// call, through Wrap (so the policy sees a Call).
func BenchmarkSuccess(b *testing.B) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, toolmwtest.OK, permit.New(permit.Allow("search", "get_booking")))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrapOnly is the baseline: the same Wrap without the layer.
func BenchmarkWrapOnly(b *testing.B) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, toolmwtest.OK)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}
