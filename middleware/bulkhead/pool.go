package bulkhead

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/taxonomy"
)

// Pool is a set of slots that calls take before they run: a counting
// semaphore whose waiters are served first in, first out. A Pool is safe
// for concurrent use; its lock is held only to count and queue.
type Pool struct {
	maxQueue int
	clock    clock.Clock
	name     state.Name    // the tool's, for package state; empty: shared, or not called yet
	refused  atomic.Uint64 // calls refused full, for package state

	mu       sync.Mutex
	limit    int   // fixed, or moved by adaptive's rule
	adaptive *aimd // nil: a fixed limit
	running  int
	head     *waiter // the queue, oldest first
	tail     *waiter
	queued   int
	peak     int // the most slots ever taken at once
}

// waiter is one call waiting for a slot. ready is closed when the slot is
// handed to it; granted says so under the pool's lock.
type waiter struct {
	ready   chan struct{}
	granted bool
	next    *waiter
	prev    *waiter
}

var errFull = errors.New("bulkhead full")

// NewPool returns a pool of n slots, for [WithShared]. Its queue holds at
// most [DefaultMaxQueue] waiting calls, or the bound of a [WithMaxQueue]
// among opts; [WithAdaptive] and [WithClock] make its limit adaptive
// (other options are not used). An n below 1 is taken as 1, an invalid
// option is ignored: use [ValidatePool] to report them.
func NewPool(n int, opts ...Option) *Pool {
	return newPool(n, newConfig(opts))
}

func newPool(n int, c config) *Pool {
	p := &Pool{limit: max(n, 1), maxQueue: c.maxQueue, clock: c.clock}
	if a := c.adaptive; a != nil {
		p.adaptive = &aimd{Adaptive: *a}
		p.limit = min(max(p.limit, a.Min), a.Max)
		p.adaptive.since = p.limit // the first sign of overload counts
	}
	state.Register(state.Default, p, publish)
	return p
}

// publish reports p's counts to package state. A shared pool, or one not
// yet called, is unnamed.
func publish(p *Pool, emit state.Emit) {
	name := p.name.String()
	s := p.Stats()
	emit(state.BulkheadInFlight, name, "", float64(s.Running))
	emit(state.BulkheadQueued, name, "", float64(s.Waiting))
	emit(state.BulkheadLimit, name, "", float64(s.Limit))
	emit(state.BulkheadRefusals, name, "", float64(p.refused.Load()))
}

// ValidatePool reports an n below 1 or an invalid option as a
// tool-definition-invalid/option_invalid error, or nil.
func ValidatePool(n int, opts ...Option) error {
	if n < 1 {
		return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("bulkhead: NewPool(%d): a pool has at least 1 slot", n))
	}
	return newConfig(opts).err
}

// Limit returns how many calls the pool lets run at once now.
func (p *Pool) Limit() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.limit
}

// Stats is what a Pool has seen, for tests and dashboards.
type Stats struct {
	Limit   int // the limit now (it moves in an adaptive pool)
	Running int // slots taken now
	Waiting int // calls waiting now
	Peak    int // the most slots ever taken at once
}

// Stats returns the pool's counts.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Limit: p.limit, Running: p.running, Waiting: p.queued, Peak: p.peak}
}

func (p *Pool) String() string {
	s := p.Stats()
	return fmt.Sprintf("bulkhead.Pool{limit %d, running %d, waiting %d}", s.Limit, s.Running, s.Waiting)
}

// acquire takes a slot, waiting for one in FIFO order while ctx and maxWait
// allow. It returns nil with a slot taken, errFull, or ctx's error.
func (p *Pool) acquire(ctx context.Context, maxWait time.Duration) error {
	p.mu.Lock()
	if p.running < p.limit && p.head == nil {
		p.take()
		p.mu.Unlock()
		return nil
	}
	if err := ctx.Err(); err != nil {
		p.mu.Unlock()
		return err
	}
	if p.queued >= p.maxQueue {
		p.mu.Unlock()
		return errFull
	}
	w := &waiter{ready: make(chan struct{})}
	p.push(w)
	p.mu.Unlock()

	var expired <-chan time.Time
	if maxWait > 0 {
		t := time.NewTimer(maxWait)
		defer t.Stop()
		expired = t.C
	}
	var err error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-expired:
		err = errFull
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.granted { // the slot came as we gave up: take it, the call may still run
		if ctx.Err() == nil {
			return nil
		}
		p.handOff()
		return err
	}
	p.remove(w)
	return err
}

// release gives a slot back: to the oldest waiter, or to the pool.
func (p *Pool) release() {
	p.mu.Lock()
	p.handOff()
	p.mu.Unlock()
}

// releaseAfter records, in an adaptive pool, a call that took latency and
// returned err, then gives its slot back and hands out the slots a raised
// limit made.
func (p *Pool) releaseAfter(latency time.Duration, err error) {
	p.mu.Lock()
	p.finish(latency, err)
	p.handOff()
	for p.running < p.limit && p.head != nil {
		p.take()
		p.grant(p.head)
	}
	p.mu.Unlock()
}

// handOff passes the caller's slot to the oldest waiter, or frees it; a
// slot above a limit that fell is freed. Called with p.mu held.
func (p *Pool) handOff() {
	if w := p.head; w != nil && p.running <= p.limit {
		p.grant(w)
		return // the slot moves on: running stays as it is
	}
	p.running--
}

// grant gives w the slot it waits for. Called with p.mu held.
func (p *Pool) grant(w *waiter) {
	p.remove(w)
	w.granted = true
	close(w.ready)
}

func (p *Pool) take() {
	p.running++
	p.peak = max(p.peak, p.running)
}

func (p *Pool) push(w *waiter) {
	w.prev = p.tail
	if p.tail != nil {
		p.tail.next = w
	} else {
		p.head = w
	}
	p.tail = w
	p.queued++
}

func (p *Pool) remove(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		p.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		p.tail = w.prev
	}
	w.next, w.prev = nil, nil
	p.queued--
}
