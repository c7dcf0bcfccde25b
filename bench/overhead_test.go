package bench

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolmw/toolmw"
)

// noop is the tool every system calls: it succeeds at once.
func noop(context.Context, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Result{Content: "ok"}, nil
}

var benchArgs = json.RawMessage(`{"city":"Paris"}`)

// system is one way of calling the no-op tool, built once by make.
type system struct {
	name string
	make func() toolmw.Tool
}

// systems lists what BenchmarkOverhead compares; each system is built only
// when its sub-benchmark runs, so a one-iteration smoke run stays cheap.
// toolmw_default and its peers come first and next to each other, so that
// on a shared machine the systems compared run under much the same load.
func systems() []system {
	toolmws := toolmwSystems()
	s := []system{
		{"direct", func() toolmw.Tool { return noop }},
		toolmws[0], // toolmw_default
		{"failsafe_retry_cb_timeout", func() toolmw.Tool { return failsafeRetryCBTimeout(noop) }},
		{"gokit_gobreaker_ratelimit", func() toolmw.Tool { return gokitGobreakerRatelimit(noop) }},
		{"retrygo", func() toolmw.Tool { return retryGo(noop) }},
		{"backoff", func() toolmw.Tool { return backoffRetry(noop) }},
	}
	return append(s, toolmws[1:]...)
}

// sink keeps the compiler from discarding the calls.
var sink toolmw.Result

func BenchmarkOverhead(b *testing.B) {
	for _, s := range systems() {
		b.Run(s.name, func(b *testing.B) {
			tool := s.make()
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := tool(ctx, benchArgs)
				if err != nil {
					b.Fatal(err)
				}
				sink = res
			}
		})
	}
}

func BenchmarkOverheadParallel(b *testing.B) {
	for _, s := range systems() {
		b.Run(s.name, func(b *testing.B) {
			tool := s.make()
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var res toolmw.Result
				for pb.Next() {
					r, err := tool(ctx, benchArgs)
					if err != nil {
						b.Error(err)
						return
					}
					res = r
				}
				_ = res
			})
		})
	}
}
