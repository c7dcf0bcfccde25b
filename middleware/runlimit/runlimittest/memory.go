// Package runlimittest helps test a runlimit.Store: [MemStore], an
// in-memory Store that keeps the contract and fails or hangs on demand,
// and [TestStore], the conformance checks every Store runs:
//
//	func TestConformance(t *testing.T) {
//		runlimittest.TestStore(t, func(t *testing.T) runlimit.Store { return newStore(t) })
//	}
//
// MemStore shares counts only between layers of one process: it stands
// for Redis in tests and simulations, not in production (a layer without
// a Store counts in process).
package runlimittest

import (
	"context"
	"crypto/sha256"
	"sync"

	"github.com/toolmw/toolmw/internal/testrig/kitrig"
)

// MemStore is a runlimit.Store in memory, keeping the contract on
// operation ids: each op's effect applies once. A run id and a tool name
// are kept as their SHA-256, so their length costs no memory. Its zero
// value is an empty store; it is safe for concurrent use.
//
// Its Fail, Hang, Late and Calls take an operation's name: "take", "release"
// or "record".
type MemStore struct {
	kitrig.Faults

	mu   sync.Mutex
	used map[[sha256.Size]byte]int
	ops  map[[sha256.Size]byte]byte // (run, op) → 't' taken or recorded, 'r' released or cancelled
}

// key returns the SHA-256 of a and b, kept apart.
func key(a, b string) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for i, l := 0, len(a); i < 8; i++ {
		n[i] = byte(l >> (8 * i))
	}
	h.Write(n[:])
	h.Write([]byte(a))
	h.Write([]byte(b))
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// Count returns the calls of tool counted in the run named id.
func (m *MemStore) Count(id, tool string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used[key(id, tool)]
}

// Take admits the call op if fewer than limit calls of tool are counted in
// the run, once per op.
func (m *MemStore) Take(ctx context.Context, id, tool string, limit int, op string) (bool, error) {
	if err := m.Enter(ctx, "take", func() { m.take(id, tool, limit, op) }); err != nil {
		return false, err
	}
	return m.take(id, tool, limit, op), nil
}

// take is Take's effect.
func (m *MemStore) take(id, tool string, limit int, op string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.ops[key(id, op)]; ok {
		return st == 't'
	}
	if m.used[key(id, tool)] >= limit {
		return false
	}
	m.count(id, tool, op, 1)
	return true
}

// Release gives back the slot op took, or cancels op.
func (m *MemStore) Release(ctx context.Context, id, tool, op string) error {
	if err := m.Enter(ctx, "release", func() { m.release(id, tool, op) }); err != nil {
		return err
	}
	m.release(id, tool, op)
	return nil
}

// release is Release's effect.
func (m *MemStore) release(id, tool, op string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch m.ops[key(id, op)] {
	case 't':
		m.count(id, tool, op, -1)
	case 0:
		m.count(id, tool, op, 0)
	}
}

// Record counts op, once, without checking a limit.
func (m *MemStore) Record(ctx context.Context, id, tool, op string) error {
	if err := m.Enter(ctx, "record", func() { m.record(id, tool, op) }); err != nil {
		return err
	}
	m.record(id, tool, op)
	return nil
}

// record is Record's effect.
func (m *MemStore) record(id, tool, op string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ops[key(id, op)] != 't' {
		m.count(id, tool, op, 1)
	}
}

// count adds d to the count of tool in run id, never below zero, and marks
// op taken (d > 0) or released. m.mu is held.
func (m *MemStore) count(id, tool, op string, d int) {
	if m.used == nil {
		m.used, m.ops = map[[sha256.Size]byte]int{}, map[[sha256.Size]byte]byte{}
	}
	k := key(id, tool)
	m.used[k] = max(m.used[k]+d, 0)
	m.ops[key(id, op)] = 'r'
	if d > 0 {
		m.ops[key(id, op)] = 't'
	}
}
