package store

import (
	"context"
	"errors"
	"time"
)

// Results keeps tools' results outside the process, shared by the layers
// that answer from a result made before: the cache (middleware/cache) and
// the fallback's last good results (middleware/fallback). Both key a
// result by the same rule — the tool's name, the partition the call is
// in and the canonical form of its arguments, hashed — so a cache and a
// fallback given one Results share their entries, and every replica
// given the same Results shares them too. adapters/redisstate implements
// it on Redis; store/storetest has an in-memory one and the conformance
// kit.
//
// A value is what the layers encode a result as: opaque bytes, at most
// [MaxResultBytes]; a Results keeps them as given and returns them as
// kept. A key is the layers' hash, 64 hexadecimal digits, but a Results
// must treat any key as hostile (bound it, hash it). Times are kept to the
// millisecond.
//
// Each method is one operation, bounded by the layer with a context whose
// deadline is the store timeout (WithTimeout) and the call's own; it must
// return soon after ctx is done. Implementations must be safe for
// concurrent use.
type Results interface {
	// Get returns the value kept under key and when the result it holds
	// was made, or an error matching [ErrNotFound] when none is kept (none
	// was set, or its time to live passed). A value that does not parse —
	// a stored time that is not one, a value over MaxResultBytes, state of
	// another shape — is an error wrapping [ErrCorrupt]: the layers then
	// call the tool (or serve no fallback), as for a value not kept, and
	// report it, without leaving the store alone, since it answered.
	Get(ctx context.Context, key string) (value []byte, made time.Time, err error)
	// Set keeps value, a result made at made, under key for ttl from now
	// (by the store's clock; a ttl under a millisecond counts as one),
	// unless a value made later (by more than the millisecond) is kept
	// there: a slower call that finished last does not replace a newer
	// result with an older one. A value made at the same millisecond or
	// later replaces what is kept, and its ttl starts again. A value over
	// MaxResultBytes is refused with an error, and nothing is kept. A
	// corrupt value kept under key is replaced.
	Set(ctx context.Context, key string, value []byte, made time.Time, ttl time.Duration) error
}

// MaxResultBytes bounds a value kept in a [Results]: the layers do not
// keep a result whose encoding is longer, and a store answering with a
// longer value answers with corrupt state.
const MaxResultBytes = 1 << 20

// ErrNotFound is what a store returns, or wraps, for a key under which
// nothing is kept.
var ErrNotFound = errors.New("store: nothing is kept under the key")
