package breaker_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/breaker"
)

func ok(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }

// BenchmarkSuccess measures the success path of a per-tool breaker.
func BenchmarkSuccess(b *testing.B) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, ok, breaker.New())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSuccessParallel measures it with concurrent calls through one breaker.
func BenchmarkSuccessParallel(b *testing.B) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, ok, breaker.New())
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := tool(ctx, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkBare is the baseline: the same tool, wrapped without a layer.
func BenchmarkBare(b *testing.B) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, ok)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnwrapped(b *testing.B) {
	tool := breaker.New()(ok)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}
