package logging

import (
	"fmt"
	"log/slog"
	"math"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
)

// LevelOff, given as a level, writes no line: WithSuccessLevel(LevelOff)
// logs no successes, WithLevel(kind, LevelOff) nothing for that kind, not
// even the detail line. It is above every level a logger can be set to.
const LevelOff slog.Level = math.MaxInt

// Option configures [New] and [NewSlog]; the same options serve both.
type Option func(*config)

type config struct {
	success  slog.Level
	levels   map[taxonomy.Kind]slog.Level
	clock    clock.Clock
	scrubber *scrub.Scrubber
	err      error // the first option value rejected
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("logging: "+format, args...))
	}
}

// WithSuccessLevel sets the level of the line of a successful call:
// slog.LevelDebug by default. Any level up to slog.LevelInfo may be given
// (below DEBUG is zerolog's TRACE), or [LevelOff] to log no successes. A
// level above INFO is invalid, since a success is never a warning (see
// [Validate]).
func WithSuccessLevel(level slog.Level) Option {
	return func(c *config) {
		if level != LevelOff && level > slog.LevelInfo {
			c.reject("WithSuccessLevel(%v): a success is logged at INFO or below, or not at all (LevelOff)", level)
			return
		}
		c.success = level
	}
}

// WithLevel sets the level of the line of a call that failed with an error
// of the given kind, in place of [DefaultLevel]'s. Any level up to
// slog.LevelError may be given, or [LevelOff] to log no line for that kind,
// not even the detail line. A level above ERROR (a line never stops the
// program) or a malformed kind is invalid (see [Validate]).
func WithLevel(kind taxonomy.Kind, level slog.Level) Option {
	return func(c *config) {
		if !taxonomy.ValidKind(kind) {
			c.reject("WithLevel(%q, %v): not a kind", kind, level)
			return
		}
		if level != LevelOff && level > slog.LevelError {
			c.reject("WithLevel(%s, %v): a failure is logged at ERROR or below, or not at all (LevelOff)", kind, level)
			return
		}
		if c.levels == nil {
			c.levels = map[taxonomy.Kind]slog.Level{}
		}
		c.levels[kind] = level
	}
}

// WithClock sets the clock that times calls and, with slog, stamps the
// records; nil means the default, clock.System. The clock is read from
// many goroutines; clock.System and a *clock.Fake are safe for that.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) { cfg.clock = c }
}

// WithScrubber sets the scrubber of the text on the DEBUG detail line; nil
// means the default, scrub.Default(). The scrubber is used from many
// goroutines; a *scrub.Scrubber is safe for that.
func WithScrubber(s *scrub.Scrubber) Option {
	return func(c *config) { c.scrubber = s }
}

func newConfig(opts []Option) config {
	c := config{success: slog.LevelDebug}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	c.clock = clock.Or(c.clock)
	if c.scrubber == nil {
		c.scrubber = scrub.Default()
	}
	return c
}

// Validate reports the first invalid option value, as a
// tool-definition-invalid error with code option_invalid, or nil: the error
// with which [New] and [NewSlog] return toolmw.Reject, so that toolmw.Wrap
// reports it at start-up. A nil Option, a nil clock and a nil scrubber are
// valid: they mean the defaults. It is safe for concurrent use.
func Validate(opts ...Option) error {
	return newConfig(opts).err
}
