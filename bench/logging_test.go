package bench

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/rs/zerolog"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/logging"
	"github.com/toolmw/toolmw/taxonomy"
)

// BenchmarkLogging puts the logging layer's two backends side by side:
// zerolog, and log/slog with its JSON handler, both writing to io.Discard,
// with the same options, so every pair writes the same lines:
//
//   - success_debug: a success, written at DEBUG (the default level of a
//     success) by a logger at DEBUG;
//   - success_unwritten: a success under a logger at INFO, the usual
//     production set-up: the layer runs and writes nothing;
//   - failure_warn: a retryable failure, written at WARN by a logger at INFO
//     (no detail line);
//   - failure_debug: the same failure under a logger at DEBUG: the WARN line
//     and the DEBUG detail line with the error's text and cause, scrubbed;
//   - disabled: zerolog.Nop() and slog.DiscardHandler, with which the layer
//     returns the tool unchanged.
//
// Each is next to toolmw_wrap, the same tool under Wrap with no layer.
func BenchmarkLogging(b *testing.B) {
	zl := func(level zerolog.Level) zerolog.Logger { return zerolog.New(io.Discard).Level(level) }
	sl := func(level slog.Level) *slog.Logger {
		return slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: level}))
	}
	cases := []struct {
		name   string
		tool   toolmw.Tool
		zl     zerolog.Logger
		sl     *slog.Logger
		failed bool
	}{
		{"success_debug", noop, zl(zerolog.DebugLevel), sl(slog.LevelDebug), false},
		{"success_unwritten", noop, zl(zerolog.InfoLevel), sl(slog.LevelInfo), false},
		{"failure_warn", failTransient, zl(zerolog.InfoLevel), sl(slog.LevelInfo), true},
		{"failure_debug", failTransient, zl(zerolog.DebugLevel), sl(slog.LevelDebug), true},
		{"disabled", noop, zerolog.Nop(), slog.New(slog.DiscardHandler), false},
	}
	for _, c := range cases {
		b.Run(c.name+"/toolmw_wrap", func(b *testing.B) { benchLogging(b, toolmw.MustWrap(spec, c.tool), c.failed) })
		b.Run(c.name+"/zerolog", func(b *testing.B) {
			benchLogging(b, toolmw.MustWrap(spec, c.tool, logging.New(c.zl)), c.failed)
		})
		b.Run(c.name+"/slog", func(b *testing.B) {
			benchLogging(b, toolmw.MustWrap(spec, c.tool, logging.NewSlog(c.sl)), c.failed)
		})
	}
}

// errUpstream is the failure of failTransient: retryable, so written at
// WARN, with a cause whose text (an address, scrubbed) goes on the detail
// line.
var errUpstream = taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the weather service is down").
	WithCause(errors.New("dial tcp 203.0.113.42:443: connect: connection refused"))

func failTransient(context.Context, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Result{}, errUpstream
}

func benchLogging(b *testing.B, tool toolmw.Tool, failed bool) {
	ctx := toolmw.WithCallID(context.Background(), "call_1")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := tool(ctx, benchArgs)
		if (err != nil) != failed {
			b.Fatal(err)
		}
		sink = res
	}
}
