package logging

import (
	"context"
	"log/slog"

	"github.com/toolmw/toolmw"
)

// NewSlog returns a middleware that logs one line per finished call to a
// log/slog logger, and for a failure a DEBUG line with the error's scrubbed
// text: the same lines, fields and levels as [New]. A nil logger means
// slog.Default(), read at each call. A logger made from another
// slog.Handler, such as slog.New(handler), is used through its handler.
//
// The handler is asked at each call whether it is enabled for the line's
// level, so a slog.LevelVar may change the level at run time; a logger on
// slog.DiscardHandler makes NewSlog return each tool unchanged. The records
// carry the time of the layer's clock and no source position. Given an
// invalid option value it returns toolmw.Reject with the error [Validate]
// reports, so toolmw.Wrap fails at start-up; it never panics. The returned
// Middleware and the Tools it makes are safe for concurrent use, as slog
// requires of handlers.
func NewSlog(logger *slog.Logger, opts ...Option) toolmw.Middleware {
	cfg := newConfig(opts)
	if cfg.err != nil {
		return toolmw.Reject(cfg.err)
	}
	var h slog.Handler
	if logger != nil {
		h = logger.Handler()
	}
	return func(next toolmw.Tool) toolmw.Tool {
		if h == slog.DiscardHandler {
			return next
		}
		return newLayer(next, slogSink{h: h}, cfg)
	}
}

// slogSink writes the lines to a slog.Handler: nil means slog.Default()'s
// at each call.
type slogSink struct{ h slog.Handler }

func (s slogSink) handler() slog.Handler {
	if s.h != nil {
		return s.h
	}
	return slog.Default().Handler()
}

func (slogSink) silenced() bool { return false }

func (s slogSink) call(ctx context.Context, level slog.Level, f callFields) {
	h := s.handler()
	if !h.Enabled(ctx, level) {
		return
	}
	end, ms := f.end()
	e := slog.NewRecord(end, level, msgCall, 0)
	e.AddAttrs(slog.String("tool", f.tool))
	if f.callID != "" {
		e.AddAttrs(slog.String("call_id", f.callID))
	}
	e.AddAttrs(slog.String("outcome", string(f.outcome)))
	if f.failed {
		e.AddAttrs(slog.String("kind", string(f.kind)), slog.String("code", f.code), slog.Bool("retryable", f.retryable))
	}
	if f.known {
		e.AddAttrs(slog.Int("attempts", f.attempts))
	}
	if f.fallback != "" {
		e.AddAttrs(slog.String("fallback", f.fallback))
	}
	if f.degraded != "" {
		e.AddAttrs(slog.String("degraded", f.degraded))
	}
	e.AddAttrs(slog.Float64("duration_ms", ms))
	_ = h.Handle(ctx, e)
}

func (s slogSink) detail(ctx context.Context, f callFields, t errText) {
	h := s.handler()
	if !h.Enabled(ctx, slog.LevelDebug) {
		return
	}
	d := slog.NewRecord(f.clock.Now(), slog.LevelDebug, msgDetail, 0)
	d.AddAttrs(slog.String("tool", f.tool))
	if f.callID != "" {
		d.AddAttrs(slog.String("call_id", f.callID))
	}
	d.AddAttrs(slog.String("code", f.code), slog.String("error", t.Message()))
	if cause := t.Cause(); cause != "" {
		d.AddAttrs(slog.String("cause", cause))
	}
	_ = h.Handle(ctx, d)
}
