package approval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/toolmw/toolmw/state"
)

// The bounds of what the layer writes to a [Store], which every Store must
// accept (package approvaltest checks it): ids, nonces and operation ids
// are safe tokens (ASCII letters, digits and "_-.:"), rows are opaque
// bytes.
const (
	// MaxIDLen is the longest approval id, the bound of a call id
	// (toolmw.MaxCallIDLen). The layer's own ids are 36 bytes.
	MaxIDLen = 128
	// MaxNonceLen is the longest nonce. The layer's own are 32 bytes.
	MaxNonceLen = 64
	// MaxOpLen is the longest operation id of a Consume or a Cancel. The
	// layer's own are 32 bytes.
	MaxOpLen = 64
	// MaxRowBytes is the longest row: the sealed fields, and a summary of
	// at most taxonomy.MaxApprovalSummary bytes even if every byte of it
	// needs a six-byte JSON escape. A longer row read from a store is
	// corrupt.
	MaxRowBytes = 16 << 10
)

// The bounds of a [MemoryStore].
const (
	// MemoryMaxRows is how many rows a MemoryStore keeps; past it the
	// oldest (by when it was first saved) is dropped.
	MemoryMaxRows = 10_000
	// MemoryMaxBytes is how many bytes of rows a MemoryStore keeps; past it
	// the oldest rows are dropped.
	MemoryMaxBytes = 32 << 20
	// MemoryMaxNonces is how many used nonces a MemoryStore remembers; past
	// it the oldest is forgotten.
	MemoryMaxNonces = 100_000
	// MemoryMaxCancels is how many cancelled operations a MemoryStore
	// remembers for one nonce; past it Cancel fails.
	MemoryMaxCancels = 16
	// MemoryMaxCancelled is how many cancelled operations a MemoryStore
	// remembers in all; past it the oldest nonces are forgotten with
	// them.
	MemoryMaxCancelled = 100_000
)

// MemoryStore is the in-process [Store], the default: it lives and dies
// with the process, and is shared only by the layers and Desks given the
// same one. It is bounded: at most [MemoryMaxRows] rows and
// [MemoryMaxBytes] bytes of them, and [MemoryMaxNonces] used nonces with
// [MemoryMaxCancelled] cancelled operations ([MemoryMaxCancels] a nonce),
// dropping the oldest first. A dropped row fails closed: its call asks for
// approval again. A forgotten nonce could be used again only by a row
// written back into the store by code of the same process, which could as
// well call the tool itself; a forgotten cancelled operation, applied late
// by a store wrapping this one, could only spend its decision.
//
// A MemoryStore is safe for concurrent use.
type MemoryStore struct {
	mu     sync.Mutex
	rows   map[string][]byte
	order  []string // ids, oldest first
	bytes  int
	nonces map[string]*nonceRecord
	used   []string // nonces, oldest first
	// cancelled counts the cancelled operations of all the nonces.
	cancelled int

	tally *tally // of the Desks sharing the store, for package state
}

// nonceRecord is what a MemoryStore knows of one nonce.
type nonceRecord struct {
	by        string   // the operation that consumed the nonce, "" when free
	cancelled []string // the operations cancelled, at most MemoryMaxCancels
}

var (
	_ Store  = (*MemoryStore)(nil)
	_ Lister = (*MemoryStore)(nil)
)

// NewMemoryStore returns an empty in-process store.
func NewMemoryStore() *MemoryStore {
	m := &MemoryStore{rows: map[string][]byte{}, nonces: map[string]*nonceRecord{}, tally: newTally()}
	state.Register(state.Default, m, publishMemory)
	return m
}

// errTooLarge is what a MemoryStore returns for an id, a nonce, an
// operation id or a row beyond the bounds, and for a cancelled operation
// beyond MemoryMaxCancels: a store failure, not one of the sentinels.
var errTooLarge = errors.New("approval: an id, nonce, operation or row beyond the store's bounds")

func checkID(id string, max int) error {
	if id == "" || len(id) > max {
		return fmt.Errorf("%w (%d bytes)", errTooLarge, len(id))
	}
	return nil
}

// Load implements [Store]. The row returned is a copy.
func (m *MemoryStore) Load(ctx context.Context, id string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	row, ok := m.rows[id]
	if !ok {
		return nil, ErrNotFound
	}
	return append([]byte{}, row...), nil // never nil: an empty row is a row
}

// Save implements [Store]. It keeps a copy of row.
func (m *MemoryStore) Save(ctx context.Context, id string, prev, row []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkID(id, MaxIDLen); err != nil {
		return err
	}
	if len(row) > MaxRowBytes {
		return fmt.Errorf("%w (a row of %d bytes)", errTooLarge, len(row))
	}
	row = append(make([]byte, 0, len(row)), row...)
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.rows[id]
	switch {
	case prev == nil && ok, prev != nil && (!ok || string(cur) != string(prev)):
		return ErrConflict
	}
	m.bytes += len(row) - len(cur)
	m.rows[id] = row
	if !ok {
		m.order = append(m.order, id)
	}
	for len(m.order) > MemoryMaxRows || m.bytes > MemoryMaxBytes {
		old := m.order[0]
		m.order[0] = ""
		m.order = m.order[1:]
		m.bytes -= len(m.rows[old])
		delete(m.rows, old)
	}
	return nil
}

// List implements [Lister]. The rows returned are copies. It costs a sort
// of the ids after after: at most MemoryMaxRows of them.
func (m *MemoryStore) List(ctx context.Context, after string, limit int) ([]Listed, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxListPage {
		return nil, fmt.Errorf("approval: List: a limit of %d; it must be 1 to %d", limit, MaxListPage)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, min(len(m.rows), 4*limit))
	for id := range m.rows {
		if id > after {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = ids[:min(len(ids), limit)]
	out := make([]Listed, len(ids))
	for i, id := range ids {
		out[i] = Listed{ID: id, Row: append([]byte{}, m.rows[id]...)}
	}
	return out, nil
}

// Consume implements [Store].
func (m *MemoryStore) Consume(ctx context.Context, nonce, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkNonceOp(nonce, op); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	rec := m.nonces[nonce]
	switch {
	case rec == nil:
		m.remember(nonce, &nonceRecord{by: op})
		return nil
	case rec.by == op:
		return nil
	case slices.Contains(rec.cancelled, op):
		return ErrCanceled
	case rec.by != "":
		return ErrConsumed
	}
	rec.by = op
	return nil
}

// Cancel implements [Store].
func (m *MemoryStore) Cancel(ctx context.Context, nonce, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkNonceOp(nonce, op); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	rec := m.nonces[nonce]
	switch {
	case rec == nil:
		rec = &nonceRecord{}
		m.remember(nonce, rec)
	case slices.Contains(rec.cancelled, op):
		return nil
	case len(rec.cancelled) >= MemoryMaxCancels:
		return fmt.Errorf("%w (%d operations of one nonce cancelled)", errTooLarge, len(rec.cancelled))
	}
	if rec.by == op {
		rec.by = ""
	}
	rec.cancelled = append(rec.cancelled, op)
	m.cancelled++
	m.trim(nonce)
	return nil
}

func checkNonceOp(nonce, op string) error {
	if err := checkID(nonce, MaxNonceLen); err != nil {
		return err
	}
	return checkID(op, MaxOpLen)
}

// remember adds the record of a nonce the store did not know. m.mu is
// held.
func (m *MemoryStore) remember(nonce string, rec *nonceRecord) {
	m.nonces[nonce] = rec
	m.used = append(m.used, nonce)
	m.trim(nonce)
}

// trim forgets the oldest nonces, other than keep, while more are kept
// than the bounds allow. m.mu is held.
func (m *MemoryStore) trim(keep string) {
	for len(m.used) > MemoryMaxNonces || m.cancelled > MemoryMaxCancelled {
		old := m.used[0]
		m.used[0] = ""
		m.used = m.used[1:]
		if old == keep {
			// The nonce being written is not forgotten by its own write:
			// it counts as the newest. Alone it is within the bounds.
			m.used = append(m.used, old)
			continue
		}
		m.cancelled -= len(m.nonces[old].cancelled)
		delete(m.nonces, old)
	}
}

// Len returns how many rows the store holds, and how many nonces it
// remembers (used, or with cancelled operations).
func (m *MemoryStore) Len() (rows, nonces int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.rows), len(m.nonces)
}
