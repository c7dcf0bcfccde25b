package logging

import (
	"context"
	"log/slog"

	"github.com/rs/zerolog"
)

// zerologSink writes the lines with zerolog, without allocating.
type zerologSink struct{ logger zerolog.Logger }

func (s *zerologSink) silenced() bool { return zerolog.GlobalLevel() > zerolog.ErrorLevel }

func (s *zerologSink) call(ctx context.Context, level slog.Level, f callFields) {
	e := s.logger.WithLevel(zerologLevel(level))
	if e == nil {
		return
	}
	e = e.Ctx(ctx).Str("tool", f.tool)
	if f.callID != "" {
		e = e.Str("call_id", f.callID)
	}
	e = e.Str("outcome", string(f.outcome))
	if f.failed {
		e = e.Str("kind", string(f.kind)).Str("code", f.code).Bool("retryable", f.retryable)
	}
	if f.known {
		e = e.Int("attempts", f.attempts)
	}
	if f.fallback != "" {
		e = e.Str("fallback", f.fallback)
	}
	if f.cache != "" {
		e = e.Str("cache", f.cache)
	}
	if f.degraded != "" {
		e = e.Str("degraded", f.degraded)
	}
	if f.parts > 0 {
		e = e.Int("parts", f.parts).Str("part_info", f.partInfo)
	}
	_, ms := f.end()
	e.Float64("duration_ms", ms).Msg(msgCall)
}

func (s *zerologSink) detail(ctx context.Context, f callFields, t errText) {
	d := s.logger.Debug()
	if d == nil {
		return
	}
	d = d.Ctx(ctx).Str("tool", f.tool)
	if f.callID != "" {
		d = d.Str("call_id", f.callID)
	}
	d = d.Str("code", f.code).Str("error", t.Message())
	if cause := t.Cause(); cause != "" {
		d = d.Str("cause", cause)
	}
	d.Msg(msgDetail)
}

// zerologLevel is the zerolog level of a slog level: below DEBUG is TRACE,
// and each slog level counts up to the next one.
func zerologLevel(level slog.Level) zerolog.Level {
	switch {
	case level < slog.LevelDebug:
		return zerolog.TraceLevel
	case level < slog.LevelInfo:
		return zerolog.DebugLevel
	case level < slog.LevelWarn:
		return zerolog.InfoLevel
	case level < slog.LevelError:
		return zerolog.WarnLevel
	}
	return zerolog.ErrorLevel
}
