package ratelimit_test

import (
	"context"
	"encoding/json"
	"testing"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/ratelimit"
)

//go:noinline
func ok(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }

// BenchmarkSuccess measures the success path: a token is free.
func BenchmarkSuccess(b *testing.B) {
	tool := ratelimit.New(rate.Limit(1e12), 1<<30)(ok)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSuccessKeyed measures the success path of a keyed limiter.
func BenchmarkSuccessKeyed(b *testing.B) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, ok, ratelimit.New(rate.Limit(1e12), 1<<30,
		ratelimit.WithKey(func(toolmw.Call) string { return "search-api" })))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}
