// Package ratelimittest helps test a ratelimit.Store: [MemStore], an
// in-memory Store that keeps the contract on a clock the test controls,
// and [TestStore], the conformance checks every Store runs:
//
//	func TestConformance(t *testing.T) {
//		ratelimittest.TestStore(t, func(t *testing.T) ratelimit.Store { return newStore(t) })
//	}
//
// MemStore shares limits only between layers of one process: it stands for
// Redis in tests and simulations, not in production (use ratelimit.WithShared
// or ratelimit.WithKey within a process).
package ratelimittest

import (
	"context"
	"crypto/sha256"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/ratelimit"
)

// MaxKeys bounds how many keys a [MemStore] keeps whose bucket is not full
// (a full bucket is not kept: a missing key is one). A key is kept as its
// SHA-256, so its length is not bounded and costs no memory.
const MaxKeys = 10_000

// ErrFull is the error of a [MemStore] asked to keep a key beyond MaxKeys.
var ErrFull = errors.New("ratelimittest: the store holds MaxKeys keys")

// MemStore is a ratelimit.Store in memory, on a clock: a limit by GCRA (the
// generic cell rate algorithm), as adapters/redisstate keeps one. It is safe for
// concurrent use.
type MemStore struct {
	clock clock.Clock

	mu  sync.Mutex
	tat map[[sha256.Size]byte]time.Time // by the SHA-256 of the key: keys are hostile
}

// NewMemStore returns an empty store on clk (nil means clock.System).
func NewMemStore(clk clock.Clock) *MemStore {
	return &MemStore{clock: clock.Or(clk), tat: map[[sha256.Size]byte]time.Time{}}
}

// Admit implements ratelimit.Store. Each key holds its theoretical arrival
// time (TAT): a call is admitted when the TAT after it, less Burst
// intervals, is not in the future; otherwise after that wait if it is
// within MaxWait (the slot is reserved), and refused with that wait if not.
func (m *MemStore) Admit(ctx context.Context, r ratelimit.Request) (ratelimit.Decision, error) {
	if err := ctx.Err(); err != nil {
		return ratelimit.Decision{}, err
	}
	interval := max(r.Interval, 1)
	span := time.Duration(math.MaxInt64) // burst × interval, saturated
	if burst := int64(max(r.Burst, 1)); burst <= math.MaxInt64/int64(interval) {
		span = time.Duration(burst) * interval
	}
	k := sha256.Sum256([]byte(r.Key))
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	tat, kept := m.tat[k]
	if !kept && len(m.tat) >= MaxKeys && !m.sweep(now) {
		return ratelimit.Decision{}, ErrFull
	}
	if tat.Before(now) {
		tat = now
	}
	next := tat.Add(interval)
	wait := next.Sub(now) - span
	if wait > r.MaxWait {
		return ratelimit.Decision{Wait: wait}, nil
	}
	m.tat[k] = next
	return ratelimit.Decision{Allowed: true, Wait: max(wait, 0)}, nil
}

// sweep drops the keys whose bucket is full again at now and reports
// whether there is room for one more.
func (m *MemStore) sweep(now time.Time) bool {
	for k, tat := range m.tat {
		if !tat.After(now) {
			delete(m.tat, k)
		}
	}
	return len(m.tat) < MaxKeys
}
