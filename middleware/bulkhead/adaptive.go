package bulkhead

import (
	"context"
	"errors"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/taxonomy"
)

// Adaptive is the rule of a pool whose limit follows the upstream's
// latency (see [WithAdaptive]).
type Adaptive struct {
	Min    int           // the least the limit falls to; at least 1
	Max    int           // the most it grows to; at least Min
	Target time.Duration // a call slower than this is a sign of overload; above 0
}

// The rule's constants: a decrease multiplies the limit by decreaseFactor
// (and takes at least one slot away).
const decreaseFactor = 0.9

// WithAdaptive makes the pool's limit adaptive, by additive increase and
// multiplicative decrease (AIMD) on the latency of the calls it lets run:
//
//   - it starts at the pool's n (New's or NewPool's), held to [Min, Max];
//   - a call that took longer than Target, or timed out (tool-timeout, or
//     an error matching context.DeadlineExceeded), or that its upstream
//     rate-limited (rate-limited), is a sign of overload: the limit falls
//     to 0.9 × itself, at least one slot less, not below Min — at most once
//     per limit's worth of finished calls, so that the slow calls of one
//     burst, in flight together, count as one sign;
//   - every limit's worth of calls in a row without such a sign raises the
//     limit by one, up to Max: about one slot per round of the pool;
//   - a cancelled call (context.Canceled) says nothing of the upstream and
//     counts for neither.
//
// When the limit falls below the calls running, no call is stopped: the
// slots they free are not given on until fewer run than the limit. When it
// rises, waiting calls get the new slots at once, oldest first.
//
// Latency is read from the clock of [WithClock]. A Min below 1, a Max below
// Min or a Target not above 0 is invalid.
func WithAdaptive(a Adaptive) Option {
	return func(c *config) {
		switch {
		case a.Min < 1:
			c.reject("WithAdaptive: Min %d: the limit is at least 1", a.Min)
		case a.Max < a.Min:
			c.reject("WithAdaptive: Max %d is below Min %d", a.Max, a.Min)
		case a.Target <= 0:
			c.reject("WithAdaptive: Target %v: the target latency must be above 0", a.Target)
		default:
			c.adaptive = &a
		}
	}
}

// WithClock sets the clock an adaptive pool measures latency with (nil means
// clock.System). Without [WithAdaptive] it has no effect.
func WithClock(clk clock.Clock) Option {
	return func(c *config) { c.clock = clock.Or(clk) }
}

// aimd is the state of an adaptive pool's rule; guarded by the pool's lock.
type aimd struct {
	Adaptive
	good  int // calls without a sign of overload since the last change
	since int // calls finished since the last decrease
}

// overloaded reports whether a call that took latency and returned err is a
// sign of overload, and whether it counts at all.
func (a *aimd) overloaded(latency time.Duration, err error) (overload, counts bool) {
	if errors.Is(err, context.Canceled) {
		return false, false
	}
	if latency > a.Target || errors.Is(err, context.DeadlineExceeded) {
		return true, true
	}
	if te, ok := taxonomy.From(err); ok {
		switch te.Kind() {
		case taxonomy.KindTimeout, taxonomy.KindRateLimited:
			return true, true
		}
	}
	return false, true
}

// finish records a finished call under the pool's lock and moves the
// limit by the rule; the caller then releases its slot.
func (p *Pool) finish(latency time.Duration, err error) {
	a := p.adaptive
	overload, counts := a.overloaded(latency, err)
	if !counts {
		return
	}
	a.since++
	if overload {
		a.good = 0
		if a.since >= p.limit {
			p.limit = max(a.Min, min(p.limit-1, int(float64(p.limit)*decreaseFactor)))
			a.since = 0
		}
		return
	}
	a.good++
	if a.good >= p.limit && p.limit < a.Max {
		p.limit++
		a.good = 0
	}
}
