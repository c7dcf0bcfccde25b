// Package dedupetest helps test a dedupe.Store: [MemStore], an in-memory
// Store that keeps the contract and fails or hangs on demand, and
// [TestStore], the conformance checks every Store runs:
//
//	func TestConformance(t *testing.T) {
//		dedupetest.TestStore(t, func(t *testing.T) dedupe.Store { return newStore(t) })
//	}
//
// MemStore shares records only between layers of one process: it stands
// for Redis or a database in tests and simulations, not in production (a
// layer without a Store keeps its records in process).
package dedupetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/toolmw/toolmw/internal/testrig/kitrig"
	"github.com/toolmw/toolmw/middleware/dedupe"
)

// MemStore is a dedupe.Store in memory. A run id and a key are kept as the
// SHA-256 of both, so their length costs no memory; a record is forgotten
// when a claim finds it past its keep. Its zero value is an empty store;
// it is safe for concurrent use.
//
// Its Fail, Hang, Late and Calls take an operation's name: "claim",
// "renew", "finish" or "release".
type MemStore struct {
	kitrig.Faults

	mu      sync.Mutex
	records map[[sha256.Size]byte]*memRecord
}

type memRecord struct {
	op, args string
	until    int64 // unix milliseconds
	expires  int64 // unix milliseconds
	done     bool
	outcome  []byte
}

func (r *memRecord) record() dedupe.Record {
	rec := dedupe.Record{Op: r.op, Args: r.args, Done: r.done}
	if r.done {
		rec.Outcome = bytes.Clone(r.outcome)
	} else {
		rec.Until = time.UnixMilli(r.until)
	}
	return rec
}

// name returns the SHA-256 of run and key, kept apart.
func name(run, key string) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for i, l := 0, len(run); i < 8; i++ {
		n[i] = byte(l >> (8 * i))
	}
	h.Write(n[:])
	h.Write([]byte(run))
	h.Write([]byte(key))
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// lookup returns the record of k alive at now (unix milliseconds), or nil.
// m.mu is held.
func (m *MemStore) lookup(k [sha256.Size]byte, now int64) *memRecord {
	r := m.records[k]
	if r != nil && r.expires <= now {
		delete(m.records, k)
		return nil
	}
	return r
}

// Len returns how many records the store holds, those past their keep
// included until a claim finds them.
func (m *MemStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.records)
}

// Claim makes the record of key in run, started by c.Op, when there is
// none alive at c.Now, or takes over a started one of c.Args whose lease
// ended, with c.Takeover; it returns the record as it is after.
func (m *MemStore) Claim(ctx context.Context, run, key string, c dedupe.Claim) (dedupe.Record, error) {
	if err := m.Enter(ctx, "claim", func() { m.claim(run, key, c) }); err != nil {
		return dedupe.Record{}, err
	}
	return m.claim(run, key, c), nil
}

func (m *MemStore) claim(run, key string, c dedupe.Claim) dedupe.Record {
	k, now := name(run, key), c.Now.UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.lookup(k, now)
	switch {
	case r == nil:
		if m.records == nil {
			m.records = map[[sha256.Size]byte]*memRecord{}
		}
		r = &memRecord{op: c.Op, args: c.Args, until: c.Until.UnixMilli(),
			expires: max(now+c.Keep.Milliseconds(), c.Until.UnixMilli())}
		m.records[k] = r
	case c.Takeover && !r.done && r.op != c.Op && r.args == c.Args && r.until <= now:
		r.op, r.until = c.Op, c.Until.UnixMilli()
		r.expires = max(r.expires, now+c.Keep.Milliseconds(), r.until)
	}
	return r.record()
}

// Renew moves the lease of the record op holds.
func (m *MemStore) Renew(ctx context.Context, run, key, op string, until, now time.Time, keep time.Duration) error {
	if err := m.Enter(ctx, "renew", func() { m.renew(run, key, op, until, now, keep) }); err != nil {
		return err
	}
	return m.renew(run, key, op, until, now, keep)
}

func (m *MemStore) renew(run, key, op string, until, now time.Time, keep time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.lookup(name(run, key), now.UnixMilli())
	if r == nil || r.done || r.op != op {
		return dedupe.ErrLost
	}
	r.until = until.UnixMilli()
	r.expires = max(r.expires, now.UnixMilli()+keep.Milliseconds(), r.until)
	return nil
}

// Finish makes the record op holds done with outcome.
func (m *MemStore) Finish(ctx context.Context, run, key, op string, outcome []byte, now time.Time, keep time.Duration) error {
	if len(outcome) > dedupe.MaxOutcome {
		return dedupe.ErrTooLarge
	}
	if err := m.Enter(ctx, "finish", func() { m.finish(run, key, op, outcome, now, keep) }); err != nil {
		return err
	}
	return m.finish(run, key, op, outcome, now, keep)
}

func (m *MemStore) finish(run, key, op string, outcome []byte, now time.Time, keep time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.lookup(name(run, key), now.UnixMilli())
	switch {
	case r == nil || r.op != op:
		return dedupe.ErrLost
	case r.done && bytes.Equal(r.outcome, outcome):
		return nil
	case r.done:
		return dedupe.ErrLost
	}
	r.done, r.outcome, r.until = true, bytes.Clone(outcome), 0
	r.expires = now.UnixMilli() + keep.Milliseconds()
	return nil
}

// Release deletes the record op holds while it is started.
func (m *MemStore) Release(ctx context.Context, run, key, op string) error {
	if err := m.Enter(ctx, "release", func() { m.release(run, key, op) }); err != nil {
		return err
	}
	m.release(run, key, op)
	return nil
}

func (m *MemStore) release(run, key, op string) {
	k := name(run, key)
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.records[k]; r != nil && !r.done && r.op == op {
		delete(m.records, k)
	}
}

var _ dedupe.Store = (*MemStore)(nil)
