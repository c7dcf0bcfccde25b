// Package spendtest helps test a spend.Store: [MemStore], an in-memory
// Store that keeps the contract and fails or hangs on demand, and
// [TestStore], the conformance checks every Store runs:
//
//	func TestConformance(t *testing.T) {
//		spendtest.TestStore(t, func(t *testing.T) spend.Store { return newStore(t) })
//	}
//
// MemStore shares spend only between layers of one process: it stands for
// Redis in tests and simulations, not in production (a layer without a
// Store keeps to the run's Account).
package spendtest

import (
	"context"
	"crypto/sha256"
	"sync"

	"github.com/toolmw/toolmw/internal/testrig/kitrig"
)

// MemStore is a spend.Store in memory, keeping the contract on operation
// ids: each op's effect applies once. A run id is kept as its SHA-256, so
// its length costs no memory. Its zero value is an empty store; it is
// safe for concurrent use.
//
// Its Fail, Hang, Late and Calls take an operation's name: "reserve" or
// "settle".
type MemStore struct {
	kitrig.Faults

	mu   sync.Mutex
	runs map[[sha256.Size]byte]*run
	peak int64 // the highest spent+held of any run, measured after each Reserve
}

// run is the spend of one run, in units.
type run struct {
	spent, held int64
	ops         map[string]int64 // op → what it holds, or -1 once settled
}

// State returns what the run named id spent and holds, in units.
func (m *MemStore) State(id string) (spent, held int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.run(id)
	return r.spent, r.held
}

// Peak returns the highest spent plus held of any run after a Reserve.
func (m *MemStore) Peak() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak
}

// run returns the spend of the run named id. m.mu is held.
func (m *MemStore) run(id string) *run {
	k := sha256.Sum256([]byte(id))
	r := m.runs[k]
	if r == nil {
		if m.runs == nil {
			m.runs = map[[sha256.Size]byte]*run{}
		}
		r = &run{ops: map[string]int64{}}
		m.runs[k] = r
	}
	return r
}

// Reserve holds amount for op if the run's spent and held leave room for
// it within limit, once per op.
func (m *MemStore) Reserve(ctx context.Context, id string, limit, amount int64, op string) (int64, int64, bool, error) {
	if err := m.Enter(ctx, "reserve", func() { m.reserve(id, limit, amount, op) }); err != nil {
		return 0, 0, false, err
	}
	spent, held, ok := m.reserve(id, limit, amount, op)
	return spent, held, ok, nil
}

// reserve is Reserve's effect.
func (m *MemStore) reserve(id string, limit, amount int64, op string) (spent, held int64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.run(id)
	if h, ok := r.ops[op]; ok {
		return r.spent, r.held, h >= 0
	}
	if r.spent+r.held+amount > limit {
		return r.spent, r.held, false
	}
	r.held += amount
	r.ops[op] = amount
	m.peak = max(m.peak, r.spent+r.held)
	return r.spent, r.held, true
}

// Settle ends op: what it holds is no longer held, and the run's spent
// goes up by charge, once per op.
func (m *MemStore) Settle(ctx context.Context, id, op string, charge int64) error {
	if err := m.Enter(ctx, "settle", func() { m.settle(id, op, charge) }); err != nil {
		return err
	}
	m.settle(id, op, charge)
	return nil
}

// settle is Settle's effect.
func (m *MemStore) settle(id, op string, charge int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.run(id)
	if h, ok := r.ops[op]; !ok || h >= 0 {
		r.held = max(r.held-h, 0)
		r.spent += charge
		r.ops[op] = -1
	}
}
