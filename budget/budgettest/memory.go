// Package budgettest helps test a budget.TokenStore or a budget.RunStore:
// [MemTokenStore] and [MemRunStore], in-memory stores that keep the
// contracts, and [TestTokenStore] and [TestRunStore], the conformance
// checks every store runs:
//
//	func TestConformance(t *testing.T) {
//		budgettest.TestTokenStore(t, func(t *testing.T) budget.TokenStore { return newBucket(t) })
//		budgettest.TestRunStore(t, func(t *testing.T) budget.RunStore { return newRuns(t) })
//	}
//
// The memory stores share state only between the budgets of one process:
// they stand for Redis in tests and simulations, not in production (a
// Retry or a Run without a store is the in-process budget).
package budgettest

import (
	"context"
	"crypto/sha256"
	"sync"
	"sync/atomic"

	"github.com/toolmw/toolmw/budget"
)

// MemTokenStore is a budget.TokenStore in memory: one bucket. The zero
// MemTokenStore is a bucket it has never seen, which is full. It is safe
// for concurrent use.
type MemTokenStore struct {
	ops atomic.Int64

	mu      sync.Mutex
	seen    bool
	balance int64 // thousandths of a token
}

// Apply implements budget.TokenStore. It returns ctx's error, changing
// nothing, when ctx is done.
func (m *MemTokenStore) Apply(ctx context.Context, op budget.TokenOp) (budget.TokenBalance, error) {
	if err := ctx.Err(); err != nil {
		return budget.TokenBalance{}, err
	}
	m.ops.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	capacity := max(op.Capacity, 0)
	if !m.seen {
		m.seen, m.balance = true, capacity
	}
	b := min(m.balance, capacity)
	b = min(b+max(op.Add, 0), capacity)
	b = max(b-max(op.Take, 0), 0)
	w := max(op.Withdraw, 0)
	ok := w > 0 && b >= w
	if ok {
		b -= w
	}
	m.balance = b
	return budget.TokenBalance{Balance: b, Withdrawn: ok}, nil
}

// Set sets the bucket's balance, in thousandths of a token, as if a
// replica had left it there.
func (m *MemTokenStore) Set(balance int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen, m.balance = true, balance
}

// Balance returns the bucket's balance, in thousandths of a token, and
// whether the store has seen the bucket (an unseen bucket is full).
func (m *MemTokenStore) Balance() (balance int64, seen bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.balance, m.seen
}

// Ops returns how many ops the store has applied: a Redis store's round
// trips.
func (m *MemTokenStore) Ops() int64 { return m.ops.Load() }

// MemRunStore is a budget.RunStore in memory. A tool is kept as the
// SHA-256 of its run's id and its name, so a hostile name costs no memory.
// The zero MemRunStore is empty and ready to use. It is safe for concurrent
// use.
type MemRunStore struct {
	ops atomic.Int64

	mu   sync.Mutex
	used map[[sha256.Size]byte]int
}

// Take implements budget.RunStore. It returns ctx's error, taking nothing,
// when ctx is done.
func (m *MemRunStore) Take(ctx context.Context, id, tool string, limit int) (used int, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return 0, false, err
	}
	m.ops.Add(1)
	// A run id holds no zero byte (see budget.WithID): id and tool are
	// told apart.
	k := sha256.Sum256([]byte(id + "\x00" + tool))
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used == nil {
		m.used = make(map[[sha256.Size]byte]int)
	}
	if m.used[k] >= limit {
		return m.used[k], false, nil
	}
	m.used[k]++
	return m.used[k], true, nil
}

// Ops returns how many takes the store has served: a Redis store's round
// trips.
func (m *MemRunStore) Ops() int64 { return m.ops.Load() }
