package approval

import (
	"context"
	"errors"
)

// Store keeps approval requests and decisions beyond one call, and beyond
// one process when it is durable. It is deliberately dumb: it holds opaque
// rows under approval ids and single-use markers under nonces. The layer
// seals every row it writes (a keyed MAC over the approval id, the tool,
// the digest of the arguments, the decision, its expiry and its nonce) and
// verifies every row it reads, so a store cannot approve anything on its
// own: a corrupt, forged or replayed row fails closed. A Store that
// panics fails closed too: the layer recovers (see [ErrStorePanicked]).
//
// Implementations must be safe for concurrent use, also by several
// processes sharing the same backing store: Save is a compare-and-swap and
// Consume succeeds once per nonce across all of them.
type Store interface {
	// Load returns the row stored under id, or an error matching
	// [ErrNotFound] when there is none.
	Load(ctx context.Context, id string) ([]byte, error)

	// Save stores row under id when the row stored now is prev: with a nil
	// prev, only when id has no row. Otherwise it stores nothing and
	// returns an error matching [ErrConflict].
	Save(ctx context.Context, id string, prev, row []byte) error

	// Consume records that the decision with this nonce was used, or
	// retired (revoked by a Deny, replaced after it expired): either way
	// it may never approve again. Of all the calls with one nonce, across
	// every process sharing the store, exactly one returns nil; the others
	// return an error matching [ErrConsumed]. A store must remember a
	// consumed nonce at least as long as the decision could still be
	// valid ([MaxTTL] after it was made).
	Consume(ctx context.Context, nonce string) error
}

// The errors a Store returns for the outcomes the layer acts on. Any other
// error is a store failure, and the layer fails closed on it.
var (
	ErrNotFound = errors.New("approval: no such approval")
	ErrConflict = errors.New("approval: the stored row changed")
	ErrConsumed = errors.New("approval: the decision was already used")
)
