package breaker

import (
	"context"
	"encoding/json"
	"errors"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/keyed"

	"github.com/sony/gobreaker/v2"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the circuit-breaking middleware. By default each tool it wraps
// gets its own breaker, made when it wraps the tool; [WithShared] and
// [WithKey] share breakers between tools. See the package documentation for
// the defaults and for what counts as a failure. An option given a value it
// cannot use, or a shared Breaker made with one, makes a [toolmw.Reject]
// middleware: toolmw.Wrap reports the error at start-up (see [Validate]).
// The returned Middleware and the Tools it makes are safe for concurrent
// use.
func New(opts ...Option) toolmw.Middleware {
	c := newConfig(opts)
	switch {
	case c.err != nil:
		return toolmw.Reject(c.err)
	case c.sharing.Shared != nil && c.sharing.Shared.err != nil:
		return toolmw.Reject(c.sharing.Shared.err)
	case c.sharing.Shared != nil:
		b := c.sharing.Shared
		return func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				return b.call(ctx, next, args)
			}
		}
	case c.sharing.Key != nil:
		key := c.sharing.Key
		breakers := keyed.New(c.sharing.Max, func(key string) *Breaker {
			b := newBreaker(c)
			b.name.Set(key)
			return b
		})
		return func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				call, _ := toolmw.CallFrom(ctx)
				return breakers.Get(key(call)).call(ctx, next, args)
			}
		}
	}
	return func(next toolmw.Tool) toolmw.Tool {
		b := newBreaker(c)
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			if !b.name.IsSet() {
				call, _ := toolmw.CallFrom(ctx)
				b.name.Learn(call.Tool)
			}
			return b.call(ctx, next, args)
		}
	}
}

// Breaker is one circuit breaker. [New] makes one per tool, or per key; make
// one with [NewBreaker] to share it between tools with [WithShared] and to
// read its state. A Breaker is safe for concurrent use.
type Breaker struct {
	cb        *gobreaker.CircuitBreaker[toolmw.Result]
	name      state.Name
	clock     clock.Clock
	openFor   time.Duration
	isFailure func(error) bool
	notify    func(StateChangeEvent)
	err       error   // the first option NewBreaker could not use
	shared    *shared // the Store's state, or nil; see store.go

	pending atomic.Bool   // changes are queued: a fast check for flush
	recent  atomic.Uint64 // the last counted outcomes; see recentWindow

	// The fast path; see call. eligible is fixed at construction; fast and
	// epoch are written under fastMu, read without it.
	eligible bool
	fast     atomic.Bool                // closed, with no failure since the last success
	epoch    atomic.Uint64              // advanced by every state change and every reported fault
	gen      atomic.Uint64              // advanced by every state change
	fastMu   sync.Mutex                 // orders writes of fast and epoch
	skipped  atomic.Pointer[fastCounts] // outcomes of fast calls, which gobreaker did not count

	// Guarded by gobreaker's lock: written and read only in the callbacks
	// gobreaker makes while holding it.
	state   State            // the state gobreaker last reported
	tripped gobreaker.Counts // the counts that last tripped the breaker
	probes  Counts           // the outcomes of the current half-open period

	entered [3]atomic.Uint64 // state changes, by the state entered; for package state

	mu         sync.Mutex         // guards the fields below; never held while calling out
	openedAt   time.Time          // when the breaker last opened, by clock
	queue      []StateChangeEvent // changes not yet delivered to notify
	delivering bool               // a goroutine is delivering the queue
}

// NewBreaker returns a closed breaker configured by opts. The name is passed
// to the state-change callback. WithShared, WithKey and WithMaxKeys mean
// nothing here. An option given a value it cannot use is ignored, and the
// breaker keeps its default; [New] given the breaker with WithShared makes
// a [toolmw.Reject] middleware, so toolmw.Wrap reports the error at
// start-up (see [Validate]). NewBreaker never panics. The Breaker is safe
// for concurrent use.
func NewBreaker(name string, opts ...Option) *Breaker {
	c := newConfig(opts)
	b := newBreaker(c)
	b.err = c.err
	b.name.Set(name)
	return b
}

func newBreaker(c *config) *Breaker {
	b := &Breaker{
		clock:     c.clock,
		openFor:   c.openFor,
		isFailure: c.isFailure,
		notify:    c.onChange,
		// Only where gobreaker's counts of successes cannot change its
		// decisions: the consecutive-failures rule, counts never aged out.
		eligible: c.failures > 0 && c.interval == 0 && c.store.s == nil,
	}
	if c.store.s != nil {
		b.shared = newShared(c)
	}
	b.skipped.Store(new(fastCounts))
	b.fast.Store(b.eligible)
	trip := c.tripRule(b)
	b.cb = gobreaker.NewCircuitBreaker[toolmw.Result](gobreaker.Settings{
		MaxRequests: c.probes,
		Interval:    c.interval,
		Timeout:     gobreakerTimeout(c.openFor),
		ReadyToTrip: func(cs gobreaker.Counts) bool {
			if !trip(cs) {
				return false
			}
			b.tripped = b.skipped.Load().addTo(cs)
			return true
		},
		OnStateChange: b.stateChanged,
		IsExcluded:    b.excluded,
		IsSuccessful:  b.successful,
	})
	state.Register(state.Default, b, publish)
	return b
}

// publish reports b's state and transitions to package state.
func publish(b *Breaker, emit state.Emit) {
	name := b.Name()
	var s State
	if b.shared != nil {
		s = b.sharedState()
	} else {
		s = stateOf(b.cb.State())
	}
	emit(state.BreakerState, name, "", float64(s))
	for to := range b.entered {
		emit(state.BreakerTransitions, name, State(to).String(), float64(b.entered[to].Load()))
	}
}

// gobreakerTimeout returns gobreaker's Timeout for an open period d.
// gobreaker half-opens once its expiry has passed, strictly: one nanosecond
// less makes a breaker half-open exactly d after it opened, when the
// RetryAfter of its circuit-open errors says, not a nanosecond later.
func gobreakerTimeout(d time.Duration) time.Duration {
	if d > time.Nanosecond {
		return d - time.Nanosecond
	}
	return d
}

// Name returns the breaker's name: the one given to NewBreaker, the key of a
// keyed breaker, or the tool's name for a per-tool breaker (known from its
// first call). It is safe for concurrent use.
func (b *Breaker) Name() string {
	return b.name.String()
}

// State returns the breaker's current state. It may deliver state changes
// to the callback of [WithOnStateChange] before it returns. With a
// [Store], it is the shared state as this replica last read it (an open
// state whose open period has ended reads as half-open).
// It is safe for concurrent use.
func (b *Breaker) State() State {
	if b.shared != nil {
		return b.sharedState()
	}
	s := stateOf(b.cb.State())
	b.flush()
	return s
}

// Counts returns the breaker's counters. It is safe for concurrent use.
// With a [Store], only the shared consecutive failures are kept, as this
// replica last read them (in Failures and ConsecutiveFailures).
// While calls finish as it reads them, or while the breaker changes state,
// a call's outcome may be missing from them.
func (b *Breaker) Counts() Counts {
	if b.shared != nil {
		return b.sharedCounts()
	}
	return countsOf(b.skipped.Load().addTo(b.cb.Counts()))
}

// The verdicts the layer reports to gobreaker in place of the tool's error:
// gobreaker's IsExcluded is given errNeutral, and counts errFault (as any
// non-nil error) as a failure.
var (
	errFault   = errors.New("breaker: dependency fault")
	errNeutral = errors.New("breaker: neutral outcome")
)

// excluded is gobreaker's IsExcluded and successful its IsSuccessful.
// gobreaker calls one of them, holding its lock, for each finished call of
// the current period; in half-open they count the probes' outcomes for the
// state-change event.
func (b *Breaker) excluded(verdict error) bool {
	if verdict != errNeutral {
		return false
	}
	if b.state == StateHalfOpen {
		b.probes.add(verdict)
	}
	return true
}

func (b *Breaker) successful(verdict error) bool {
	if b.state == StateHalfOpen {
		b.probes.add(verdict)
	}
	return verdict == nil
}

// The errors of a breaker that refuses a call. They are immutable, so they
// are made once; the open error gets its RetryAfter per call.
var (
	errOpen = taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen,
		"the circuit breaker is open: the dependency keeps failing and calls are paused").
		WithCause(gobreaker.ErrOpenState)
	errHalfOpen = taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitHalfOpen,
		"the circuit breaker is half-open: trial calls to the dependency are in flight").
		WithCause(gobreaker.ErrTooManyRequests)
)

// call runs next through the breaker.
//
// A closed breaker with no failure since its last success cannot change
// state on a success or a neutral outcome: such a call (the fast path) runs
// without gobreaker, whose Execute takes its lock and reads the clock twice,
// and only a fault is handed to gobreaker, after the fact, to be counted and
// perhaps to open the breaker. The outcomes gobreaker did not see are kept
// in skipped and added to the counts it reports. The fast path is off from
// the first fault until a call through gobreaker succeeds in a closed state,
// and is decided under fastMu against epoch, so that no state change or
// fault between reading gobreaker's state and turning it on is missed.
func (b *Breaker) call(ctx context.Context, next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	if b.fast.Load() {
		return b.fastCall(ctx, next, args)
	}
	if b.shared != nil {
		return b.sharedCall(ctx, next, args)
	}
	return b.slowCall(ctx, next, args)
}

// fastCounts are the outcomes of fast calls since gobreaker last cleared its
// counts (a state change); the consecutive successes are those since the
// last fault, when a fault replaces the fastCounts by one that carries the
// totals. Concurrent fast calls add to stripes of their own (picked at
// random), so that they do not contend on one cache line; reads sum them.
type fastCounts struct {
	stripes        [countStripes]countStripe
	carriedOK      uint32 // successes before the last fault; fixed once made
	carriedNeutral uint32
}

const countStripes = 8

type countStripe struct {
	ok, neutral atomic.Uint32
	_           [56]byte // a stripe per cache line
}

func (f *fastCounts) stripe() *countStripe { return &f.stripes[rand.Uint32()%countStripes] }

// sums returns the successes and neutral outcomes added since f was made.
func (f *fastCounts) sums() (ok, neutral uint32) {
	for i := range f.stripes {
		ok += f.stripes[i].ok.Load()
		neutral += f.stripes[i].neutral.Load()
	}
	return ok, neutral
}

// addTo returns cs with f's outcomes added.
func (f *fastCounts) addTo(cs gobreaker.Counts) gobreaker.Counts {
	ok, neutral := f.sums()
	cs.Requests += f.carriedOK + f.carriedNeutral + ok + neutral
	cs.TotalSuccesses += f.carriedOK + ok
	cs.TotalExclusions += f.carriedNeutral + neutral
	cs.ConsecutiveSuccesses += ok
	return cs
}

func (b *Breaker) fastCall(ctx context.Context, next toolmw.Tool, args json.RawMessage) (res toolmw.Result, err error) {
	gen := b.gen.Load()
	returned := false
	defer func() {
		if !returned { // a panic: a fault, as gobreaker counts one
			b.fault(gen)
		}
	}()
	res, err = next(ctx, args)
	returned = true
	switch v := b.verdict(ctx, err); v {
	case nil:
		b.skipped.Load().stripe().ok.Add(1)
		b.record(v)
	case errNeutral:
		b.skipped.Load().stripe().neutral.Add(1)
	default:
		b.fault(gen)
	}
	if b.pending.Load() {
		b.flush()
	}
	return res, err
}

// fault hands gobreaker the fault of a fast call that started in
// generation gen (a count of state changes). The fault of a call that
// started before the last state change is neutral, as gobreaker treats the
// outcomes of an earlier generation's calls.
func (b *Breaker) fault(gen uint64) {
	b.fastMu.Lock()
	b.fast.Store(false)
	b.epoch.Add(1)
	old := b.skipped.Load()
	ok, neutral := old.sums()
	fresh := &fastCounts{carriedOK: old.carriedOK + ok, carriedNeutral: old.carriedNeutral + neutral} // the consecutive successes end here
	b.skipped.Store(fresh)
	b.fastMu.Unlock()
	if b.gen.Load() != gen {
		return // gobreaker would take a probe's place for nothing
	}
	_, _ = b.cb.Execute(func() (toolmw.Result, error) {
		if b.gen.Load() != gen {
			return toolmw.Result{}, errNeutral
		}
		b.record(errFault)
		return toolmw.Result{}, errFault
	})
	if b.pending.Load() {
		b.flush()
	}
}

// slowCall runs next through gobreaker's Execute. The closure passed to
// Execute does not escape, so the success path does not allocate.
func (b *Breaker) slowCall(ctx context.Context, next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	epoch := b.epoch.Load()
	var err error
	res, verdict := b.cb.Execute(func() (toolmw.Result, error) {
		if b.pending.Load() {
			b.flush() // an open → half-open change, made by this very call
		}
		var res toolmw.Result
		res, err = next(ctx, args)
		v := b.verdict(ctx, err)
		b.record(v)
		return res, v
	})
	if b.pending.Load() {
		b.flush()
	}
	switch verdict {
	case gobreaker.ErrOpenState:
		return toolmw.Result{}, b.openError()
	case gobreaker.ErrTooManyRequests:
		return toolmw.Result{}, errHalfOpen
	case nil:
		if b.eligible {
			b.maybeFast(epoch)
		}
	}
	return res, err
}

// maybeFast turns the fast path on after a success through gobreaker, when
// the breaker is closed with no failure since, and nothing changed since
// epoch was read before the call.
func (b *Breaker) maybeFast(epoch uint64) {
	if b.cb.State() != gobreaker.StateClosed || b.cb.Counts().ConsecutiveFailures != 0 {
		return
	}
	b.fastMu.Lock()
	if b.epoch.Load() == epoch {
		b.fast.Store(true)
	}
	b.fastMu.Unlock()
}

// verdict tells gobreaker how a call that returned err counts.
func (b *Breaker) verdict(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil, errors.Is(err, context.Canceled), !b.isFailure(err):
		return errNeutral
	}
	return errFault
}

// The last recentWindow counted outcomes (successes and failures; neutral
// outcomes are not counted) are kept in one atomic word: bit i of the low
// bits is 1 when the i-th most recent outcome was a failure, and the bits
// from countShift on hold how many outcomes the window holds.
const (
	recentWindow = 20
	countShift   = 32
	windowMask   = 1<<recentWindow - 1
)

// record adds a counted outcome to the recent window.
func (b *Breaker) record(verdict error) {
	if verdict == errNeutral {
		return
	}
	var bit uint64
	if verdict != nil {
		bit = 1
	}
	for {
		old := b.recent.Load()
		if bit == 0 && old == recentWindow<<countShift {
			return // a full window of successes stays one: no write to share
		}
		n := min(old>>countShift+1, recentWindow)
		next := n<<countShift | (old<<1|bit)&windowMask
		if b.recent.CompareAndSwap(old, next) {
			return
		}
	}
}

// recentFailures returns how many of the recent counted outcomes failed,
// and how many there are.
func (b *Breaker) recentFailures() (failed, n uint64) {
	w := b.recent.Load()
	n = w >> countShift
	mask := uint64(1)<<n - 1
	return uint64(bits.OnesCount64(w & mask)), n
}

// openError returns circuit-open with the time left until half-open.
func (b *Breaker) openError() error {
	b.mu.Lock()
	until := b.openedAt.Add(b.openFor)
	b.mu.Unlock()
	return errOpen.WithRetryAfter(until.Sub(b.clock.Now()))
}

// stateChanged is gobreaker's OnStateChange. It runs under gobreaker's lock,
// so it only records the change; flush delivers it.
func (b *Breaker) stateChanged(_ string, from, to gobreaker.State) {
	e := StateChangeEvent{From: stateOf(from), To: stateOf(to), Time: b.clock.Now()}
	switch e.From {
	case StateClosed:
		e.Counts = countsOf(b.tripped)
	case StateHalfOpen:
		e.Counts = b.probes
	}
	b.state, b.probes = e.To, Counts{}
	b.entered[e.To].Add(1)
	b.fastMu.Lock()
	b.epoch.Add(1)
	b.gen.Add(1)
	b.skipped.Store(new(fastCounts)) // gobreaker clears its counts too
	b.fast.Store(b.eligible && e.To == StateClosed)
	b.fastMu.Unlock()
	b.mu.Lock()
	if e.To == StateOpen {
		b.openedAt = e.Time
	}
	if b.notify != nil {
		b.queue = append(b.queue, e)
		b.pending.Store(true)
	}
	b.mu.Unlock()
}

// flush delivers the queued changes to the callback, in order, with no lock
// held. One goroutine delivers at a time; changes queued meanwhile, also by
// the callback itself, are delivered by it before it returns.
func (b *Breaker) flush() {
	b.mu.Lock()
	if b.delivering {
		b.mu.Unlock()
		return
	}
	b.delivering = true
	for len(b.queue) > 0 {
		batch := b.queue
		b.queue = nil
		b.mu.Unlock()
		b.deliver(batch)
		b.mu.Lock()
	}
	b.delivering = false
	b.pending.Store(false)
	b.mu.Unlock()
}

// deliver calls the callback for each change. Should the callback panic, the
// delivery ends and the next flush delivers what is queued after.
func (b *Breaker) deliver(batch []StateChangeEvent) {
	done := false
	defer func() {
		if !done {
			b.mu.Lock()
			b.delivering = false
			b.mu.Unlock()
		}
	}()
	name := b.Name()
	for _, e := range batch {
		e.Name = name
		b.notify(e)
	}
	done = true
}

// IsFailure is the default rule of what counts against a breaker: an untyped
// error, and a typed error of kind tool-failed (except code
// upstream_bad_request) or tool-timeout. Cancellation and every other kind
// are neutral. See the package documentation for the reasons. It is safe
// for concurrent use.
func IsFailure(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	te, ok := taxonomy.From(err)
	if !ok {
		return true
	}
	switch te.Kind() {
	case taxonomy.KindFailed:
		return te.Code() != taxonomy.CodeUpstreamBadRequest
	case taxonomy.KindTimeout:
		return true
	}
	return false
}
