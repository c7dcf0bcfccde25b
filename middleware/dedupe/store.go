package dedupe

import (
	"context"
	"errors"
	"time"
)

// A Store keeps call records outside the process, so that a call is made
// once across restarts, crashes and replicas: the record of a call in a
// named run (budget.WithID) is claimed before the tool runs and finished
// with its outcome after. adapters/redisstate implements it on Redis,
// adapters/sqlstore on SQLite and PostgreSQL; dedupetest.TestStore is the
// conformance kit every Store runs.
//
// A record is named by a run id and a key. The run id is a valid run id
// (see budget.WithID) and the key 64 hexadecimal digits the layer makes
// (a hash of the tool's name and the call's id or canonical arguments),
// but neither is sanitised by the Store's callers: treat both as hostile
// (bound them, hash them). A record is started, held by the operation that
// claimed it (op: 32 hexadecimal digits, new for every call) until its
// lease ends, or done, holding the call's outcome: at most [MaxOutcome]
// bytes the layer encoded and decodes, opaque to the Store. Times are kept
// to the millisecond; every time a Store compares is one the layer passed
// (its clock), never the Store's own, so that replicas agree on a lease
// however their clocks and the Store's differ from each other within a
// lease.
//
// A Store keeps each record at least keep after its last write (the
// layer's window: [WithWindow]) and then forgets it; it should forget it
// by itself, since nothing tells it that a run has ended. A record
// forgotten is absent: the next claim makes a new one.
//
// Implementations must be safe for concurrent use, also by several
// processes sharing the same backing store — of all the ops claiming one
// record at once, across every process, one gets it — and return soon
// after ctx is done. An answer that did not arrive may have been applied,
// or may still be, late: the layer does not take it for one that was not.
type Store interface {
	// Claim makes the record of key in run, started by c.Op with its
	// lease until c.Until, when there is none (or the one there was
	// expired at c.Now: kept past its keep), or when c.Takeover is set and
	// the record is started, of c.Args, and its lease ended at or before
	// c.Now. It
	// returns the record as it is after the claim: c.Op's own when it
	// claimed it, another's started or done record otherwise, unchanged.
	// A Claim by the op that holds the record returns it again (the same
	// claim, sent twice), its lease as it was.
	Claim(ctx context.Context, run, key string, c Claim) (Record, error)

	// Renew moves the lease of the record op holds to until and keeps the
	// record at least keep from now on. It returns an error matching
	// [ErrLost] when op holds the record no more: it is done, another op
	// took it over, or it is gone.
	Renew(ctx context.Context, run, key, op string, until, now time.Time, keep time.Duration) error

	// Finish makes the record op holds done, holding outcome (at most
	// MaxOutcome bytes; more is refused with an error matching
	// [ErrTooLarge]), kept at least keep from now on. A Finish of a record
	// already done by op with the same outcome returns nil (the same
	// Finish, sent twice). It returns an error matching [ErrLost] when op
	// holds the record no more: another op took it over, or it is gone.
	Finish(ctx context.Context, run, key, op string, outcome []byte, now time.Time, keep time.Duration) error

	// Release deletes the record op holds while it is started: the call
	// did not run, or had no effect, and a repeat may run it. A record
	// done, held by another op or absent is left as it is, and Release
	// returns nil: op holds nothing.
	Release(ctx context.Context, run, key, op string) error
}

// Claim is what the layer asks of a Store when a call is about to run.
type Claim struct {
	// Op names the call claiming the record: 32 hexadecimal digits.
	Op string
	// Args is the digest of the call's arguments, 64 hexadecimal digits,
	// kept with the record: a call with the record's id and other
	// arguments is not its repeat.
	Args string
	// Now is the layer's time. A lease that ends at or before it has
	// ended; a record whose keep ended at or before it is absent.
	Now time.Time
	// Until is when the lease of a record this claim makes ends.
	Until time.Time
	// Keep is how long, from Now, a record this claim makes is kept at
	// least.
	Keep time.Duration
	// Takeover lets the claim take a started record with the same Args
	// whose lease ended (its holder died, or lost touch with the Store):
	// set for an idempotent call, which may run again. A record of other
	// arguments is never taken over.
	Takeover bool
}

// Record is a call's record as a Store holds it.
type Record struct {
	// Op is the operation that made the record, or took it over last.
	Op string
	// Args is the digest of the arguments of the call that made it.
	Args string
	// Until is when the lease of a started record ends.
	Until time.Time
	// Done says the call ended and Outcome holds how.
	Done bool
	// Outcome is the outcome of a done record, as the layer encoded it.
	Outcome []byte
}

// MaxOutcome bounds the bytes of a record's outcome: a result whose
// encoding is larger is recorded as dropped (a repeat gets
// tool-failed/duplicate_result_dropped, and the tool is not run again).
const MaxOutcome = 256 << 10

// The errors a Store returns for the outcomes the layer acts on. Any other
// error is a store failure; one wrapping store.ErrCorrupt says the record
// does not parse.
var (
	// ErrLost: the op holds the record no more.
	ErrLost = errors.New("dedupe: the call record is held by another operation, or gone")
	// ErrTooLarge: an outcome, a run id or a key over a Store's bounds.
	ErrTooLarge = errors.New("dedupe: the call record is over the store's bounds")
)
