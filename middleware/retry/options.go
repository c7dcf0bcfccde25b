package retry

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/taxonomy"
)

// Defaults.
const (
	DefaultMaxAttempts = 3                      // attempts per call, the first included
	DefaultBaseDelay   = 100 * time.Millisecond // the backoff before the first retry, at most
	DefaultMaxDelay    = 5 * time.Second        // the cap of the backoff
	DefaultMaxWait     = 30 * time.Second       // the longest single wait, RetryAfter included
)

// Option configures the retry layer.
type Option func(*config)

type config struct {
	maxAttempts int
	base, cap   time.Duration
	maxWait     time.Duration
	clock       clock.Clock
	rand        func() float64
	budget      *budget.Retry
	noBudget    bool
	err         error
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("retry: "+format, args...))
	}
}

// WithMaxAttempts sets how many attempts a call may make, the first
// included (default [DefaultMaxAttempts]); 1 means no retry while still
// drawing on the run budget. 0 means the default; a negative value is
// invalid.
func WithMaxAttempts(n int) Option {
	return func(c *config) {
		switch {
		case n < 0:
			c.reject("WithMaxAttempts(%d): a call makes at least 1 attempt", n)
		case n > 0:
			c.maxAttempts = n
		}
	}
}

// WithBackoff sets the full-jitter exponential backoff: before retry k (from
// 1) the layer waits a uniformly random duration in
// [0, min(cap, base·2^(k-1))), or the error's RetryAfter if that is longer
// (defaults [DefaultBaseDelay] and [DefaultMaxDelay]). A base of 0 means no
// backoff of its own. Negative durations or a cap below the base are
// invalid.
func WithBackoff(base, cap time.Duration) Option {
	return func(c *config) {
		if base < 0 || cap < base {
			c.reject("WithBackoff(%v, %v): want 0 <= base <= cap", base, cap)
			return
		}
		c.base, c.cap = base, cap
	}
}

// WithMaxWait caps any one wait (default [DefaultMaxWait]). A RetryAfter
// longer than the cap ends the call at once with code retry_wait_too_long;
// the layer's own backoff is held to the cap. 0 means the default; a
// negative value is invalid.
func WithMaxWait(d time.Duration) Option {
	return func(c *config) {
		switch {
		case d < 0:
			c.reject("WithMaxWait(%v): the cap must not be negative", d)
		case d > 0:
			c.maxWait = d
		}
	}
}

// WithClock sets the clock the layer reads and waits on (default
// clock.System). Tests pass a *clock.Fake. A nil clock means the default.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) {
		if c != nil {
			cfg.clock = c
		}
	}
}

// WithRand sets the random source of the jitter: a function returning a
// value in [0, 1), called from many goroutines at once, so it must be safe
// for concurrent use (a *rand.Rand's Float64 is not, unless guarded). The
// default is math/rand/v2's Float64. Values outside [0, 1) are clamped. A
// nil function means the default.
func WithRand(f func() float64) Option {
	return func(c *config) {
		if f != nil {
			c.rand = f
		}
	}
}

// WithBudget makes every tool the layer wraps draw on b, a retry token
// budget shared, typically, by the tools of one dependency or by a whole
// process: [budget.NewAdaptive] for the default algorithm,
// [budget.NewRetry] for the fixed-ratio one. A nil b means the default, an
// adaptive budget per tool.
func WithBudget(b *budget.Retry) Option {
	return func(c *config) {
		c.budget, c.noBudget = b, false
	}
}

// WithoutBudget retries without a retry token budget: only the attempt cap,
// the deadline and the run budget bound the retries.
func WithoutBudget() Option {
	return func(c *config) { c.budget, c.noBudget = nil, true }
}

func newConfig(opts []Option) config {
	c := config{
		maxAttempts: DefaultMaxAttempts,
		base:        DefaultBaseDelay,
		cap:         DefaultMaxDelay,
		maxWait:     DefaultMaxWait,
		clock:       clock.System,
		rand:        rand.Float64,
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// Validate reports the first invalid option value, as a
// tool-definition-invalid error with code option_invalid, or nil.
func Validate(opts ...Option) error {
	return newConfig(opts).err
}
