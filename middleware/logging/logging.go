package logging

import (
	"context"
	"encoding/json"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/taxonomy"
)

// The messages of the two lines the layer writes.
const (
	msgCall   = "tool call"              // one per finished call, at its level
	msgDetail = "tool call error detail" // the error's text, at DEBUG only
)

// Option configures New.
//
// Options are applied once, by the constructor they are passed to; an Option may be reused and shared between goroutines.
type Option func(*config)

type config struct {
	success zerolog.Level
	levels  map[taxonomy.Kind]zerolog.Level
	clock   clock.Clock
}

// WithSuccessLevel sets the level of the line of a successful call: DEBUG
// by default. Trace, Debug and Info are used as given; zerolog.Disabled
// logs no successes; any level above Info is taken as Info, since a
// success is never a warning.
func WithSuccessLevel(level zerolog.Level) Option {
	return func(c *config) { c.success = clamp(level, zerolog.InfoLevel) }
}

// WithLevel sets the level of the line of a call that failed with an error
// of the given kind, in place of [DefaultLevel]'s. zerolog.Disabled logs
// no line for that kind, not even the detail line; Fatal, Panic and NoLevel are taken as Error, so a
// log line never stops the program.
func WithLevel(kind taxonomy.Kind, level zerolog.Level) Option {
	return func(c *config) {
		if c.levels == nil {
			c.levels = map[taxonomy.Kind]zerolog.Level{}
		}
		c.levels[kind] = clamp(level, zerolog.ErrorLevel)
	}
}

// WithClock sets the clock that times calls; clock.System by default.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) { cfg.clock = c }
}

func clamp(level, highest zerolog.Level) zerolog.Level {
	switch {
	case level == zerolog.Disabled:
		return level
	case level < zerolog.TraceLevel:
		return zerolog.TraceLevel
	case level > highest:
		return highest
	}
	return level
}

// DefaultLevel is the level of the line of a call that failed with info:
//
//   - INFO for answers and the caller's own decisions: a refusal
//     (tool-refused) and a cancellation (tool-cancelled);
//   - WARN for what is expected to pass or is the model's or the policy's
//     doing: a retryable tool-failed, tool-timeout, circuit-open,
//     rate-limited, retry-budget-exhausted, run-limit-exceeded,
//     tool-not-permitted, tool-args-invalid and tool-not-found;
//   - ERROR for what someone has to fix: a permanent tool-failed (an
//     unmapped error, a panic), tool-result-invalid,
//     tool-definition-invalid and duplicate-tool.
//
// A kind not listed is a WARN when retryable and an ERROR otherwise.
func DefaultLevel(info taxonomy.Info) zerolog.Level {
	switch info.Kind {
	case taxonomy.KindRefused, taxonomy.KindCancelled:
		return zerolog.InfoLevel
	case taxonomy.KindTimeout, taxonomy.KindCircuitOpen, taxonomy.KindRateLimited,
		taxonomy.KindRetryBudgetExhausted, taxonomy.KindRunLimitExceeded,
		taxonomy.KindNotPermitted, taxonomy.KindArgsInvalid, taxonomy.KindNotFound:
		return zerolog.WarnLevel
	case taxonomy.KindResultInvalid, taxonomy.KindDefinitionInvalid, taxonomy.KindDuplicateTool:
		return zerolog.ErrorLevel
	}
	if info.Retryable {
		return zerolog.WarnLevel
	}
	return zerolog.ErrorLevel
}

// New returns a middleware that logs one line per finished call to logger.
// See the package documentation for the fields and the levels. With a
// logger whose level is above ERROR, such as zerolog.Nop(), it returns each
// tool unchanged.
func New(logger zerolog.Logger, opts ...Option) toolmw.Middleware {
	cfg := config{success: zerolog.DebugLevel}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	cfg.clock = clock.Or(cfg.clock)
	return func(next toolmw.Tool) toolmw.Tool {
		if logger.GetLevel() > zerolog.ErrorLevel {
			return next // the layer writes nothing above ERROR
		}
		l := &layer{next: next, logger: logger, cfg: cfg}
		return l.call
	}
}

// layer is the per-tool state of New; it is read-only after New.
type layer struct {
	next   toolmw.Tool
	logger zerolog.Logger
	cfg    config
}

// errPanicked stands for the error of a call whose tool panicked through
// the layer; the panic itself goes on.
var errPanicked = taxonomy.Failure(taxonomy.CodeToolPanicked, "the tool panicked")

func (l *layer) call(ctx context.Context, args json.RawMessage) (res toolmw.Result, err error) {
	if zerolog.GlobalLevel() > zerolog.ErrorLevel {
		return l.next(ctx, args)
	}
	start := l.cfg.clock.Now()
	done := false
	defer func() {
		if !done {
			l.log(ctx, start, errPanicked)
		}
	}()
	res, err = l.next(ctx, args)
	done = true
	l.log(ctx, start, err)
	return res, err
}

// log writes the line of a finished call and, for an error, the detail line.
//
// Only the detail line, at DEBUG, carries text from the error; the line at
// the call's level carries identifiers and numbers only. TestSourceRule
// holds this file to that.
func (l *layer) log(ctx context.Context, start time.Time, err error) {
	c, known := toolmw.CallFrom(ctx) // after the call: the attempts made
	level := l.cfg.success
	var info taxonomy.Info
	if err != nil {
		info = taxonomy.InfoOf(err)
		level = l.levelOf(info)
	}
	if level == zerolog.Disabled {
		return
	}
	if e := l.logger.WithLevel(level); e != nil {
		e = e.Str("tool", c.Tool)
		if c.ID != "" {
			e = e.Str("call_id", c.ID)
		}
		e = e.Str("outcome", string(taxonomy.OutcomeOf(err)))
		if err != nil {
			e = e.Str("kind", string(info.Kind)).Str("code", info.Code).Bool("retryable", info.Retryable)
		}
		if known {
			e = e.Int("attempts", c.Attempt)
		}
		ms := float64(l.cfg.clock.Now().Sub(start)) / float64(time.Millisecond)
		e.Float64("duration_ms", ms).Msg(msgCall)
	}
	if err == nil {
		return
	}
	if d := l.logger.Debug(); d != nil {
		d = d.Str("tool", c.Tool).Str("call_id", c.ID).Str("code", info.Code).Str("error", err.Error())
		if te, ok := taxonomy.From(err); ok && te.Unwrap() != nil {
			d = d.Str("cause", te.Unwrap().Error())
		}
		d.Msg(msgDetail)
	}
}

func (l *layer) levelOf(info taxonomy.Info) zerolog.Level {
	if level, ok := l.cfg.levels[info.Kind]; ok {
		return level
	}
	return DefaultLevel(info)
}
