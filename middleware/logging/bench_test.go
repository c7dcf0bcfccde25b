package logging_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/rs/zerolog"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/logging"
	"github.com/toolmw/toolmw/taxonomy"
)

func okTool(context.Context, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Result{Content: "ok"}, nil
}

// errTransient is the failure the failure benchmarks return: a typed,
// retryable error with a cause, written at WARN.
var errTransient = taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier down")

func failTransient(context.Context, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Result{}, errTransient
}

func benchCall(b *testing.B, tool toolmw.Tool, wantErr bool, mws ...toolmw.Middleware) {
	tool = toolmw.MustWrap(toolmw.Spec{Name: "bench"}, tool, mws...)
	ctx := toolmw.WithCallID(context.Background(), "call_1")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tool(ctx, nil); (err != nil) != wantErr {
			b.Fatal(err)
		}
	}
}

func slogJSON(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: level}))
}

// BenchmarkSuccess measures the success path: the bare tool under Wrap,
// then each backend with a disabled logger, a logger at WARN (successes not
// written), and a line per success written to io.Discard at DEBUG and INFO.
func BenchmarkSuccess(b *testing.B) {
	b.Run("bare", func(b *testing.B) { benchCall(b, okTool, false) })
	b.Run("nop", func(b *testing.B) { benchCall(b, okTool, false, logging.New(zerolog.Nop())) })
	b.Run("warn-level", func(b *testing.B) {
		benchCall(b, okTool, false, logging.New(zerolog.New(io.Discard).Level(zerolog.WarnLevel)))
	})
	b.Run("discard-debug", func(b *testing.B) { benchCall(b, okTool, false, logging.New(zerolog.New(io.Discard))) })
	b.Run("discard-info", func(b *testing.B) {
		benchCall(b, okTool, false, logging.New(zerolog.New(io.Discard).Level(zerolog.InfoLevel), logging.WithSuccessLevel(slog.LevelInfo)))
	})
	b.Run("slog-discard-handler", func(b *testing.B) {
		benchCall(b, okTool, false, logging.NewSlog(slog.New(slog.DiscardHandler)))
	})
	b.Run("slog-warn-level", func(b *testing.B) { benchCall(b, okTool, false, logging.NewSlog(slogJSON(slog.LevelWarn))) })
	b.Run("slog-discard-debug", func(b *testing.B) { benchCall(b, okTool, false, logging.NewSlog(slogJSON(slog.LevelDebug))) })
	b.Run("slog-discard-info", func(b *testing.B) {
		benchCall(b, okTool, false, logging.NewSlog(slogJSON(slog.LevelInfo), logging.WithSuccessLevel(slog.LevelInfo)))
	})
}

// BenchmarkFailure measures a failed call: its line at WARN, and with the
// logger at DEBUG the detail line too (the error's text, scrubbed).
func BenchmarkFailure(b *testing.B) {
	b.Run("warn", func(b *testing.B) {
		benchCall(b, failTransient, true, logging.New(zerolog.New(io.Discard).Level(zerolog.InfoLevel)))
	})
	b.Run("debug", func(b *testing.B) { benchCall(b, failTransient, true, logging.New(zerolog.New(io.Discard))) })
	b.Run("slog-warn", func(b *testing.B) { benchCall(b, failTransient, true, logging.NewSlog(slogJSON(slog.LevelInfo))) })
	b.Run("slog-debug", func(b *testing.B) { benchCall(b, failTransient, true, logging.NewSlog(slogJSON(slog.LevelDebug))) })
}
