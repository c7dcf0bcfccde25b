package hedge

import (
	"fmt"
	"time"

	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/taxonomy"
)

// Defaults.
const (
	DefaultPercentile = 0.95 // the latency percentile the layer hedges at
	DefaultMaxLosers  = 100  // losers still running, per tool, past which calls are not hedged
)

// Option configures the hedge layer.
type Option func(*config)

type config struct {
	delay      time.Duration
	percentile float64
	budget     *budget.Retry
	onLate     func(Late)
	maxLosers  int
	clock      clock.Clock
	err        error
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("hedge: "+format, args...))
	}
}

// WithDelay hedges every idempotent call that has not returned after d. 0
// means the default, a delay at [WithPercentile] of the observed latency; a
// negative d is invalid.
func WithDelay(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.reject("WithDelay(%v): the delay must not be negative", d)
			return
		}
		c.delay = d
	}
}

// WithPercentile sets the percentile of the observed latency at which a
// call is hedged (default [DefaultPercentile]); not used with [WithDelay].
// 0 means the default; a value outside (0, 1) is invalid.
func WithPercentile(p float64) Option {
	return func(c *config) {
		if !(p >= 0 && p < 1) {
			c.reject("WithPercentile(%v): the percentile must be within (0, 1)", p)
			return
		}
		c.percentile = p
	}
}

// WithBudget makes hedges withdraw from b, typically the retry layer's
// budget, which that layer deposits into. nil means the default, a budget
// per tool that each call deposits into.
func WithBudget(b *budget.Retry) Option {
	return func(c *config) { c.budget = b }
}

// WithOnLate sets a function called with each loser's outcome, on the
// loser's goroutine. nil means the default: losers are discarded.
func WithOnLate(f func(Late)) Option {
	return func(c *config) { c.onLate = f }
}

// WithMaxLosers bounds the losers of one tool still running (each holds a
// goroutine); past it, calls are not hedged. 0 means [DefaultMaxLosers]; a
// negative n is invalid.
func WithMaxLosers(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.reject("WithMaxLosers(%d): the bound must not be negative", n)
			return
		}
		c.maxLosers = n
	}
}

// WithClock sets the clock the layer reads and waits on: the hedge delay,
// the latency it observes and how late a loser came (nil means
// clock.System). Tests pass a *clock.Fake.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) { cfg.clock = clock.Or(c) }
}

func newConfig(opts []Option) config {
	c := config{clock: clock.System}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.percentile == 0 {
		c.percentile = DefaultPercentile
	}
	if c.maxLosers == 0 {
		c.maxLosers = DefaultMaxLosers
	}
	return c
}

// Validate reports the first invalid option value as a
// tool-definition-invalid/option_invalid error, or nil.
func Validate(opts ...Option) error { return newConfig(opts).err }
