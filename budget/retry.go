package budget

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/store"
)

// Defaults of a [Retry], adaptive or fixed.
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
// more, and never less than nothing.
//
// A Retry runs one of two algorithms, chosen when it is made (see the
// package documentation):
//
//   - adaptive ([NewAdaptive], the retry layer's default): it also learns
//     how attempts end ([Retry.Observe]): a retry that succeeds is refunded,
//     and an attempt that fails with a sign of overload pays twice;
//   - fixed ratio ([NewRetry] and the zero Retry): Observe does nothing, so
//     retries never exceed reserve + ratio × calls, whatever happens.
//
// The zero Retry is ready to use: a full fixed-ratio bucket with
// [DefaultRatio] and [DefaultReserve]. A Retry must not be copied after
// first use.
//
// A Retry is safe for concurrent use and lock-free; a deposit into a full
// bucket is a single atomic load.
type Retry struct {
	// spent is how far the bucket is below full, in thousandths of a token,
	// so that the zero value is a full bucket. It stays within [0, max].
	spent    atomic.Int64
	deposit  int64 // thousandths of a token per call
	max      int64 // thousandths of a token; 0 only in the zero Retry, which uses the defaults
	adaptive bool
	shared   *sharedTokens // nil: the balance is in-process only
}

// RetryOption configures a [Retry].
type RetryOption func(*retryConfig)

type retryConfig struct {
	ratio    float64
	reserve  int
	store    TokenStore
	storeCfg store.Config
	err      error
}

func (c *retryConfig) reject(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("budget: "+format, args...)
	}
}

// WithRatio sets the fraction of a token each call deposits (default
// [DefaultRatio]): against a dependency that always fails, retries add at
// most this fraction to the calls once the reserve is spent. It is kept to
// a thousandth. 0 is a ratio like any other, not the default: the bucket
// never refills from calls, and retries come from the reserve (and, in an
// adaptive budget, from refunds) alone. A value outside [0, 1] is ignored
// and reported by [ValidateRetry].
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

// ValidateRetry reports the first option value [NewAdaptive] or [NewRetry]
// would ignore, or nil. The error is a plain error; a layer reporting it
// wraps it as a tool-definition-invalid/option_invalid error.
func ValidateRetry(opts ...RetryOption) error {
	return newRetryConfig(opts).err
}

// NewAdaptive returns a full adaptive retry budget: the algorithm the retry
// layer uses by default, for a budget shared by several tools. Invalid
// option values are ignored, the defaults kept (see [ValidateRetry]), so it
// always returns a working budget.
func NewAdaptive(opts ...RetryOption) *Retry {
	b := NewRetry(opts...)
	b.adaptive = true
	return b
}

// NewRetry returns a full fixed-ratio retry budget: retries never exceed
// reserve + ratio × calls, whatever the failures, and [Retry.Observe] does
// nothing. Prefer [NewAdaptive] unless that hard cap is what you need: a
// fixed ratio starves retries of a dependency that fails often but answers
// its retries (at 20% independent failures, 12% of calls fail where
// retrying would have saved all but 1%). Invalid option values are ignored,
// the defaults kept (see [ValidateRetry]).
func NewRetry(opts ...RetryOption) *Retry {
	c := newRetryConfig(opts)
	b := &Retry{
		deposit: int64(math.Round(c.ratio * milli)),
		max:     int64(c.reserve) * milli,
	}
	if c.store != nil {
		b.shared = &sharedTokens{store: c.store, guard: storeguard.New("retry_budget", c.storeCfg, false, nil)}
	}
	return b
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
	deposit, _ := b.params()
	b.give(deposit)
	if b.shared != nil {
		b.sharedDeposit(deposit)
	}
}

// TryRetry withdraws one token for a retry (or any extra attempt, such as a
// hedge) and reports whether there was one. When it returns false nothing
// is withdrawn and the attempt must not be made.
func (b *Retry) TryRetry() bool {
	ok, _ := b.TryRetryContext(context.Background())
	return ok
}

// TryRetryContext is [Retry.TryRetry] for a caller with a context: with a
// [TokenStore], the round trip is bounded by ctx as well as by the store
// timeout, and a ctx that ends first leaves the decision to the local
// balance without counting against the store. degraded says the store
// failed, did not answer in time or rests, and the local balance decided:
// a caller that keeps a call record marks the call (the retry and hedge
// layers call toolmw.SetDegraded(ctx, "retry_budget")). Without a store it
// is TryRetry, and degraded is false.
func (b *Retry) TryRetryContext(ctx context.Context) (ok, degraded bool) {
	if b.shared != nil {
		return b.sharedTryRetry(ctx)
	}
	return b.localTryRetry(), false
}

// localTryRetry withdraws one token from the local balance.
func (b *Retry) localTryRetry() bool {
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

// AttemptOutcome is how an attempt ended, as far as a retry budget cares.
type AttemptOutcome uint8

const (
	// Failed: the attempt failed, or ended in a way that says nothing
	// about the dependency. The zero AttemptOutcome.
	Failed AttemptOutcome = iota
	// Succeeded: the attempt succeeded.
	Succeeded
	// Overloaded: the attempt failed with a sign that the dependency, or
	// the way to it, is overloaded: it timed out, was rate-limited, found a
	// bulkhead full, or was told to come back later (a push-back
	// RetryAfter).
	Overloaded
)

// String returns the outcome's name.
func (o AttemptOutcome) String() string {
	switch o {
	case Failed:
		return "failed"
	case Succeeded:
		return "succeeded"
	case Overloaded:
		return "overloaded"
	}
	return fmt.Sprintf("AttemptOutcome(%d)", uint8(o))
}

// Attempt is what a retry budget learns from one attempt that has ended.
type Attempt struct {
	// Retry says the attempt was paid for with [Retry.TryRetry] (a retry,
	// or a hedge); false for a call's first attempt.
	Retry bool
	// Outcome is how the attempt ended.
	Outcome AttemptOutcome
}

// Observe tells an adaptive budget how an attempt ended; a fixed-ratio
// budget ignores it. The retry layer calls it after every attempt but a
// first attempt that succeeded (which changes nothing). For an adaptive
// budget:
//
//   - a retry that succeeded is refunded its token;
//   - a retry that was Overloaded pays a second token, or what is left;
//   - a first attempt that was Overloaded takes back its call's deposit;
//   - anything else changes nothing: a failed retry keeps the token it paid.
//
// The balance never goes below zero nor above the reserve.
func (b *Retry) Observe(a Attempt) {
	if !b.adaptive {
		return
	}
	deposit, _ := b.params()
	var give, take int64
	switch {
	case a.Retry && a.Outcome == Succeeded:
		give = milli
	case a.Retry && a.Outcome == Overloaded:
		take = milli
	case a.Outcome == Overloaded:
		take = deposit
	}
	b.give(give)
	b.take(take)
	if b.shared != nil && give+take > 0 {
		b.shared.take.Add(take)
		b.sharedDeposit(give)
	}
}

// give adds n thousandths of a token, up to the capacity.
func (b *Retry) give(n int64) {
	for {
		v := b.spent.Load()
		if v <= 0 || n <= 0 {
			return
		}
		if b.spent.CompareAndSwap(v, max(v-n, 0)) {
			return
		}
	}
}

// take removes n thousandths of a token, down to an empty bucket.
func (b *Retry) take(n int64) {
	_, capacity := b.params()
	for {
		v := b.spent.Load()
		if v >= capacity || n <= 0 {
			return
		}
		if b.spent.CompareAndSwap(v, min(v+n, capacity)) {
			return
		}
	}
}

// Tokens returns the current balance in tokens. With a [TokenStore] it is
// the balance the store last gave, with what is queued since.
func (b *Retry) Tokens() float64 {
	_, capacity := b.params()
	return float64(capacity-b.spent.Load()) / milli
}
