package ratelimit

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the rate-limiting middleware: at most limit calls a second on
// average, in bursts of at most burst, per tool unless [WithShared] or
// [WithKey] say otherwise. With WithShared, limit and burst are not used:
// the shared limiter has its own.
func New(limit rate.Limit, burst int, opts ...Option) toolmw.Middleware {
	c := newConfig(limit, burst, opts)
	switch {
	case c.shared != nil:
		l := &limiter{config: c, lim: c.shared}
		return func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				return l.call(ctx, next, args)
			}
		}
	case c.limit == rate.Inf:
		return func(next toolmw.Tool) toolmw.Tool { return next }
	case c.key != nil:
		k := &keyed{config: c, limiters: make(map[string]*limiter)}
		return func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				call, _ := toolmw.CallFrom(ctx)
				return k.get(c.key(call)).call(ctx, next, args)
			}
		}
	}
	return func(next toolmw.Tool) toolmw.Tool {
		l := &limiter{config: c, lim: rate.NewLimiter(c.limit, c.burst)}
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			return l.call(ctx, next, args)
		}
	}
}

// limiter is one rate.Limiter and the layer's settings.
type limiter struct {
	*config
	lim *rate.Limiter
}

// call takes a token, waiting for it when allowed, and runs next.
func (l *limiter) call(ctx context.Context, next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	now := l.clock.Now()
	r := l.lim.ReserveN(now, 1)
	if !r.OK() {
		return toolmw.Result{}, errNever
	}
	if d := r.DelayFrom(now); d > 0 {
		if err := l.wait(ctx, r, now, d); err != nil {
			return toolmw.Result{}, err
		}
	}
	return next(ctx, args)
}

// wait waits d for the reservation r made at now, or gives it back and
// returns why not.
func (l *limiter) wait(ctx context.Context, r *rate.Reservation, now time.Time, d time.Duration) error {
	if d == rate.InfDuration {
		r.CancelAt(now)
		return errNever
	}
	if deadline, ok := ctx.Deadline(); d > l.maxWait || ok && now.Add(d).After(deadline) {
		r.CancelAt(now)
		return errLimited.WithRetryAfter(d)
	}
	t := l.clock.NewTimer(d)
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		t.Stop()
		r.CancelAt(l.clock.Now())
		if err := ctx.Err(); err != context.DeadlineExceeded {
			return err
		}
		return errDeadline
	}
}

var (
	// errDeadline: the caller's deadline passed during the wait (the clock
	// and the context's timer disagreed about when it would).
	errDeadline = taxonomy.Timeout(taxonomy.CodeDeadlineExceeded, "the caller's deadline passed", false).
			WithCause(context.DeadlineExceeded)
	errLimited = taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeRateLimited,
		"the tool's rate limit is reached; try again later")
	errNever = taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeRateLimited,
		"the tool's rate limit allows no more calls").WithRetryable(false)
)

// keyed holds the limiters of a middleware made with WithKey, shared by
// every tool it wraps.
type keyed struct {
	*config
	mu       sync.RWMutex
	limiters map[string]*limiter
}

func (k *keyed) get(key string) *limiter {
	k.mu.RLock()
	l := k.limiters[key]
	k.mu.RUnlock()
	if l != nil {
		return l
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if l = k.limiters[key]; l == nil {
		l = &limiter{config: k.config, lim: rate.NewLimiter(k.limit, k.burst)}
		k.limiters[key] = l
	}
	return l
}

// An Option configures [New].
//
// Options are applied once, by the constructor they are passed to; an Option may be reused and shared between goroutines.
type Option func(*config)

type config struct {
	limit   rate.Limit
	burst   int
	maxWait time.Duration
	clock   clock.Clock
	shared  *rate.Limiter
	key     func(toolmw.Call) string
	invalid []string // what was given a value it cannot use
}

func newConfig(limit rate.Limit, burst int, opts []Option) *config {
	c := &config{limit: limit, burst: burst, maxWait: rate.InfDuration, clock: clock.System}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.shared != nil {
		return c // limit and burst are not used
	}
	if limit < 0 || math.IsNaN(float64(limit)) {
		c.limit = 0
		c.reject("the limit must be >= 0")
	}
	if burst < 1 && c.limit != rate.Inf {
		c.burst = 1
		c.reject("the burst must be >= 1")
	}
	return c
}

func (c *config) reject(why string) { c.invalid = append(c.invalid, why) }

// Validate reports what New(limit, burst, opts...) cannot use, as a
// tool-definition-invalid/option_invalid error, or nil.
func Validate(limit rate.Limit, burst int, opts ...Option) error {
	c := newConfig(limit, burst, opts)
	if len(c.invalid) == 0 {
		return nil
	}
	return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
		"ratelimit: "+strings.Join(c.invalid, "; "))
}

// WithReject makes calls never wait: without a free token a call fails at
// once with rate-limited and the wait it would have needed as RetryAfter.
func WithReject() Option {
	return func(c *config) { c.maxWait = 0 }
}

// WithMaxWait caps how long a call waits for a token (d >= 0); a longer wait
// fails at once as with [WithReject]. By default only the context's deadline
// bounds the wait. WithMaxWait(0) is WithReject.
func WithMaxWait(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.reject("WithMaxWait needs a duration >= 0")
			return
		}
		c.maxWait = d
	}
}

// WithClock sets the clock for the limiter and the wait. The default is
// clock.System; nil means clock.System.
func WithClock(clk clock.Clock) Option {
	return func(c *config) { c.clock = clock.Or(clk) }
}

// WithShared makes New use lim for every tool it wraps. It replaces WithKey.
func WithShared(lim *rate.Limiter) Option {
	return func(c *config) {
		if lim == nil {
			c.reject("WithShared needs a limiter")
			return
		}
		c.shared, c.key = lim, nil
	}
}

// WithKey makes New keep one limiter per key, key(call), shared by every tool
// it wraps. The limiters are made on first use and kept, so keys should be
// few (an upstream's name, not a call id). It replaces WithShared.
func WithKey(key func(toolmw.Call) string) Option {
	return func(c *config) {
		if key == nil {
			c.reject("WithKey needs a function")
			return
		}
		c.key, c.shared = key, nil
	}
}
