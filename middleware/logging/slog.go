package logging

import (
	"context"
	"log/slog"
)

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
	if f.cache != "" {
		e.AddAttrs(slog.String("cache", f.cache))
	}
	if f.degraded != "" {
		e.AddAttrs(slog.String("degraded", f.degraded))
	}
	if f.parts > 0 {
		e.AddAttrs(slog.Int("parts", f.parts), slog.String("part_info", f.partInfo))
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
