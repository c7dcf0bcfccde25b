package budget

import (
	"fmt"
	"math"
	"sync/atomic"
)

// Defaults of a [Retry].
const (
	DefaultRatio   = 0.1 // tokens deposited per call
	DefaultReserve = 10  // tokens the bucket starts with and never exceeds
)

// milli is the number of stored units in one token: balances are kept in
// thousandths of a token so one atomic integer holds them exactly.
const milli = 1000

// Retry is a retry token budget shared by the callers of a process or of
// one dependency. Each call deposits the ratio of a token ([Retry.Deposit]);
// each retry withdraws one whole token ([Retry.TryRetry]) and is refused
// when there is none. The bucket starts full at the reserve and never holds
// more. See the package documentation for the bounds this gives.
//
// A Retry is safe for concurrent use and lock-free; a deposit into a full
// bucket is a single atomic load.
type Retry struct {
	tokens  atomic.Int64 // thousandths of a token
	deposit int64
	max     int64
}

// RetryOption configures a [Retry].
//
// Options are applied once, by the constructor they are passed to; an Option may be reused and shared between goroutines.
type RetryOption func(*retryConfig)

type retryConfig struct {
	ratio   float64
	reserve int
	err     error
}

func (c *retryConfig) reject(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("budget: "+format, args...)
	}
}

// WithRatio sets the fraction of a token each call deposits (default
// [DefaultRatio]): retries may add at most this fraction to the calls once
// the reserve is spent. It is kept to a thousandth. A value outside [0, 1]
// is ignored and reported by [ValidateRetry].
func WithRatio(ratio float64) RetryOption {
	return func(c *retryConfig) {
		if !(ratio >= 0 && ratio <= 1) { // also rejects NaN
			c.reject("WithRatio(%v): the ratio must be within [0, 1]", ratio)
			return
		}
		c.ratio = ratio
	}
}

// WithReserve sets how many tokens the bucket starts with and may hold at
// most (default [DefaultReserve]). A value below 1 is ignored and reported by
// [ValidateRetry]: a bucket that cannot hold one token would never allow a
// retry; leave the retry layer out, or give it one attempt, for that.
func WithReserve(tokens int) RetryOption {
	return func(c *retryConfig) {
		if tokens < 1 || int64(tokens) > math.MaxInt64/milli {
			c.reject("WithReserve(%d): the reserve must be at least 1 token", tokens)
			return
		}
		c.reserve = tokens
	}
}

func newRetryConfig(opts []RetryOption) retryConfig {
	c := retryConfig{ratio: DefaultRatio, reserve: DefaultReserve}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// ValidateRetry reports the first option value [NewRetry] would ignore, or nil.
func ValidateRetry(opts ...RetryOption) error {
	return newRetryConfig(opts).err
}

// NewRetry returns a full retry budget. Invalid option values are ignored
// (see [ValidateRetry]).
func NewRetry(opts ...RetryOption) *Retry {
	c := newRetryConfig(opts)
	b := &Retry{
		deposit: int64(math.Round(c.ratio * milli)),
		max:     int64(c.reserve) * milli,
	}
	b.tokens.Store(b.max)
	return b
}

// Deposit records one call: it adds the ratio of a token, up to the reserve.
// Call it once per call, not per attempt (the retry layer does so when it
// makes a call's first attempt).
func (b *Retry) Deposit() {
	for {
		v := b.tokens.Load()
		if v >= b.max {
			return
		}
		if b.tokens.CompareAndSwap(v, min(v+b.deposit, b.max)) {
			return
		}
	}
}

// TryRetry withdraws one token for a retry and reports whether there was
// one. When it returns false nothing is withdrawn and the retry must not be
// made.
func (b *Retry) TryRetry() bool {
	for {
		v := b.tokens.Load()
		if v < milli {
			return false
		}
		if b.tokens.CompareAndSwap(v, v-milli) {
			return true
		}
	}
}

// Tokens returns the current balance in tokens.
func (b *Retry) Tokens() float64 {
	return float64(b.tokens.Load()) / milli
}
