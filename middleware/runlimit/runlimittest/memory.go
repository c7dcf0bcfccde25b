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
	"sync/atomic"
)

// MemStore is a runlimit.Store in memory, keeping the contract on
// operation ids: each op's effect applies once. A run id and a tool name
// are kept as their SHA-256, so their length costs no memory. Its zero
// value is an empty store; it is safe for concurrent use.
type MemStore struct {
	mu   sync.Mutex
	used map[[sha256.Size]byte]int
	ops  map[[sha256.Size]byte]byte // (run, op) → 't' taken or recorded, 'r' released or cancelled
	errs map[string]error           // op name → what it returns
	hang bool                       // Take waits for its context

	takes, releases, records atomic.Int64
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

// Fail makes the operation named op ("take", "release" or "record")
// return err, without effect; nil makes it work again.
func (m *MemStore) Fail(op string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.errs == nil {
		m.errs = map[string]error{}
	}
	m.errs[op] = err
}

// Hang makes Take wait for its context to end and return its error (true),
// or work again (false).
func (m *MemStore) Hang(hang bool) {
	m.mu.Lock()
	m.hang = hang
	m.mu.Unlock()
}

// Calls returns how many times the operation named op ("take", "release"
// or "record") was called.
func (m *MemStore) Calls(op string) int64 {
	switch op {
	case "take":
		return m.takes.Load()
	case "release":
		return m.releases.Load()
	case "record":
		return m.records.Load()
	}
	return 0
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
	m.takes.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hang {
		m.mu.Unlock()
		<-ctx.Done()
		m.mu.Lock()
		return false, ctx.Err()
	}
	if err := m.errs["take"]; err != nil {
		return false, err
	}
	if st, ok := m.ops[key(id, op)]; ok {
		return st == 't', nil
	}
	if m.used[key(id, tool)] >= limit {
		return false, nil
	}
	m.count(id, tool, op, 1)
	return true, nil
}

// Release gives back the slot op took, or cancels op.
func (m *MemStore) Release(_ context.Context, id, tool, op string) error {
	m.releases.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.errs["release"]; err != nil {
		return err
	}
	switch m.ops[key(id, op)] {
	case 't':
		m.count(id, tool, op, -1)
	case 0:
		m.count(id, tool, op, 0)
	}
	return nil
}

// Record counts op, once, without checking a limit.
func (m *MemStore) Record(_ context.Context, id, tool, op string) error {
	m.records.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.errs["record"]; err != nil {
		return err
	}
	if m.ops[key(id, op)] != 't' {
		m.count(id, tool, op, 1)
	}
	return nil
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
