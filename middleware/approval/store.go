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
// processes sharing the same backing store: Save is a compare-and-swap,
// Consume succeeds once per nonce across all of them, and Consume and
// Cancel of one nonce are atomic with respect to each other.
//
// # Operations whose answer never arrived
//
// Every Consume carries an operation id, op: 1 to [MaxOpLen] bytes of
// ASCII letters, digits and "_-.:", new for every attempt to use or retire
// a decision. The store records which op consumed a nonce. When the layer
// cannot learn what became of a Consume (it failed, or did not answer
// within the store timeout, and the store may still apply it later), and
// the call will not run, it calls Cancel with the same op: the nonce is
// free again if that op consumed it, and the op can never consume it
// later. So a decision is used by an execution or not at all, never spent
// by a call that did not run. A Consume that returned nil is never
// cancelled (its call runs), nor is one that retires a decision (a Deny,
// the replacement of an expired approval).
type Store interface {
	// Load returns the row stored under id, or an error matching
	// [ErrNotFound] when there is none.
	Load(ctx context.Context, id string) ([]byte, error)

	// Save stores row under id when the row stored now is prev: with a nil
	// prev, only when id has no row. Otherwise it stores nothing and
	// returns an error matching [ErrConflict].
	Save(ctx context.Context, id string, prev, row []byte) error

	// Consume records that op used the decision with this nonce, or
	// retired it (revoked by a Deny, replaced after it expired): either
	// way it may never approve again. Of all the ops consuming one nonce,
	// across every process sharing the store, exactly one gets nil, unless
	// Cancel frees the nonce again; the others get an error matching
	// [ErrConsumed]. A Consume by the op that holds the nonce returns nil
	// again (the same attempt, sent twice), and one by an op cancelled
	// before consumes nothing and returns an error matching
	// [ErrCanceled]. A store must remember a consumed nonce, and which op
	// consumed it, at least as long as the decision could still be valid
	// ([MaxTTL] after it was made).
	Consume(ctx context.Context, nonce, op string) error

	// Cancel undoes op's Consume of nonce, whether it was applied already,
	// will be applied later or never: in one atomic step, a nonce consumed
	// by op is freed, and op is recorded as cancelled, so that a Consume of
	// op arriving later consumes nothing. A nonce consumed by another op
	// stays consumed. Cancelling an op again is the same as once; it
	// returns nil when op holds the nonce no more and never will. A store
	// remembers a cancelled op as long as a consumed nonce, and may bound
	// how many cancelled ops it keeps for one nonce (at least 8): past its
	// bound, Cancel changes nothing and returns an error.
	Cancel(ctx context.Context, nonce, op string) error
}

// The errors a Store returns for the outcomes the layer acts on. Any other
// error is a store failure, and the layer fails closed on it.
var (
	ErrNotFound = errors.New("approval: no such approval")
	ErrConflict = errors.New("approval: the stored row changed")
	ErrConsumed = errors.New("approval: the decision was already used")
	// ErrCanceled: a Consume whose op was cancelled before; it consumed
	// nothing.
	ErrCanceled = errors.New("approval: the operation was cancelled before it was applied")
)

// Lister is a [Store] that can list the rows it holds, a page at a time:
// what [Desk.List] needs. It is optional; a Desk over a Store without it
// lists nothing ([ErrNotListable]).
//
// Implementations must be safe for concurrent use. A listing is not a
// snapshot: a row saved or dropped while pages are read may be listed or
// not, but no row is listed twice in one pass and none held throughout is
// missed.
type Lister interface {
	// List returns at most limit rows (1 to [MaxListPage]) whose ids sort
	// after after (bytewise; "" lists from the first), in ascending id
	// order. Fewer than limit rows means there are no more.
	List(ctx context.Context, after string, limit int) ([]Listed, error)
}

// Listed is one row of a listing: the id it is stored under, and the row
// as Load would return it. The Desk checks the row as it checks every row
// it reads.
type Listed struct {
	ID  string
	Row []byte
}

// MaxListPage is the most rows a [Lister] is asked for at once.
const MaxListPage = 500

// ErrNotListable: the Desk's store does not implement [Lister].
var ErrNotListable = errors.New("approval: the store cannot list its requests")
