package breaker

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/store"
)

// A Store keeps the state of each breaker outside the process, so that every
// replica given the same Store (and the same breaker name) shares one
// breaker: an outage seen by one replica opens it for all, and one probe
// across the fleet decides whether the dependency is back. adapters/redisstate
// implements it on Redis.
//
// The layer never holds a lock of the Store across a tool call: it asks
// before the call (or uses the answer it cached, see [WithCachePeriod]) and
// reports after it. Each method is one operation, bounded by a context
// with the deadline of the store timeout (store.WithTimeout) and of the
// call.
//
// A Store's key is the breaker's name (the tool's, or what [WithKey]
// returned, or the name given to [NewBreaker]). It is not sanitised: the
// Store must treat it as hostile (hash it, bound it). Every state must
// expire by itself: a missing key is a closed breaker with no failure. A
// stored state that does not parse is an error wrapping store.ErrCorrupt,
// never a closed breaker: the layer then decides on its local breaker, as
// when the Store fails.
//
// Implementations must be safe for concurrent use.
type Store interface {
	// Load returns the shared state of key.
	Load(ctx context.Context, key string) (Snapshot, error)
	// Acquire asks for the probe lease of key, whose open period is over:
	// when the breaker is open with its open period over, or half-open
	// with no lease held (or the lease's TTL passed), it half-opens, gives
	// the lease to l.Token for l.TTL and returns true. Otherwise it returns
	// false and the state as it is (closed: the call runs as any closed
	// call; open: refused; half-open: another probe is in flight).
	Acquire(ctx context.Context, key string, l Lease) (Snapshot, bool, error)
	// Report records the outcome of a call and returns the state after it.
	// A probe's report (r.Probe is the lease's token) closes the breaker
	// after r.Probes successes, opens it again on a fault, and frees the
	// lease; one whose lease is no longer held changes nothing. Another
	// report changes the state only while it is closed: a fault adds to the
	// consecutive failures and opens the breaker for r.OpenFor when they
	// reach r.Failures and r.Trip is true; a success clears them.
	Report(ctx context.Context, key string, r Report) (Snapshot, error)
}

// Snapshot is a breaker's shared state, as a [Store] returns it.
type Snapshot struct {
	// State is the shared state.
	State State
	// Failures is the consecutive failures counted while closed.
	Failures uint32
	// OpenFor is, when State is StateOpen, the time left by the Store's
	// clock until a probe may take the lease (0 or less: it may now).
	OpenFor time.Duration
	// Probing says, when State is StateHalfOpen, that a probe holds the
	// lease.
	Probing bool
}

// Lease is the probe lease a replica asks a [Store] for.
type Lease struct {
	// Token names the probe: random, unique to the call.
	Token string
	// TTL is how long the lease is held unless the probe reports before:
	// the time left before the probe's deadline plus the store timeout, or
	// the open period when the call has no deadline. A probe whose replica
	// dies frees the lease when its TTL passes.
	TTL time.Duration
}

// CallOutcome is how a finished call counts; see [IsFailure].
type CallOutcome int8

// The outcomes.
const (
	OutcomeSuccess CallOutcome = iota
	OutcomeFault
	OutcomeNeutral
)

// Report is a finished call's outcome, and the rule it is judged by.
type Report struct {
	// Outcome is the call's outcome.
	Outcome CallOutcome
	// Probe is the token of the lease the call held, or "" for a call made
	// while the breaker was closed.
	Probe string
	// Trip says a fault may open the breaker: the reporting replica's
	// recent calls mostly failed (the fluke rule of
	// [WithConsecutiveFailures]), so the failures are not a fluke.
	Trip bool
	// Failures is how many consecutive failures open the breaker.
	Failures uint32
	// OpenFor is how long the breaker stays open once it opens.
	OpenFor time.Duration
	// Probes is how many successful probes in a row close it.
	Probes uint32
}

// DefaultCachePeriod is how long a replica trusts the shared state it read
// from a [Store] before it reads it again.
const DefaultCachePeriod = time.Second

// WithStore keeps the breaker's state in s, shared by every replica using
// the same Store and name, and uses s as opts say (store.WithTimeout,
// store.WithOnError; see package store). Each replica caches the state it
// read for [WithCachePeriod], so a closed breaker with no failure costs no
// round trip; a success then writes nothing, a fault writes once (and may
// open the breaker for all), an open breaker refuses calls without a round
// trip until its open period ends, and then one replica takes the probe
// lease. When s fails or does not answer within the store timeout, the call
// goes through the local in-process breaker (fail open) and is marked
// degraded, the failure is reported as a store.Error (Layer "breaker", Key
// the breaker's name), and s is left alone for store.Rest before it is asked
// again. A Store needs the consecutive-failures rule: [WithFailureRatio] and
// [WithInterval] cannot be combined with it, nor can [New]'s [WithShared]
// (give WithStore to [NewBreaker]); nor can an invalid store option. nil
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

// WithCachePeriod sets how long a replica trusts the shared state it read
// from the [Store] (0 means [DefaultCachePeriod]): an outage seen by another
// replica opens the breaker here within it, and a closed breaker reads the
// Store at most once per period. An open breaker is trusted until its open
// period ends whatever the cache period. A negative d is invalid.
func WithCachePeriod(d time.Duration) Option {
	return func(c *config) {
		switch {
		case d < 0:
			c.reject("WithCachePeriod(%v): the period must not be negative", d)
		case d == 0:
			c.store.period = DefaultCachePeriod
		default:
			c.store.period = d
		}
	}
}

// storeConfig is the part of the config about a Store.
type storeConfig struct {
	s      Store
	cfg    store.Config
	period time.Duration
}

// checkStore reports the settings a Store cannot work with.
func (c *config) checkStore() {
	switch {
	case c.store.s == nil:
	case c.failures == 0:
		c.reject("WithStore and WithFailureRatio: a shared breaker opens on consecutive failures")
	case c.interval != 0:
		c.reject("WithStore and WithInterval: a shared breaker keeps its counts until a success")
	case c.sharing.Shared != nil:
		c.reject("WithStore and WithShared: give WithStore to NewBreaker")
	}
}

// shared is the state of a breaker with a Store.
type shared struct {
	store    Store
	guard    *storeguard.Guard
	period   time.Duration
	failures uint32
	probes   uint32
	openFor  time.Duration

	view    atomic.Pointer[view] // the shared state as last read
	loading atomic.Bool          // a call is reading the Store for a stale view
}

// view is the shared state as a replica last read it.
type view struct {
	state     State
	failures  uint32
	probing   bool
	openUntil time.Time // by the breaker's clock, when open
	fresh     time.Time // trusted until, by the breaker's clock
}

// newShared returns the shared state of one breaker, with a guard of its
// own: a breaker's Store rests for that breaker.
func newShared(c *config) *shared {
	return &shared{
		store: c.store.s, guard: storeguard.New("breaker", c.store.cfg, false, c.clock), period: c.store.period,
		failures: c.failures, probes: c.probes, openFor: c.openFor,
	}
}

// sharedCall runs next through a breaker with a Store.
func (b *Breaker) sharedCall(ctx context.Context, next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	s := b.shared
	now := b.clock.Now()
	v := s.view.Load()
	if v != nil && v.state == StateOpen && now.Before(v.openUntil) {
		return toolmw.Result{}, errOpen.WithRetryAfter(v.openUntil.Sub(now))
	}
	if s.guard.Resting() {
		s.guard.Report("load", b.Name(), store.ErrResting)
		return b.localCall(ctx, next, args)
	}
	if v == nil || !now.Before(v.fresh) {
		// One call refreshes a stale view; the others meanwhile use it.
		if v == nil || s.loading.CompareAndSwap(false, true) {
			nv, local, end := b.load(ctx)
			if v != nil {
				s.loading.Store(false)
			}
			switch {
			case end != nil:
				return toolmw.Result{}, end
			case local:
				return b.localCall(ctx, next, args)
			}
			v = nv
			now = b.clock.Now()
		}
	}
	switch {
	case v.state == StateOpen && now.Before(v.openUntil):
		return toolmw.Result{}, errOpen.WithRetryAfter(v.openUntil.Sub(now))
	case v.state == StateHalfOpen && v.probing && now.Before(v.fresh):
		return toolmw.Result{}, errHalfOpen
	case v.state != StateClosed:
		return b.probe(ctx, next, args)
	}
	return b.closedCall(ctx, next, args, v.failures)
}

// closedCall runs next in a closed shared breaker whose view counts
// failures: a fault is reported, and a success when there were failures.
func (b *Breaker) closedCall(ctx context.Context, next toolmw.Tool, args json.RawMessage, failures uint32) (res toolmw.Result, err error) {
	returned := false
	defer func() {
		if !returned { // a panic: a fault, as gobreaker counts one
			b.record(errFault)
			b.report(ctx, Report{Outcome: OutcomeFault, Trip: b.tripOK()})
		}
	}()
	res, err = next(ctx, args)
	returned = true
	v := b.verdict(ctx, err)
	b.record(v)
	switch {
	case v == errFault:
		b.report(ctx, Report{Outcome: OutcomeFault, Trip: b.tripOK()})
	case v == nil && failures > 0:
		b.report(ctx, Report{Outcome: OutcomeSuccess})
	}
	return res, err
}

// probe asks for the probe lease and, given it, runs next as the fleet's
// probe.
func (b *Breaker) probe(ctx context.Context, next toolmw.Tool, args json.RawMessage) (res toolmw.Result, err error) {
	s := b.shared
	l := Lease{Token: rand.Text(), TTL: s.openFor}
	if dl, ok := ctx.Deadline(); ok {
		l.TTL = max(dl.Sub(b.clock.Now())+s.guard.Timeout(), time.Millisecond)
	}
	var snap Snapshot
	var granted bool
	local, end := s.guard.Ask(ctx, "acquire", b.Name(), func(sctx context.Context) (err error) {
		snap, granted, err = s.store.Acquire(sctx, b.Name(), l)
		return err
	})
	switch {
	case end != nil:
		return toolmw.Result{}, end
	case local:
		return b.localCall(ctx, next, args)
	}
	v := b.see(snap)
	if !granted {
		switch v.state {
		case StateClosed:
			return b.closedCall(ctx, next, args, v.failures)
		case StateOpen:
			if now := b.clock.Now(); now.Before(v.openUntil) {
				return toolmw.Result{}, errOpen.WithRetryAfter(v.openUntil.Sub(now))
			}
		}
		return toolmw.Result{}, errHalfOpen
	}
	returned := false
	defer func() {
		if !returned {
			b.report(ctx, Report{Outcome: OutcomeFault, Probe: l.Token})
		}
	}()
	res, err = next(ctx, args)
	returned = true
	out := OutcomeSuccess
	switch b.verdict(ctx, err) {
	case errFault:
		out = OutcomeFault
	case errNeutral:
		out = OutcomeNeutral
	}
	b.report(ctx, Report{Outcome: out, Probe: l.Token})
	return res, err
}

// tripOK reports whether this replica's recent calls mostly failed: the
// fluke rule of the consecutive-failures trip rule.
func (b *Breaker) tripOK() bool {
	failed, n := b.recentFailures()
	return 4*failed >= 3*n
}

// load reads the shared state through the guard: local says the Store
// did not answer (the call is decided locally), end that the call's own
// context ended.
func (b *Breaker) load(ctx context.Context) (v *view, local bool, end error) {
	var snap Snapshot
	local, end = b.shared.guard.Ask(ctx, "load", b.Name(), func(sctx context.Context) (err error) {
		snap, err = b.shared.store.Load(sctx, b.Name())
		return err
	})
	if local || end != nil {
		return nil, local, end
	}
	return b.see(snap), false, nil
}

// localCall runs next through the local in-process breaker, the Store
// having failed, and marks the call degraded (toolmw.SetDegraded), which
// the tracing and logging layers show.
func (b *Breaker) localCall(ctx context.Context, next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	toolmw.SetDegraded(ctx, "breaker")
	return b.slowCall(ctx, next, args)
}

// report shares a call's outcome. A fault the Store did not take is
// counted by the local breaker, which decides while the Store rests.
func (b *Breaker) report(ctx context.Context, r Report) {
	s := b.shared
	r.Failures, r.OpenFor, r.Probes = s.failures, s.openFor, s.probes
	// The call's outcome is known; its cancellation does not take it back,
	// but its deadline still bounds the wait.
	rctx := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		rctx, cancel = context.WithDeadline(rctx, dl)
		defer cancel()
	}
	var snap Snapshot
	local, end := s.guard.Ask(rctx, "report", b.Name(), func(sctx context.Context) (err error) {
		snap, err = s.store.Report(sctx, b.Name(), r)
		return err
	})
	if local {
		toolmw.SetDegraded(ctx, "breaker")
	}
	if local || end != nil {
		if r.Outcome == OutcomeFault && r.Probe == "" {
			b.fault(b.gen.Load())
		}
		return
	}
	b.see(snap)
}

// see caches a state read from the Store and delivers a change of state,
// as this replica sees it, to the callback of WithOnStateChange. A state
// other than open, seen while the cached view is open with time left, is
// an answer that crossed a newer one: it is dropped and the open view
// returned. (An open breaker whose Store forgot it, as after a restart,
// stays open here until its open period ends.)
func (b *Breaker) see(snap Snapshot) *view {
	s := b.shared
	now := b.clock.Now()
	nv := &view{state: snap.State, failures: snap.Failures, probing: snap.Probing, fresh: now.Add(s.period)}
	if snap.State == StateOpen {
		nv.openUntil = now.Add(snap.OpenFor)
	}
	var old *view
	for {
		old = s.view.Load()
		if old != nil && old.state == StateOpen && now.Before(old.openUntil) && snap.State != StateOpen {
			// Answers to concurrent operations arrive in any order, and a
			// breaker cannot leave the open state before its open period
			// ends: this answer was read before the one that opened it.
			return old
		}
		if s.view.CompareAndSwap(old, nv) {
			break
		}
	}
	from := StateClosed
	if old != nil {
		from = old.state
	}
	if from != nv.state && b.notify != nil {
		b.mu.Lock()
		b.queue = append(b.queue, StateChangeEvent{From: from, To: nv.state, Time: now,
			Counts: Counts{Failures: snap.Failures, ConsecutiveFailures: snap.Failures}})
		b.pending.Store(true)
		b.mu.Unlock()
		b.flush()
	}
	return nv
}

// sharedState returns the shared state as this replica last read it
// (closed before its first read). An open state whose open period has
// ended reads as half-open: the next call asks for the probe lease.
func (b *Breaker) sharedState() State {
	v := b.shared.view.Load()
	switch {
	case v == nil:
		return StateClosed
	case v.state == StateOpen && !b.clock.Now().Before(v.openUntil):
		return StateHalfOpen
	}
	return v.state
}

// sharedCounts returns the shared consecutive failures as this replica
// last read them.
func (b *Breaker) sharedCounts() Counts {
	v := b.shared.view.Load()
	if v == nil {
		return Counts{}
	}
	return Counts{Failures: v.failures, ConsecutiveFailures: v.failures}
}
