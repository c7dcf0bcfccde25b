// Package breakertest helps test a breaker.Store: [MemStore], an in-memory
// Store that keeps the contract on a clock the test controls, and
// [TestStore], the conformance checks every Store runs:
//
//	func TestConformance(t *testing.T) {
//		breakertest.TestStore(t, func(t *testing.T) breaker.Store { return newStore(t) }, time.Sleep)
//	}
//
// MemStore shares state only between breakers of one process: it stands
// for Redis in tests and simulations, not in production (use
// breaker.WithShared or breaker.WithKey within a process).
package breakertest

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/breaker"
)

// MaxKeys bounds how many keys a [MemStore] keeps that are not closed with
// no failure (those are not kept: a missing key is one). A key is kept as
// its SHA-256, so its length is not bounded and costs no memory.
const MaxKeys = 10_000

// ErrFull is the error of a [MemStore] asked to keep a key beyond MaxKeys.
var ErrFull = errors.New("breakertest: the store holds MaxKeys keys")

// MemStore is a breaker.Store in memory, on a clock. It is safe for
// concurrent use.
type MemStore struct {
	clock clock.Clock
	ops   atomic.Int64
	opens atomic.Int64

	mu   sync.Mutex
	keys map[[sha256.Size]byte]*entry // by the SHA-256 of the key: keys are hostile
}

type entry struct {
	state      breaker.State
	failures   uint32
	successes  uint32    // successful probes in this half-open period
	openUntil  time.Time // when open
	token      string    // the probe lease's holder, or ""
	leaseUntil time.Time
}

// NewMemStore returns an empty store on clk (nil means clock.System).
func NewMemStore(clk clock.Clock) *MemStore {
	return &MemStore{clock: clock.Or(clk), keys: map[[sha256.Size]byte]*entry{}}
}

// Ops returns how many operations the store has served: a Redis store's
// round trips. It is safe for concurrent use.
func (m *MemStore) Ops() int64 { return m.ops.Load() }

// Opens returns how many times a breaker of the store opened (from closed,
// or again from half-open). It is safe for concurrent use.
func (m *MemStore) Opens() int64 { return m.opens.Load() }

// Load implements breaker.Store.
func (m *MemStore) Load(ctx context.Context, key string) (breaker.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return breaker.Snapshot{}, err
	}
	m.ops.Add(1)
	k := sha256.Sum256([]byte(key))
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.snapshot(m.keys[k], m.clock.Now()), nil
}

// Acquire implements breaker.Store.
func (m *MemStore) Acquire(ctx context.Context, key string, l breaker.Lease) (breaker.Snapshot, bool, error) {
	if err := ctx.Err(); err != nil {
		return breaker.Snapshot{}, false, err
	}
	m.ops.Add(1)
	k := sha256.Sum256([]byte(key))
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	e := m.keys[k]
	switch {
	case e == nil, e.state == breaker.StateClosed,
		e.state == breaker.StateOpen && now.Before(e.openUntil),
		e.state == breaker.StateHalfOpen && e.token != "" && now.Before(e.leaseUntil):
		return m.snapshot(e, now), false, nil
	}
	if e.state == breaker.StateOpen {
		e.successes = 0
	}
	e.state, e.token, e.leaseUntil = breaker.StateHalfOpen, l.Token, now.Add(l.TTL)
	return m.snapshot(e, now), true, nil
}

// Report implements breaker.Store.
func (m *MemStore) Report(ctx context.Context, key string, r breaker.Report) (breaker.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return breaker.Snapshot{}, err
	}
	m.ops.Add(1)
	k := sha256.Sum256([]byte(key))
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	e := m.keys[k]
	if r.Probe != "" {
		if e == nil || e.state != breaker.StateHalfOpen || e.token != r.Probe {
			return m.snapshot(e, now), nil // a stale probe
		}
		e.token = ""
		switch r.Outcome {
		case breaker.OutcomeSuccess:
			e.successes++
			if e.successes >= max(r.Probes, 1) {
				delete(m.keys, k)
				return breaker.Snapshot{}, nil
			}
		case breaker.OutcomeFault:
			e.state, e.openUntil, e.successes = breaker.StateOpen, now.Add(r.OpenFor), 0
			m.opens.Add(1)
		}
		return m.snapshot(e, now), nil
	}
	if e != nil && e.state != breaker.StateClosed {
		return m.snapshot(e, now), nil // the call began before the breaker opened
	}
	switch r.Outcome {
	case breaker.OutcomeSuccess:
		delete(m.keys, k)
		return breaker.Snapshot{}, nil
	case breaker.OutcomeFault:
		if e == nil {
			if len(m.keys) >= MaxKeys {
				return breaker.Snapshot{}, ErrFull
			}
			e = &entry{}
			m.keys[k] = e
		}
		e.failures++
		if r.Trip && e.failures >= max(r.Failures, 1) {
			e.state, e.failures, e.openUntil = breaker.StateOpen, 0, now.Add(r.OpenFor)
			m.opens.Add(1)
		}
	}
	return m.snapshot(e, now), nil
}

func (m *MemStore) snapshot(e *entry, now time.Time) breaker.Snapshot {
	if e == nil {
		return breaker.Snapshot{}
	}
	s := breaker.Snapshot{State: e.state, Failures: e.failures}
	switch e.state {
	case breaker.StateOpen:
		s.OpenFor = e.openUntil.Sub(now)
	case breaker.StateHalfOpen:
		s.Probing = e.token != "" && now.Before(e.leaseUntil)
	}
	return s
}
