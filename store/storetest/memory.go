// Package storetest helps test a store.Results: [MemResults], an
// in-memory Results that keeps the contract and fails or hangs on demand,
// and [TestResults], the conformance checks every Results runs:
//
//	func TestConformance(t *testing.T) {
//		storetest.TestResults(t, func(t *testing.T) store.Results { return newStore(t) })
//	}
//
// MemResults shares results only between layers of one process, and holds
// each value until its time to live passes, with no bound on how many: it
// stands for Redis in tests and simulations, not in production (a layer
// without a store keeps its results in process, bounded).
package storetest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/internal/testrig/kitrig"
	"github.com/toolmw/toolmw/store"
)

// MemResults is a store.Results in memory. A key is kept as its SHA-256,
// so its length costs no memory; a value is copied in and out. Its Clock
// (nil: the system clock) tells when a value's time to live passes, and
// makes it forgotten then. Its zero value is an empty store; it is safe
// for concurrent use.
//
// Its Fail, Hang, Late and Calls take an operation's name: "get" or
// "set".
type MemResults struct {
	kitrig.Faults
	Clock clock.Clock

	mu sync.Mutex
	m  map[[sha256.Size]byte]memEntry
}

type memEntry struct {
	value   []byte
	made    int64     // unix milliseconds
	expires time.Time // by Clock
}

// Get returns the value kept under key and when it was made, to the
// millisecond, or store.ErrNotFound.
func (m *MemResults) Get(ctx context.Context, key string) ([]byte, time.Time, error) {
	if err := m.Enter(ctx, "get", func() {}); err != nil {
		return nil, time.Time{}, err
	}
	now := clock.Or(m.Clock).Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	k := sha256.Sum256([]byte(key))
	e, ok := m.m[k]
	if !ok || !now.Before(e.expires) {
		delete(m.m, k)
		return nil, time.Time{}, store.ErrNotFound
	}
	return append([]byte{}, e.value...), time.UnixMilli(e.made), nil
}

// Set keeps value under key, made at made, for ttl, unless a value made
// later is kept.
func (m *MemResults) Set(ctx context.Context, key string, value []byte, made time.Time, ttl time.Duration) error {
	if len(value) > store.MaxResultBytes {
		return fmt.Errorf("storetest: a value of %d bytes, over store.MaxResultBytes", len(value))
	}
	value = append([]byte{}, value...)
	if err := m.Enter(ctx, "set", func() { m.set(key, value, made, ttl) }); err != nil {
		return err
	}
	m.set(key, value, made, ttl)
	return nil
}

// set is Set's effect.
func (m *MemResults) set(key string, value []byte, made time.Time, ttl time.Duration) {
	now := clock.Or(m.Clock).Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[[sha256.Size]byte]memEntry{}
	}
	k := sha256.Sum256([]byte(key))
	ms := made.UnixMilli()
	if e, ok := m.m[k]; ok && now.Before(e.expires) && e.made > ms {
		return
	}
	m.m[k] = memEntry{value: value, made: ms, expires: now.Add(max(ttl, time.Millisecond))}
}

// Len returns how many values are kept, their time to live passed or not.
func (m *MemResults) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}
