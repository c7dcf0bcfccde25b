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
// The zero Retry is ready to use: a full bucket with [DefaultRatio] and
// [DefaultReserve]. [NewRetry] makes one with other values. A Retry must not
// be copied after first use.
//
// A Retry is safe for concurrent use and lock-free; a deposit into a full
// bucket is a single atomic load.
type Retry struct {
	// spent is how far the bucket is below full, in thousandths of a token,
	// so that the zero value is a full bucket.
	spent   atomic.Int64
	deposit int64 // thousandths of a token per call
	max     int64 // thousandths of a token; 0 only in the zero Retry, which uses the defaults
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
// the reserve is spent. It is kept to a thousandth. 0 is a ratio like any
// other, not the default: the bucket never refills, and retries come from
// the reserve alone. A value outside [0, 1] is ignored and reported by
// [ValidateRetry].
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
// most. 0 means the default, [DefaultReserve]. A negative value, or one too
// large to count in thousandths, is ignored and reported by [ValidateRetry].
// For a layer that never retries, leave the retry layer out or give it one
// attempt.
func WithReserve(tokens int) RetryOption {
	return func(c *retryConfig) {
		if tokens < 0 || int64(tokens) > math.MaxInt64/milli {
			c.reject("WithReserve(%d): the reserve must be within [0, %d] tokens", tokens, math.MaxInt64/milli)
			return
		}
		c.reserve = tokens
	}
}

func newRetryConfig(opts []RetryOption) retryConfig {
	c := retryConfig{ratio: DefaultRatio}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.reserve == 0 {
		c.reserve = DefaultReserve
	}
	return c
}

// ValidateRetry reports the first option value [NewRetry] would ignore, or
// nil. The error is a plain error (this package imports only the standard
// library); a layer reporting it wraps it as a
// tool-definition-invalid/option_invalid error.
func ValidateRetry(opts ...RetryOption) error {
	return newRetryConfig(opts).err
}

// NewRetry returns a full retry budget. Invalid option values are ignored,
// the defaults kept (see [ValidateRetry]), so it always returns a working
// budget.
func NewRetry(opts ...RetryOption) *Retry {
	c := newRetryConfig(opts)
	return &Retry{
		deposit: int64(math.Round(c.ratio * milli)),
		max:     int64(c.reserve) * milli,
	}
}

// params returns the deposit per call and the capacity, in thousandths of a
// token.
func (b *Retry) params() (deposit, capacity int64) {
	if b.max == 0 {
		return DefaultRatio * milli, DefaultReserve * milli
	}
	return b.deposit, b.max
}

// Deposit records one call: it adds the ratio of a token, up to the reserve.
// Call it once per call, not per attempt (the retry layer does so when it
// makes a call's first attempt).
func (b *Retry) Deposit() {
	for {
		v := b.spent.Load()
		if v <= 0 {
			return
		}
		deposit, _ := b.params()
		if b.spent.CompareAndSwap(v, max(v-deposit, 0)) {
			return
		}
	}
}

// TryRetry withdraws one token for a retry and reports whether there was
// one. When it returns false nothing is withdrawn and the retry must not be
// made.
func (b *Retry) TryRetry() bool {
	_, capacity := b.params()
	for {
		v := b.spent.Load()
		if capacity-v < milli {
			return false
		}
		if b.spent.CompareAndSwap(v, v+milli) {
			return true
		}
	}
}

// Tokens returns the current balance in tokens.
func (b *Retry) Tokens() float64 {
	_, capacity := b.params()
	return float64(capacity-b.spent.Load()) / milli
}
