package breaker

import (
	"context"
	"encoding/json"
	"errors"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/taxonomy"
)

// Breaker is one circuit breaker. [New] makes one per tool, or per key; make
// one with [NewBreaker] to share it between tools with [WithShared] and to
// read its state. A Breaker is safe for concurrent use.
type Breaker struct {
	cb        *gobreaker.CircuitBreaker[toolmw.Result]
	name      atomic.Pointer[string]
	clock     clock.Clock
	openFor   time.Duration
	isFailure func(error) bool
	notify    func(StateChangeEvent)
	err       error // the first option NewBreaker could not use

	pending atomic.Bool   // changes are queued: a fast check for flush
	recent  atomic.Uint64 // the last counted outcomes; see recentWindow

	// Guarded by gobreaker's lock: written and read only in the callbacks
	// gobreaker makes while holding it.
	state   State            // the state gobreaker last reported
	tripped gobreaker.Counts // the counts that last tripped the breaker
	probes  Counts           // the outcomes of the current half-open period

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
	b.name.Store(&name)
	return b
}

func newBreaker(c *config) *Breaker {
	b := &Breaker{
		clock:     c.clock,
		openFor:   c.openFor,
		isFailure: c.isFailure,
		notify:    c.onChange,
	}
	trip := c.tripRule(b)
	b.cb = gobreaker.NewCircuitBreaker[toolmw.Result](gobreaker.Settings{
		MaxRequests: c.probes,
		Interval:    c.interval,
		Timeout:     gobreakerTimeout(c.openFor),
		ReadyToTrip: func(cs gobreaker.Counts) bool {
			if !trip(cs) {
				return false
			}
			b.tripped = cs
			return true
		},
		OnStateChange: b.stateChanged,
		IsExcluded:    b.excluded,
		IsSuccessful:  b.successful,
	})
	return b
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
	if p := b.name.Load(); p != nil {
		return *p
	}
	return ""
}

// State returns the breaker's current state. It may deliver state changes
// to the callback of [WithOnStateChange] before it returns.
// It is safe for concurrent use.
func (b *Breaker) State() State {
	s := stateOf(b.cb.State())
	b.flush()
	return s
}

// Counts returns the breaker's counters. It is safe for concurrent use.
func (b *Breaker) Counts() Counts {
	return countsOf(b.cb.Counts())
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

// call runs next through the breaker. The closure passed to Execute does not
// escape, so the success path does not allocate.
func (b *Breaker) call(ctx context.Context, next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
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
	}
	return res, err
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
