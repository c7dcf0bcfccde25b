package logging_test

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/rs/zerolog"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/logging"
)

func okTool(context.Context, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Result{Content: "ok"}, nil
}

func benchCall(b *testing.B, mws ...toolmw.Middleware) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "bench"}, okTool, mws...)
	ctx := toolmw.WithCallID(context.Background(), "call_1")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSuccess measures the success path: the bare tool under Wrap, a
// disabled logger, a logger at WARN (successes not written), and a line
// per success written to io.Discard.
func BenchmarkSuccess(b *testing.B) {
	b.Run("bare", func(b *testing.B) { benchCall(b) })
	b.Run("nop", func(b *testing.B) { benchCall(b, logging.New(zerolog.Nop())) })
	b.Run("warn-level", func(b *testing.B) {
		benchCall(b, logging.New(zerolog.New(io.Discard).Level(zerolog.WarnLevel)))
	})
	b.Run("discard-debug", func(b *testing.B) { benchCall(b, logging.New(zerolog.New(io.Discard))) })
	b.Run("discard-info", func(b *testing.B) {
		benchCall(b, logging.New(zerolog.New(io.Discard).Level(zerolog.InfoLevel), logging.WithSuccessLevel(zerolog.InfoLevel)))
	})
}
