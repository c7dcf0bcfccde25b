package recovery_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/recovery"
)

//go:noinline
func ok(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }

// BenchmarkSuccess measures the success path: one deferred call.
func BenchmarkSuccess(b *testing.B) {
	tool := recovery.New()(ok)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGoexitContained measures WithGoexit: the tool on a goroutine of
// its own, handed off and waited for.
func BenchmarkGoexitContained(b *testing.B) {
	tool := recovery.New(recovery.WithGoexit())(ok)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPassThrough is the baseline: a layer that only calls the tool.
func BenchmarkPassThrough(b *testing.B) {
	pass := func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) { return next(ctx, args) }
	}
	tool := pass(ok)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}
