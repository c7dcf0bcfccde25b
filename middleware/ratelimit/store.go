package ratelimit

import (
	"context"
	"encoding/json"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/keyed"
	"github.com/toolmw/toolmw/middleware/internal/storeguard"
	"github.com/toolmw/toolmw/taxonomy"
)

// A Store keeps the rate-limit state of each key outside the process, so
// that every replica given the same Store (and the same key) draws on one
// limit. adapters/redis implements it on Redis; the layer calls Admit once
// per call, with a context bounded by [WithStoreTimeout] and the call's
// deadline.
//
// Implementations must be safe for concurrent use, and return soon after
// ctx is done: the call waits for Admit.
type Store interface {
	// Admit decides one call of key: admit it now, admit it after a wait
	// (the slot is reserved for it: the wait must not exceed r.MaxWait), or
	// refuse it with the time until a slot is free. An error, or no answer
	// before ctx is done, makes the layer decide with its local limiter.
	Admit(ctx context.Context, r Request) (Decision, error)
}

// Request is what the layer asks a [Store] for one call. It is a plain
// value, safe to copy and to share.
type Request struct {
	// Key names the limit: the tool's name, or what the function of
	// [WithKey] returned. It is not sanitised: the Store must treat it as
	// hostile (hash it, bound it).
	Key string
	// Interval is the time between two tokens: one second divided by the
	// limit. It is positive.
	Interval time.Duration
	// Burst is how many calls may be admitted at once. It is at least 1.
	Burst int
	// MaxWait is the longest wait the call accepts for a slot: the cap of
	// [WithMaxWait] or the time left before the call's deadline, whichever
	// is shorter. 0 means the call must be admitted now or refused.
	MaxWait time.Duration
}

// Decision is a [Store]'s answer. It is a plain value, safe to copy and to
// share.
type Decision struct {
	// Allowed says the call may run, after Wait.
	Allowed bool
	// Wait is, when Allowed, how long the call waits for the slot reserved
	// for it (0: at once); otherwise how long until a slot is free, which
	// the refusal carries as its RetryAfter.
	Wait time.Duration
}

// StoreError reports a call that the [Store] did not decide: it failed or
// did not answer within [WithStoreTimeout]. It is a plain value, safe to
// copy and to share.
type StoreError struct {
	// Tool is the name of the tool called.
	Tool string
	// Err is the Store's error, or context.DeadlineExceeded when it did not
	// answer in time. It may name the Store's address: it is for the
	// operator's metrics and logs, not for the model.
	Err error
	// Refused says the call was refused ([WithFailClosed]); otherwise the
	// local limiter decided it.
	Refused bool
}

// DefaultStoreTimeout is how long a call waits for the [Store]'s answer by
// default before its local limiter decides instead.
const DefaultStoreTimeout = 50 * time.Millisecond

// WithStore makes the layer keep its state in s, shared by every replica
// using the same Store: the limit and the burst of [New] hold across them,
// per tool name, or per key with [WithKey]. When s fails or does not answer
// within [WithStoreTimeout], the call is decided by a local limiter of the
// same limit and burst (fail open; see [WithFailClosed]), reported to
// [WithOnStoreError], and s is left alone for a quarter of a second before
// it is tried again. A limit of 0 cannot be shared (its burst would be one
// quota for ever) and [WithShared] cannot be combined with a Store: New
// reports either. nil means in-process state only (the default).
// The Option may be shared between goroutines.
func WithStore(s Store) Option {
	return func(c *config) { c.store.s = s }
}

// WithStoreTimeout bounds how long a call waits for the [Store] before its
// local limiter decides (0 means [DefaultStoreTimeout]); the call's
// deadline bounds it too. A negative d is invalid.
// The Option may be shared between goroutines.
func WithStoreTimeout(d time.Duration) Option {
	return func(c *config) {
		switch {
		case d < 0:
			c.reject("WithStoreTimeout(%v): the timeout must not be negative", d)
		case d == 0:
			c.store.timeout = DefaultStoreTimeout
		default:
			c.store.timeout = d
		}
	}
}

// WithFailClosed makes a call that the [Store] did not decide fail with
// rate-limited/rate_limited (retryable, without a RetryAfter) instead of
// being decided by the local limiter. Use it when exceeding the limit
// N-fold while the Store is down is worse than refusing.
// The Option may be shared between goroutines.
func WithFailClosed() Option {
	return func(c *config) { c.store.failClosed = true }
}

// WithOnStoreError sets a function called, on the call's goroutine, for
// every call the [Store] did not decide (nil means none): count them, log
// them. It must not block.
// The Option may be shared between goroutines.
func WithOnStoreError(f func(StoreError)) Option {
	return func(c *config) { c.store.onError = f }
}

// storeConfig is the part of the config about a Store.
type storeConfig struct {
	s          Store
	timeout    time.Duration
	failClosed bool
	onError    func(StoreError)
}

// errStoreDown: WithFailClosed and the Store did not decide.
var errStoreDown = taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeRateLimited,
	"the tool's shared rate limit could not be checked; try again later")

// checkStore reports the settings a Store cannot work with.
func (c *config) checkStore() {
	switch {
	case c.store.s == nil:
	case c.sharing.Shared != nil:
		c.reject("WithStore and WithShared: a shared limiter cannot also be kept in a Store")
	case c.limit == 0:
		c.reject("WithStore: a limit of 0 cannot be shared (use a positive limit)")
	}
}

// stored is the layer with a Store: the Store decides, the local limiters
// stand in when it cannot.
type stored struct {
	*config
	local *keyed.Map[*limiter]
	guard storeguard.Guard
}

// newStored returns the middleware of a layer with a Store.
func newStored(c *config) toolmw.Middleware {
	s := &stored{config: c, local: keyed.New(c.sharing.Max, func(string) *limiter { return c.newLimiter() })}
	s.guard = storeguard.Guard{Layer: "ratelimit", Timeout: c.store.timeout, Resting: errResting, Now: c.clock.Now}
	if f := c.store.onError; f != nil {
		refused := c.store.failClosed
		s.guard.OnError = func(tool string, err error) { f(StoreError{Tool: tool, Err: err, Refused: refused}) }
	}
	key := c.sharing.Key
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			call, _ := toolmw.CallFrom(ctx)
			k := call.Tool
			if key != nil {
				k = key(call)
			}
			return s.call(ctx, call.Tool, k, next, args)
		}
	}
}

// call asks the Store, or the local limiter of key when the Store cannot
// answer, and runs next.
func (s *stored) call(ctx context.Context, tool, key string, next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	var d Decision
	var maxWait time.Duration
	local, end := s.guard.Ask(ctx, tool, func(sctx context.Context) (err error) {
		maxWait = s.maxWait
		if dl, ok := ctx.Deadline(); ok {
			maxWait = min(maxWait, max(dl.Sub(s.clock.Now()), 0))
		}
		d, err = s.store.s.Admit(sctx, Request{Key: key, Interval: interval(s.limit), Burst: s.burst, MaxWait: maxWait})
		return err
	})
	switch {
	case end != nil:
		return toolmw.Result{}, end
	case local && s.store.failClosed:
		return toolmw.Result{}, errStoreDown
	case local:
		return s.local.Get(key).call(ctx, next, args)
	case !d.Allowed || d.Wait > maxWait:
		// A Store's wait beyond the call's bound is a refusal.
		return toolmw.Result{}, errLimited.WithRetryAfter(max(d.Wait, 0))
	case d.Wait > 0:
		if err := s.sleep(ctx, d.Wait); err != nil {
			return toolmw.Result{}, err
		}
	}
	return next(ctx, args)
}

// errResting is the StoreError of a call decided locally because the Store
// failed moments ago.
var errResting = storeResting{}

type storeResting struct{}

func (storeResting) Error() string {
	return "ratelimit: the store failed moments ago; deciding locally"
}

// interval returns the time between two tokens at limit (positive and
// finite), at least a nanosecond.
func interval(limit rate.Limit) time.Duration {
	return max(time.Duration(float64(time.Second)/float64(limit)), 1)
}

// sleep waits d for a slot the Store reserved, or returns why not. The
// slot is not given back: the Store cannot take a reservation back, so a
// cancelled wait leaves the limit under-used, never exceeded.
func (s *stored) sleep(ctx context.Context, d time.Duration) error {
	t := s.clock.NewTimer(d)
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		t.Stop()
		if err := ctx.Err(); err != context.DeadlineExceeded {
			return err
		}
		return errDeadline
	}
}
