package approval

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// The bounds of what the layer writes to a [Store], which every Store must
// accept (package approvaltest checks it): ids and nonces are safe tokens
// (ASCII letters, digits and "_-.:"), rows are opaque bytes.
const (
	// MaxIDLen is the longest approval id, the bound of a call id
	// (toolmw.MaxCallIDLen). The layer's own ids are 36 bytes.
	MaxIDLen = 128
	// MaxNonceLen is the longest nonce. The layer's own are 32 bytes.
	MaxNonceLen = 64
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
)

// MemoryStore is the in-process [Store], the default: it lives and dies
// with the process, and is shared only by the layers and Desks given the
// same one. It is bounded: at most [MemoryMaxRows] rows and
// [MemoryMaxBytes] bytes of them, and [MemoryMaxNonces] used nonces,
// dropping the oldest first. A dropped row fails closed: its call asks for
// approval again. A forgotten nonce could be used again only by a row
// written back into the store by code of the same process, which could as
// well call the tool itself.
//
// A MemoryStore is safe for concurrent use.
type MemoryStore struct {
	mu     sync.Mutex
	rows   map[string][]byte
	order  []string // ids, oldest first
	bytes  int
	nonces map[string]struct{}
	used   []string // nonces, oldest first
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty in-process store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{rows: map[string][]byte{}, nonces: map[string]struct{}{}}
}

// errTooLarge is what a MemoryStore returns for an id, a nonce or a row
// beyond the bounds: a store failure, not one of the sentinels.
var errTooLarge = errors.New("approval: an id, nonce or row beyond the store's bounds")

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

// Consume implements [Store].
func (m *MemoryStore) Consume(ctx context.Context, nonce string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkID(nonce, MaxNonceLen); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.nonces[nonce]; ok {
		return ErrConsumed
	}
	m.nonces[nonce] = struct{}{}
	m.used = append(m.used, nonce)
	if len(m.used) > MemoryMaxNonces {
		delete(m.nonces, m.used[0])
		m.used[0] = ""
		m.used = m.used[1:]
	}
	return nil
}

// Len returns how many rows and used nonces the store holds.
func (m *MemoryStore) Len() (rows, nonces int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.rows), len(m.nonces)
}
