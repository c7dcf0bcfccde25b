package ratelimit

import (
	"math"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/internal/keyed"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/store"
)

// newLimiter returns a limiter of its own, full, published to package
// state under name ("" until its tool's first call names it).
func (c *config) newLimiter(name string) *limiter {
	return c.published(rate.NewLimiter(c.limit, c.burst), name)
}

// published returns the limiter of lim, published to package state.
func (c *config) published(lim *rate.Limiter, name string) *limiter {
	l := &limiter{config: c, lim: lim}
	if name != "" {
		l.name.Set(name)
	}
	state.Register(state.Default, l, publish)
	return l
}

// DefaultMaxKeys is how many keys a layer made with [WithKey] keeps.
const DefaultMaxKeys = keyed.DefaultMax

// An Option configures [New].
type Option func(*config)

type config struct {
	limit   rate.Limit
	burst   int
	maxWait time.Duration
	clock   clock.Clock
	sharing keyed.Sharing[*rate.Limiter]
	store   storeConfig
	err     error // the first value the layer cannot use
}

func newConfig(limit rate.Limit, burst int, opts []Option) *config {
	c := &config{maxWait: rate.InfDuration, clock: clock.System, store: storeConfig{cfg: store.Config{Timeout: store.DefaultTimeout}}}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.sharing.Shared != nil {
		c.checkStore()
		return c // limit and burst are not used
	}
	c.limit, c.burst = limit, max(burst, 1)
	if limit < 0 || math.IsNaN(float64(limit)) || burst < 0 {
		// The arguments come before the options: theirs is the first error.
		c.err = invalid("New(%v, %d): the limit and the burst must not be negative", limit, burst)
	}
	c.checkStore()
	return c
}

// reject records the first option value the layer cannot use.
func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = invalid(format, args...)
	}
}

// Validate reports the first value New(limit, burst, opts...) cannot use,
// as a tool-definition-invalid/option_invalid error, or nil: the error
// that toolmw.Wrap reports for the middleware New makes of them. It is safe
// for concurrent use.
func Validate(limit rate.Limit, burst int, opts ...Option) error {
	return newConfig(limit, burst, opts).err
}

// WithReject makes calls never wait: without a free token a call fails at
// once with rate-limited and the wait it would have needed as RetryAfter.
func WithReject() Option {
	return func(c *config) { c.maxWait = 0 }
}

// WithMaxWait caps how long a call waits for a token; a longer wait fails at
// once as with [WithReject]. By default, and with 0, only the context's
// deadline bounds the wait. A negative d is invalid.
func WithMaxWait(d time.Duration) Option {
	return func(c *config) {
		switch {
		case d < 0:
			c.reject("WithMaxWait(%v): the cap must not be negative", d)
		case d == 0:
			c.maxWait = rate.InfDuration
		default:
			c.maxWait = d
		}
	}
}

// WithClock sets the clock for the limiter and the wait (nil means
// clock.System).
func WithClock(clk clock.Clock) Option {
	return func(c *config) { c.clock = clock.Or(clk) }
}

// WithShared makes New use lim for every tool it wraps. It replaces WithKey;
// nil means one limiter per tool.
func WithShared(lim *rate.Limiter) Option {
	return func(c *config) { c.sharing.Share(lim) }
}

// WithKey makes New keep one limiter per key, key(call), shared by every
// tool it wraps. Limiters are made on first use and kept, up to
// [WithMaxKeys]; keys should be few (an upstream's name, not a call id). It
// replaces WithShared; nil means one limiter per tool. key is called from
// many goroutines at once.
func WithKey(key func(toolmw.Call) string) Option {
	return func(c *config) { c.sharing.ByKey(key) }
}

// WithMaxKeys bounds how many limiters [WithKey] keeps (0 means
// [DefaultMaxKeys]). A new key beyond the bound drops the key used least
// recently, and its limiter with it: the key starts with a full burst on its
// next use. A negative n is invalid.
func WithMaxKeys(n int) Option {
	return func(c *config) { c.sharing.Bound(n, c.reject) }
}
