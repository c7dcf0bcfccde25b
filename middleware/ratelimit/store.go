package ratelimit

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/middleware/internal/keyed"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// A Store keeps the rate-limit state of each key outside the process, so
// that every replica given the same Store (and the same key) draws on one
// limit. adapters/redisstate implements it on Redis; the layer calls Admit once
// per call (the operation "admit" of a store.Error), with a context bounded
// by the store timeout (store.WithTimeout) and the call's deadline.
// Package ratelimittest has the conformance checks every Store runs.
//
// Implementations must be safe for concurrent use, and return soon after
// ctx is done: the call waits for Admit.
type Store interface {
	// Admit decides one call of key: admit it now, admit it after a wait
	// (the slot is reserved for it: the wait must not exceed r.MaxWait), or
	// refuse it with the time until a slot is free. An error, or no answer
	// before ctx is done, makes the layer decide with its local limiter. A
	// stored state that does not parse is an error wrapping
	// store.ErrCorrupt, never a full bucket.
	Admit(ctx context.Context, r Request) (Decision, error)
}

// Request is what the layer asks a [Store] for one call.
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

// Decision is a [Store]'s answer.
type Decision struct {
	// Allowed says the call may run, after Wait.
	Allowed bool
	// Wait is, when Allowed, how long the call waits for the slot reserved
	// for it (0: at once); otherwise how long until a slot is free, which
	// the refusal carries as its RetryAfter.
	Wait time.Duration
}

// WithStore makes the layer keep its state in s, shared by every replica
// using the same Store, and use s as opts say (store.WithTimeout,
// store.WithOnError; see package store): the limit and the burst of [New]
// hold across the replicas, per tool name, or per key with [WithKey]. When s
// fails or does not answer within the store timeout, the call is decided by
// a local limiter of the same limit and burst (fail open; see
// [WithFailClosed]) and marked degraded, the failure is reported as a
// store.Error (Layer "ratelimit", Key the tool's name), and s is left alone
// for store.Rest before it is tried again. A limit of 0 cannot be shared
// (its burst would be one quota for ever), [WithShared] cannot be combined
// with a Store, and a store option must be valid: New reports each. nil
// means in-process state only (the default).
func WithStore(s Store, opts ...store.Option) Option {
	return func(c *config) {
		cfg, err := store.NewConfig(opts...)
		if err != nil {
			c.reject("WithStore: %v", err)
		}
		c.store.s, c.store.cfg = s, cfg
	}
}

// WithFailClosed makes a call that the [Store] did not decide fail with
// rate-limited/rate_limited (retryable, without a RetryAfter) instead of
// being decided by the local limiter; its store.Error has Refused set. Use
// it when exceeding the limit N-fold while the Store is down is worse than
// refusing.
func WithFailClosed() Option {
	return func(c *config) { c.store.failClosed = true }
}

// storeConfig is the part of the config about a Store.
type storeConfig struct {
	s          Store
	cfg        store.Config
	failClosed bool
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
	guard *storeguard.Guard

	// For package state: the time calls waited for the Store's slots and
	// the calls it refused (a shared layer: unnamed).
	waited  atomic.Int64
	refused atomic.Uint64
}

// publishStored reports the Store's waits and refusals to package state.
func publishStored(s *stored, emit state.Emit) {
	emit(state.RateLimitWait, "", "", time.Duration(s.waited.Load()).Seconds())
	emit(state.RateLimitRefusals, "", "", float64(s.refused.Load()))
}

// newStored returns the middleware of a layer with a Store.
func newStored(c *config) toolmw.Middleware {
	s := &stored{config: c, local: keyed.New(c.sharing.Max, c.newLimiter),
		guard: storeguard.New("ratelimit", c.store.cfg, c.store.failClosed, c.clock)}
	state.Register(state.Default, s, publishStored)
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
	local, end := s.guard.Ask(ctx, "admit", tool, func(sctx context.Context) (err error) {
		maxWait = s.maxWait
		if dl, ok := ctx.Deadline(); ok {
			maxWait = min(maxWait, max(dl.Sub(s.clock.Now()), 0))
		}
		d, err = s.store.s.Admit(sctx, Request{Key: key, Interval: interval(s.limit), Burst: s.burst, MaxWait: maxWait})
		return err
	})
	if local {
		toolmw.SetDegraded(ctx, "ratelimit")
	}
	switch {
	case end != nil:
		return toolmw.Result{}, end
	case local && s.store.failClosed:
		s.refused.Add(1)
		return toolmw.Result{}, errStoreDown
	case local:
		return s.local.Get(key).call(ctx, next, args)
	case !d.Allowed || d.Wait > maxWait:
		// A Store's wait beyond the call's bound is a refusal.
		s.refused.Add(1)
		return toolmw.Result{}, errLimited.WithRetryAfter(max(d.Wait, 0))
	case d.Wait > 0:
		if err := s.sleep(ctx, d.Wait); err != nil {
			return toolmw.Result{}, err
		}
		s.waited.Add(int64(d.Wait))
	}
	return next(ctx, args)
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
