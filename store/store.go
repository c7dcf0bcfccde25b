package store

import (
	"errors"
	"fmt"
	"time"
)

// DefaultTimeout is how long a layer waits for one operation of its store
// by default before it decides on its own state (or, for a layer that
// fails closed, refuses the call).
const DefaultTimeout = 50 * time.Millisecond

// Rest is how long a layer leaves its store alone after it failed: calls
// are decided on the replica's own state meanwhile, so an outage costs at
// most one timeout per rest, not one per call, and the store is tried again
// after it.
const Rest = 250 * time.Millisecond

// MaxPending bounds the operations a layer keeps for its store while the
// store is down (a slot given back, a call written back, a spend settled);
// past it the oldest is dropped and reported with [ErrDropped]. They are at
// most a few hundred bytes each: a few MiB in all.
const MaxPending = 10000

// GiveUp is how long an operation a layer keeps for its store is tried
// before it is dropped and reported with [ErrDropped]: longer than any
// failover, shorter than a run's state lives in a store.
const GiveUp = 10 * time.Minute

// ErrResting is the Err of an [Error] for a call decided without the store
// because the store failed moments ago (within [Rest]).
var ErrResting = errors.New("store: the store failed moments ago; deciding without it")

// ErrCorrupt is what a store returns, wrapped, when the state it keeps does
// not parse: garbage, a negative or out-of-range number, a key of another
// type — what a broken or hostile writer left. Each port's documentation
// says how its layer decides on such an answer; none counts it as room.
var ErrCorrupt = errors.New("store: the stored state does not parse")

// ErrDropped is wrapped by the Err of an [Error] for an operation a layer
// stopped trying to bring to its store: [GiveUp] passed, or [MaxPending]
// others waited. The store may never learn of it.
var ErrDropped = errors.New("store: the operation never reached the store and was dropped")

// Error reports an operation a layer's store did not complete: it failed,
// did not answer within the timeout, answered with corrupt state, or was not
// asked because it failed moments ago.
type Error struct {
	// Layer names the layer: "breaker", "ratelimit", "runlimit", "spend",
	// "approval", "dedupe", "retry_budget", "run_budget", "cache" or
	// "fallback" (the names of toolmw.Call.Degraded).
	Layer string
	// Op names the operation, as the layer's Store documentation does
	// ("take", "release", "settle", …).
	Op string
	// Key is what the operation was about, when the port has one: the
	// tool's name (ratelimit), the breaker's name (breaker), the result's
	// key (cache, fallback: a hash); "" otherwise.
	// It may be as hostile as the key the layer gave the store.
	Key string
	// Err is the store's error; context.DeadlineExceeded when it did not
	// answer in time; [ErrResting] when it was not asked; an error wrapping
	// [ErrCorrupt] or [ErrDropped]. It may name the store's address: it is
	// for the operator's metrics and logs, not for the model.
	Err error
	// Refused says the call was refused because of it (the layer fails
	// closed); false means the call was decided on the replica's own state,
	// or the operation came after the call.
	Refused bool
}

// Error returns the layer, the operation and the store's error.
func (e Error) Error() string {
	return fmt.Sprintf("%s store %s: %v", e.Layer, e.Op, e.Err)
}

// Unwrap returns the store's error.
func (e Error) Unwrap() error { return e.Err }

// Partial reports whether err says that only part of a store failed: an
// error in its chain has a PartialOutage method returning true, as the
// Redis store returns for one node of a cluster, which it then leaves alone
// itself. A layer does not rest the whole store for such an error.
func Partial(err error) bool {
	var p interface{ PartialOutage() bool }
	return errors.As(err, &p) && p.PartialOutage()
}
