package breaker

import (
	"fmt"
	"math"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/internal/keyed"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// The defaults. An option given zero (or nil) keeps the default.
const (
	// DefaultConsecutiveFailures failures in a row open a breaker.
	DefaultConsecutiveFailures = 5
	// DefaultMinRequests is how many counted calls [WithFailureRatio]
	// needs before it may open a breaker.
	DefaultMinRequests = 10
	// DefaultOpenFor is how long an open breaker fails calls fast before it
	// lets a probe through.
	DefaultOpenFor = 30 * time.Second
	// DefaultProbes is how many calls a half-open breaker lets through; as
	// many successes in a row close it.
	DefaultProbes = 1
	// DefaultMaxKeys is how many keys a breaker made with [WithKey] keeps.
	DefaultMaxKeys = keyed.DefaultMax
)

// An Option configures [New] or [NewBreaker].
type Option func(*config)

type config struct {
	failures    uint32  // consecutive failures that trip, or 0 in ratio mode
	ratio       float64 // ratio mode: the failure ratio that trips
	minRequests uint32  // ratio mode: the least counted outcomes before it may trip
	interval    time.Duration
	openFor     time.Duration
	probes      uint32
	clock       clock.Clock
	onChange    func(StateChangeEvent)
	isFailure   func(error) bool
	sharing     keyed.Sharing[*Breaker]
	store       storeConfig
	err         error // the first option given a value it cannot use
}

func newConfig(opts []Option) *config {
	c := &config{
		failures:  DefaultConsecutiveFailures,
		openFor:   DefaultOpenFor,
		probes:    DefaultProbes,
		clock:     clock.System,
		isFailure: IsFailure,
		store:     storeConfig{period: DefaultCachePeriod, cfg: store.Config{Timeout: store.DefaultTimeout}},
	}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	c.checkStore()
	return c
}

// reject records the first option value the breaker cannot use.
func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("breaker: "+format, args...))
	}
}

// Validate reports the first option given a value it cannot use, as a
// tool-definition-invalid/option_invalid error, or nil: the error that
// toolmw.Wrap reports for a middleware [New] made with the same options. It
// is safe for concurrent use.
func Validate(opts ...Option) error {
	c := newConfig(opts)
	if c.err == nil && c.sharing.Shared != nil {
		return c.sharing.Shared.err // a shared Breaker made with a bad option
	}
	return c.err
}

// tripRule returns b's trip rule. In consecutive mode a run of failures
// opens the breaker only when it is not a fluke: at least 3 in 4 of the last
// 20 counted calls (or of all, while there are fewer) failed. A dependency
// that is down fails them all and opens it after the run; one that fails
// some calls independently (20% of them, say) makes an occasional run of 5
// that this rule does not mistake for an outage.
func (c *config) tripRule(b *Breaker) func(gobreaker.Counts) bool {
	if c.failures > 0 {
		n := c.failures
		return func(cs gobreaker.Counts) bool {
			if cs.ConsecutiveFailures < n {
				return false
			}
			failed, total := b.recentFailures()
			return 4*failed >= 3*total
		}
	}
	ratio, least := c.ratio, c.minRequests
	return func(cs gobreaker.Counts) bool {
		total := cs.TotalSuccesses + cs.TotalFailures
		return total >= least && float64(cs.TotalFailures) >= ratio*float64(total)
	}
}

// count returns n as a uint32 count, with 0 meaning def, or false when n is
// negative or too large.
func count(n int, def uint32) (uint32, bool) {
	if n < 0 || int64(n) > math.MaxUint32 {
		return 0, false
	}
	if n == 0 {
		return def, true
	}
	return uint32(n), true
}

// WithConsecutiveFailures opens a breaker after n failures in a row (0 means
// [DefaultConsecutiveFailures]), provided at least 3 in 4 of the last 20
// counted calls failed, so that independent faults amid healthy calls do not
// open it. It replaces WithFailureRatio. A negative n is invalid.
func WithConsecutiveFailures(n int) Option {
	return func(c *config) {
		if u, ok := count(n, DefaultConsecutiveFailures); ok {
			c.failures, c.ratio, c.minRequests = u, 0, 0
		} else {
			c.reject("WithConsecutiveFailures(%d): n must not be negative", n)
		}
	}
}

// WithFailureRatio opens a breaker when at least minRequests calls were
// counted (successes and failures; neutral outcomes are not; 0 means
// [DefaultMinRequests]) and the share of failures among them is at least
// ratio, in (0, 1]. Counts are kept since the breaker last changed state;
// use [WithInterval] to age them out. It replaces WithConsecutiveFailures. A
// ratio of 0 leaves the trip rule as it is; a ratio outside [0, 1] or a
// negative minRequests is invalid.
func WithFailureRatio(ratio float64, minRequests int) Option {
	return func(c *config) {
		least, ok := count(minRequests, DefaultMinRequests)
		switch {
		case !(ratio >= 0 && ratio <= 1) || !ok:
			c.reject("WithFailureRatio(%v, %d): want 0 <= ratio <= 1 and minRequests >= 0", ratio, minRequests)
		case ratio > 0:
			c.failures, c.ratio, c.minRequests = 0, ratio, least
		}
	}
}

// WithInterval clears a closed breaker's counts every d. The default, 0,
// keeps them until the state changes. A negative d is invalid.
func WithInterval(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.reject("WithInterval(%v): the interval must not be negative", d)
			return
		}
		c.interval = d
	}
}

// WithOpenFor sets how long an open breaker fails calls fast before it lets
// a probe through (0 means [DefaultOpenFor]). A negative d is invalid.
func WithOpenFor(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.reject("WithOpenFor(%v): the open period must not be negative", d)
			return
		}
		if d == 0 {
			d = DefaultOpenFor
		}
		c.openFor = d
	}
}

// WithProbes sets how many calls a half-open breaker lets through at once (0
// means [DefaultProbes]). That many successes in a row close it; one failure
// opens it again. A negative n is invalid.
func WithProbes(n int) Option {
	return func(c *config) {
		if u, ok := count(n, DefaultProbes); ok {
			c.probes = u
		} else {
			c.reject("WithProbes(%d): n must not be negative", n)
		}
	}
}

// WithClock sets the clock that stamps state changes, records when a breaker
// opened and computes RetryAfter (nil means clock.System). The open period
// itself runs on package time; see the package documentation.
func WithClock(clk clock.Clock) Option {
	return func(c *config) { c.clock = clock.Or(clk) }
}

// WithOnStateChange calls f with every state change of a breaker, in order
// (nil: no callback). f never runs under a lock and may call the breaker;
// breakers shared between goroutines may call it from any of them, one
// change at a time.
func WithOnStateChange(f func(StateChangeEvent)) Option {
	return func(c *config) { c.onChange = f }
}

// WithIsFailure replaces [IsFailure], the rule of which errors count against
// a breaker; an error f does not count is neutral. Cancellation, and an
// error returned once the call's context is done, stay neutral whatever f
// says. nil means IsFailure. f is called from many goroutines at once.
func WithIsFailure(f func(err error) bool) Option {
	return func(c *config) {
		if f == nil {
			f = IsFailure
		}
		c.isFailure = f
	}
}

// WithShared makes New use b for every tool it wraps: failures of any of
// them open it for all (one breaker per upstream). The other options of New
// then have no effect; b has its own. It replaces WithKey; nil means one
// breaker per tool.
func WithShared(b *Breaker) Option {
	return func(c *config) { c.sharing.Share(b) }
}

// WithKey makes New keep one breaker per key, key(call), shared by every
// tool it wraps: tools behind one upstream share its breaker. Breakers are
// made on first use and kept, up to [WithMaxKeys]; keys should be few (an
// upstream's name, not a call id). It replaces WithShared; nil means one
// breaker per tool. key is called from many goroutines at once.
func WithKey(key func(toolmw.Call) string) Option {
	return func(c *config) { c.sharing.ByKey(key) }
}

// WithMaxKeys bounds how many breakers [WithKey] keeps (0 means
// [DefaultMaxKeys]). A new key beyond the bound drops the key used least
// recently, and with it its breaker's state: the key starts closed on its
// next use. A negative n is invalid.
func WithMaxKeys(n int) Option {
	return func(c *config) { c.sharing.Bound(n, c.reject) }
}
