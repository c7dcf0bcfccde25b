package breaker

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/taxonomy"
)

// The defaults.
const (
	// DefaultConsecutiveFailures failures in a row open a breaker.
	DefaultConsecutiveFailures = 5
	// DefaultOpenFor is how long an open breaker fails calls fast before it
	// lets a probe through.
	DefaultOpenFor = 30 * time.Second
	// DefaultProbes is how many calls a half-open breaker lets through; as
	// many successes in a row close it.
	DefaultProbes = 1
)

// New returns the circuit-breaking middleware. By default each tool it wraps
// gets its own breaker, made when it wraps the tool; [WithShared] and
// [WithKey] share breakers between tools. See the package documentation for
// the defaults and for what counts as a failure.
func New(opts ...Option) toolmw.Middleware {
	c := newConfig(opts)
	switch {
	case c.shared != nil:
		b := c.shared
		return func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				return b.call(ctx, next, args)
			}
		}
	case c.key != nil:
		k := &keyed{config: c, breakers: make(map[string]*Breaker)}
		return func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				call, _ := toolmw.CallFrom(ctx)
				return k.get(c.key(call)).call(ctx, next, args)
			}
		}
	}
	return func(next toolmw.Tool) toolmw.Tool {
		b := newBreaker(c)
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			if b.name.Load() == nil {
				call, _ := toolmw.CallFrom(ctx)
				b.name.CompareAndSwap(nil, &call.Tool)
			}
			return b.call(ctx, next, args)
		}
	}
}

// keyed holds the breakers of a middleware made with WithKey, shared by
// every tool it wraps.
type keyed struct {
	*config
	mu       sync.RWMutex
	breakers map[string]*Breaker
}

func (k *keyed) get(key string) *Breaker {
	k.mu.RLock()
	b := k.breakers[key]
	k.mu.RUnlock()
	if b != nil {
		return b
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if b = k.breakers[key]; b == nil {
		b = newBreaker(k.config)
		name := key // a copy, so that key itself stays on the stack
		b.name.Store(&name)
		k.breakers[key] = b
	}
	return b
}

// An Option configures [New] or [NewBreaker].
//
// Options are applied once, by the constructor they are passed to; an Option may be reused and shared between goroutines.
type Option func(*config)

type config struct {
	failures    uint32  // consecutive failures that trip, or 0 in ratio mode
	ratio       float64 // ratio mode: the failure ratio that trips
	minRequests uint32  // ratio mode: the least counted outcomes before it may trip
	interval    time.Duration
	openFor     time.Duration
	probes      uint32
	clock       clock.Clock
	onChange    func(name string, from, to State)
	isFailure   func(error) bool
	shared      *Breaker
	key         func(toolmw.Call) string
	invalid     []string // the options given a value they cannot use
}

func newConfig(opts []Option) *config {
	c := &config{
		failures:  DefaultConsecutiveFailures,
		openFor:   DefaultOpenFor,
		probes:    DefaultProbes,
		clock:     clock.System,
		isFailure: IsFailure,
	}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	return c
}

func (c *config) reject(why string) { c.invalid = append(c.invalid, why) }

// readyToTrip returns b's trip rule. In consecutive mode a run of failures
// opens the breaker only when it is not a fluke: at least 3 in 4 of the last
// 20 counted calls (or of all, while there are fewer) failed. A dependency
// that is down fails them all and opens it after the run; one that fails
// some calls independently (20% of them, say) makes an occasional run of 5
// that this rule does not mistake for an outage.
func (c *config) readyToTrip(b *Breaker) func(Counts) bool {
	if c.failures > 0 {
		n := c.failures
		return func(cs Counts) bool {
			if cs.ConsecutiveFailures < n {
				return false
			}
			failed, total := b.recentFailures()
			return 4*failed >= 3*total
		}
	}
	ratio, least := c.ratio, c.minRequests
	return func(cs Counts) bool {
		total := cs.TotalSuccesses + cs.TotalFailures
		return total >= least && float64(cs.TotalFailures) >= ratio*float64(total)
	}
}

// Validate reports the options given a value they cannot use, as a
// tool-definition-invalid/option_invalid error, or nil. [New] and
// [NewBreaker] ignore such options and keep the defaults.
func Validate(opts ...Option) error {
	c := newConfig(opts)
	if len(c.invalid) == 0 {
		return nil
	}
	return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
		"breaker: "+strings.Join(c.invalid, "; "))
}

// WithConsecutiveFailures opens a breaker after n failures in a row (n >= 1;
// the default is [DefaultConsecutiveFailures]), provided at least 3 in 4 of
// the last 20 counted calls failed, so that independent faults amid healthy
// calls do not open it. It replaces WithFailureRatio.
func WithConsecutiveFailures(n int) Option {
	return func(c *config) {
		if n < 1 || int64(n) > math.MaxUint32 {
			c.reject("WithConsecutiveFailures needs n >= 1")
			return
		}
		c.failures, c.ratio, c.minRequests = uint32(n), 0, 0
	}
}

// WithFailureRatio opens a breaker when at least minRequests calls were
// counted (successes and failures; neutral outcomes are not) and the share
// of failures among them is at least ratio, in (0, 1]. Counts are kept since
// the breaker last changed state; use [WithInterval] to age them out. It
// replaces WithConsecutiveFailures.
func WithFailureRatio(ratio float64, minRequests int) Option {
	return func(c *config) {
		if !(ratio > 0 && ratio <= 1) || minRequests < 1 || int64(minRequests) > math.MaxUint32 {
			c.reject("WithFailureRatio needs 0 < ratio <= 1 and minRequests >= 1")
			return
		}
		c.failures, c.ratio, c.minRequests = 0, ratio, uint32(minRequests)
	}
}

// WithInterval clears a closed breaker's counts every d (measured by the
// real clock). The default, 0, keeps them until the state changes.
func WithInterval(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.reject("WithInterval needs a duration >= 0")
			return
		}
		c.interval = d
	}
}

// WithOpenFor sets how long an open breaker fails calls fast before it lets
// a probe through (d > 0; the default is [DefaultOpenFor]).
func WithOpenFor(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.reject("WithOpenFor needs a positive duration")
			return
		}
		c.openFor = d
	}
}

// WithProbes sets how many calls a half-open breaker lets through at once
// (n >= 1; the default is [DefaultProbes]). That many successes in a row
// close it; one failure opens it again.
func WithProbes(n int) Option {
	return func(c *config) {
		if n < 1 || int64(n) > math.MaxUint32 {
			c.reject("WithProbes needs n >= 1")
			return
		}
		c.probes = uint32(n)
	}
}

// WithClock sets the clock that records when a breaker opened and computes
// RetryAfter. The default is clock.System; nil means clock.System.
func WithClock(clk clock.Clock) Option {
	return func(c *config) { c.clock = clock.Or(clk) }
}

// WithOnStateChange calls f on every state change, with the breaker's name
// (see [Breaker.Name]). f never runs under a lock and may call the breaker.
func WithOnStateChange(f func(name string, from, to State)) Option {
	return func(c *config) { c.onChange = f }
}

// WithIsFailure replaces [IsFailure], the rule of which errors count against
// a breaker; an error f does not count is neutral. Cancellation, and an error
// returned once the call's context is done, stay neutral whatever f says.
func WithIsFailure(f func(err error) bool) Option {
	return func(c *config) {
		if f == nil {
			c.reject("WithIsFailure needs a function")
			return
		}
		c.isFailure = f
	}
}

// WithShared makes New use b for every tool it wraps: failures of any of them
// open it for all (one breaker per upstream). The other options of New then
// have no effect; b has its own. It replaces WithKey.
func WithShared(b *Breaker) Option {
	return func(c *config) {
		if b == nil {
			c.reject("WithShared needs a breaker")
			return
		}
		c.shared, c.key = b, nil
	}
}

// WithKey makes New keep one breaker per key, key(call), shared by every tool
// it wraps: tools behind one upstream share its breaker. The breakers are
// made on first use and kept, so keys should be few (an upstream's name, not
// a call id). It replaces WithShared.
func WithKey(key func(toolmw.Call) string) Option {
	return func(c *config) {
		if key == nil {
			c.reject("WithKey needs a function")
			return
		}
		c.key, c.shared = key, nil
	}
}
