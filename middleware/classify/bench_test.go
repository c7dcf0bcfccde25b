package classify_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/classify"
	"github.com/toolmw/toolmw/toolmwtest"
)

//go:noinline
func reset(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Result{}, errReset }

// BenchmarkSuccess measures the success path: a nil check.
func BenchmarkSuccess(b *testing.B) {
	tool := classify.New()(toolmwtest.OK)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFailure measures classifying a reset connection through Wrap,
// with the default map.
func BenchmarkFailure(b *testing.B) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "quote", Idempotent: true}, reset, classify.New())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err == nil {
			b.Fatal("no error")
		}
	}
}
