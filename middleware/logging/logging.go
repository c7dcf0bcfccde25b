package logging

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/toolmw/toolmw"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/internal/panicked"
	"github.com/toolmw/toolmw/middleware/internal/partinfo"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns a middleware that logs one line per finished call to a
// zerolog logger, and for a failure a DEBUG line with the error's scrubbed
// text. See the package documentation for the fields and the levels.
//
// With a logger whose level is above ERROR, such as zerolog.Nop(), it
// returns each tool unchanged; with zerolog's global level above ERROR a
// call costs one atomic load. Given an invalid option value it returns
// toolmw.Reject with the error [Validate] reports, so toolmw.Wrap fails at
// start-up; it never panics. The returned Middleware and the Tools it makes
// are safe for concurrent use, provided the logger's writer is, as zerolog
// requires.
func New(logger zerolog.Logger, opts ...Option) toolmw.Middleware {
	cfg := newConfig(opts)
	if cfg.err != nil {
		return toolmw.Reject(cfg.err)
	}
	return func(next toolmw.Tool) toolmw.Tool {
		if logger.GetLevel() > zerolog.ErrorLevel {
			return next // the layer writes nothing above ERROR
		}
		return newLayer(next, &zerologSink{logger: logger}, cfg)
	}
}

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

// The messages of the two lines the layer writes.
const (
	msgCall   = "tool call"              // one per finished call, at its level
	msgDetail = "tool call error detail" // the error's scrubbed text, at DEBUG only
)

// DefaultLevel is the level of the line of a call that failed with info:
//
//   - INFO for answers and the caller's own decisions: a refusal
//     (tool-refused), a cancellation (tool-cancelled), a call waiting for
//     a person (approval-pending) and a reviewer's no (approval-denied);
//   - WARN for what is expected to pass or is the model's or the policy's
//     doing: a retryable tool-failed, tool-timeout, circuit-open,
//     rate-limited, retry-budget-exhausted, run-limit-exceeded,
//     budget-exceeded, guardrail-blocked, tool-not-permitted,
//     tool-args-invalid and tool-not-found;
//   - ERROR for what someone has to fix: a permanent tool-failed (an
//     unmapped error, a panic), tool-result-invalid,
//     tool-definition-invalid and duplicate-tool.
//
// A kind not listed is a WARN when retryable and an ERROR otherwise. It is
// safe for concurrent use.
func DefaultLevel(info taxonomy.Info) slog.Level {
	switch info.Kind {
	case taxonomy.KindRefused, taxonomy.KindCancelled,
		taxonomy.KindApprovalPending, taxonomy.KindApprovalDenied:
		return slog.LevelInfo
	case taxonomy.KindTimeout, taxonomy.KindCircuitOpen, taxonomy.KindRateLimited,
		taxonomy.KindRetryBudgetExhausted, taxonomy.KindRunLimitExceeded,
		taxonomy.KindBudgetExceeded, taxonomy.KindGuardrailBlocked,
		taxonomy.KindNotPermitted, taxonomy.KindArgsInvalid, taxonomy.KindNotFound:
		return slog.LevelWarn
	case taxonomy.KindResultInvalid, taxonomy.KindDefinitionInvalid, taxonomy.KindDuplicateTool:
		return slog.LevelError
	}
	if info.Retryable {
		return slog.LevelWarn
	}
	return slog.LevelError
}

// A sink writes the layer's two lines to one logging library: zerologSink
// and slogSink. The layer decides what is written and at which level; a
// sink only spells it.
type sink interface {
	// silenced reports whether no line can be written now, so that the
	// call need not even be timed.
	silenced() bool
	// call writes the line of a finished call at level, when the logger is
	// enabled for it.
	call(ctx context.Context, level slog.Level, f callFields)
	// detail writes the detail line of a failed call at DEBUG, when the
	// logger is enabled for it; only then does it read t.
	detail(ctx context.Context, f callFields, t errText)
}

// callFields are what the line of a finished call says: identifiers and
// numbers, never text from an error. TestSourceRule holds every callFields
// literal to that.
type callFields struct {
	tool, callID string
	outcome      taxonomy.Outcome
	failed       bool
	kind         taxonomy.Kind
	code         string
	retryable    bool
	attempts     int
	known        bool   // whether attempts is known: the context carried a toolmw.Call
	fallback     string // what stood in for the result (toolmw.SetFallback), or ""
	cache        string // what a cache layer found (toolmw.SetCache), or ""
	degraded     string // the layer that fell back to local state (toolmw.SetDegraded), or ""
	parts        int    // a successful result's parts (toolmw.Result.AllParts), when it has Parts; else 0
	partInfo     string // the first partinfo.MaxListed of them described (partinfo.List), joined by "; "
	start        time.Time
	clock        clock.Clock
}

// end reads the clock: the time the call ended and its duration in
// milliseconds (fractional).
func (f *callFields) end() (time.Time, float64) {
	now := f.clock.Now()
	return now, float64(now.Sub(f.start)) / float64(time.Millisecond)
}

// errText is the text of a failed call's error, scrubbed as it is read. It
// is the only text the layer logs, on the DEBUG detail line only.
type errText struct {
	err      error
	scrubber *scrub.Scrubber
}

// Message returns the error's text, err.Error(), scrubbed.
func (t errText) Message() string { return t.scrubber.String(t.err.Error()) }

// Cause returns the scrubbed text of the typed error's cause, or "" when
// it has none.
func (t errText) Cause() string {
	if te, ok := taxonomy.From(t.err); ok && te.Unwrap() != nil {
		return t.scrubber.String(te.Unwrap().Error())
	}
	return ""
}

// layer is the per-tool state of New and NewSlog; it is read-only once
// made.
type layer struct {
	next toolmw.Tool
	out  sink
	cfg  config
}

func newLayer(next toolmw.Tool, out sink, cfg config) toolmw.Tool {
	l := &layer{next: next, out: out, cfg: cfg}
	return l.call
}

func (l *layer) call(ctx context.Context, args json.RawMessage) (res toolmw.Result, err error) {
	if l.out.silenced() {
		return l.next(ctx, args)
	}
	start := l.cfg.clock.Now()
	done := false
	defer func() {
		if !done {
			l.log(ctx, start, toolmw.Result{}, panicked.Err)
		}
	}()
	res, err = l.next(ctx, args)
	done = true
	l.log(ctx, start, res, err)
	return res, err
}

// log writes the line of a finished call and, for an error, the detail
// line.
//
// Only the detail line, at DEBUG, carries text from the error, scrubbed;
// the line at the call's level carries identifiers and numbers only.
// TestSourceRule holds this package's source to that.
func (l *layer) log(ctx context.Context, start time.Time, res toolmw.Result, err error) {
	c, known := toolmw.CallFrom(ctx) // after the call: the attempts made
	level := l.cfg.success
	var info taxonomy.Info
	if err != nil {
		info = taxonomy.InfoOf(err)
		level = l.levelOf(info)
	}
	if level == LevelOff {
		return
	}
	f := callFields{
		tool:      c.Tool,
		callID:    c.ID,
		outcome:   taxonomy.OutcomeOf(err),
		failed:    err != nil,
		kind:      info.Kind,
		code:      info.Code,
		retryable: info.Retryable,
		attempts:  c.Attempt,
		known:     known,
		fallback:  c.Fallback,
		cache:     c.Cache,
		degraded:  c.Degraded,
		start:     start,
		clock:     l.cfg.clock,
	}
	if err == nil && len(res.Parts()) > 0 {
		parts := res.AllParts()
		f.parts, f.partInfo = len(parts), strings.Join(partinfo.List(parts, partinfo.MaxListed), "; ")
	}
	l.out.call(ctx, level, f)
	if err != nil {
		l.out.detail(ctx, f, errText{err: err, scrubber: l.cfg.scrubber})
	}
}

func (l *layer) levelOf(info taxonomy.Info) slog.Level {
	if level, ok := l.cfg.levels[info.Kind]; ok {
		return level
	}
	return DefaultLevel(info)
}
