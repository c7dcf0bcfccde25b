package breaker_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/breaker"
)

//go:noinline
func ok(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }

func run(b *testing.B, tool toolmw.Tool) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSuccess measures the success path of the layer alone.
func BenchmarkSuccess(b *testing.B) { run(b, breaker.New()(ok)) }

// BenchmarkSuccessWrapped measures it inside toolmw.Wrap, as used.
func BenchmarkSuccessWrapped(b *testing.B) {
	run(b, toolmw.MustWrap(toolmw.Spec{Name: "book"}, ok, breaker.New()))
}

// BenchmarkWrapOnly is the baseline of BenchmarkSuccessWrapped: Wrap alone.
func BenchmarkWrapOnly(b *testing.B) { run(b, toolmw.MustWrap(toolmw.Spec{Name: "book"}, ok)) }

// BenchmarkSuccessKeyed measures the success path of a keyed breaker.
func BenchmarkSuccessKeyed(b *testing.B) {
	run(b, toolmw.MustWrap(toolmw.Spec{Name: "book"}, ok,
		breaker.New(breaker.WithKey(func(toolmw.Call) string { return "payments" }))))
}

// BenchmarkSuccessParallel measures concurrent calls through one breaker.
func BenchmarkSuccessParallel(b *testing.B) {
	tool := breaker.New()(ok)
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
