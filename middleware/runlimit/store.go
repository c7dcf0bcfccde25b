package runlimit

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/keyed"
	"github.com/toolmw/toolmw/middleware/internal/storeguard"
	"github.com/toolmw/toolmw/taxonomy"
)

// A Store keeps the calls admitted in each named run outside the process,
// so that a limit holds however many replicas serve the run's calls.
// adapters/redis implements it on Redis. The layer asks it once per call
// of a limited tool in a run named with budget.WithID, with a context
// bounded by [WithStoreTimeout] and the call's own, and once more when the
// call gives its slot back, or when it ran on the replica's own count
// because the Store did not answer.
//
// Every operation names the call it is for with an operation id, op: 32
// hexadecimal digits, one per call. An answer that never arrived leaves
// the outcome of an operation unknown — it may have been applied, or may
// still be, late — so the layer settles it later with another operation
// of the same op, and the Store must apply each op's effect at most once:
// a Take of an op already admitted admits it again without counting it
// again; a Take of an op released (or cancelled) admits nothing; a
// Release of an op not yet taken records that it is cancelled, so that
// its Take, if it arrives afterwards, admits nothing; a Record of an op
// already counted counts nothing. What a Store keeps per op lives as long
// as the run's counts.
//
// Implementations must be safe for concurrent use and return soon after
// ctx is done: the call waits for Take. id is a valid run id (see
// budget.WithID) and tool a tool name, but neither is sanitised by the
// Store's callers: treat both as hostile (bound them, hash them). The
// state of a run should expire by itself some time after its last use,
// since nothing tells the Store that a run has ended.
type Store interface {
	// Take admits the call op of tool in the run named id if fewer than
	// limit calls of it are admitted, and reports whether it did. An
	// error, or no answer before ctx is done, makes the layer count the
	// call locally (or refuse it, with [WithFailClosed]); an error
	// wrapping [ErrStoreCorrupt] — the stored count does not parse —
	// makes it refuse the call.
	Take(ctx context.Context, id, tool string, limit int, op string) (ok bool, err error)
	// Release gives back the slot the call op of tool in the run named id
	// took: the call had no effect (see the package documentation), or it
	// never ran. An op that took no slot is cancelled: its Take admits
	// nothing, should it arrive. A count never goes below zero; one that
	// does not parse is left as it is, and Release returns an error
	// wrapping [ErrStoreCorrupt].
	Release(ctx context.Context, id, tool, op string) error
	// Record counts the call op of tool in the run named id, which ran
	// without the Store's admission (the Store did not answer in time), so
	// that the run's count holds it once the Store answers again: the
	// calls decided during an outage are written back. An op already
	// counted is not counted again; the limit is not checked, since the
	// call ran. A count that does not parse is left as it is, and Record
	// returns an error wrapping [ErrStoreCorrupt].
	Record(ctx context.Context, id, tool, op string) error
}

// StoreError reports an operation that the [Store] did not complete: it
// failed or did not answer within [WithStoreTimeout]. It is a plain value,
// safe to copy and to share.
type StoreError struct {
	// Op names the operation: "take" (a call was counted locally, or
	// refused with [WithFailClosed]), "release" (a slot was not given back
	// yet, or a take that did not answer was not cancelled yet) or
	// "record" (a call that ran on the replica's count is not counted in
	// the Store yet). A release or a record that fails is tried again in
	// the background (see [WithStore]); one given up is reported once more
	// with an error wrapping [ErrDropped].
	Op string
	// Err is the Store's error, or context.DeadlineExceeded when it did not
	// answer in time. It may name the Store's address: it is for the
	// operator's metrics and logs, not for the model.
	Err error
}

// ErrDropped is wrapped by the error a [StoreError] reports for an
// operation the layer stopped trying to bring to the Store: ten minutes
// passed, or ten thousand others waited. The Store may never learn of it.
var ErrDropped = storeguard.ErrDropped

// DefaultStoreTimeout is how long a call waits for the [Store] by default
// before it is counted locally.
const DefaultStoreTimeout = 50 * time.Millisecond

// WithStore makes the layer count the calls of a named run (budget.WithID)
// in s, shared by every replica using the same Store, so that a limit
// holds for the run across the fleet: Once holds exactly once. Each call
// of a limited tool is one Take, and a call that had no effect one Release
// more. Calls of a run without an id keep in-process counts.
//
// When s fails or does not answer within [WithStoreTimeout], the call is
// counted in the replica's own count of the run (fail open; see
// [WithFailClosed]), reported to [WithOnStoreError] and marked degraded
// (toolmw.SetDegraded), and s is left alone for a quarter of a second
// before it is tried again (only the failing part of it, when its error
// says so: an error with a PartialOutage method returning true, as the
// Redis Store returns for one node of a cluster). The replica's own count
// of a run is kept by run id, for up to [MaxLocalRuns] runs, and holds
// every call of the run this replica admitted, through s or not: during an
// outage, each replica admits at most the limit per run. A call that ran
// on it is written back to s (Record) as soon as s answers again, and a
// Take that did not answer is settled (Release) — both in the background,
// retried after each rest for up to ten minutes —, so that after an
// outage the run's count in s holds every call that ran, once.
//
// nil means in-process counts only (the default). The Option may be
// shared between goroutines.
func WithStore(s Store) Option {
	return func(c *config) { c.store.s = s }
}

// WithStoreTimeout bounds how long a call waits for the [Store] before it
// is counted locally (0 means [DefaultStoreTimeout]); the call's context
// bounds it too. A negative d is invalid (see [Validate]). The Option may
// be shared between goroutines.
func WithStoreTimeout(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.reject("WithStoreTimeout(%v): the timeout must not be negative", d)
			return
		}
		c.store.timeout = d
	}
}

// WithOnStoreError sets a function called, on the call's goroutine, for
// every operation the [Store] did not complete (nil means none): count
// them, log them. It must not block. The Option may be shared between
// goroutines.
func WithOnStoreError(f func(StoreError)) Option {
	return func(c *config) { c.store.onError = f }
}

// WithFailClosed makes a call of a named run that the [Store] could not
// count fail instead of being counted locally: use it when a side effect
// repeated once per replica during an outage is worse than refusing. The
// call does not run and ends as run-limit-exceeded/run_call_limit, like the
// limit's own refusal, but it is not final: the kind is not retryable, so
// taxonomy.ShouldRetry says no and no retry layer repeats it at once, yet
// the model or the loop may call the tool again later in the run and
// succeed once the Store answers. The Option may be shared between
// goroutines.
func WithFailClosed() Option {
	return func(c *config) { c.store.failClosed = true }
}

// storeConfig is the part of the config about a Store.
type storeConfig struct {
	s          Store
	timeout    time.Duration
	onError    func(StoreError)
	failClosed bool
}

// errStoreDown: WithFailClosed and the Store did not count the call.
var errStoreDown = taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunCallLimit,
	"this tool's calls in this run could not be counted; nothing ran; it may be called again later")

// ErrStoreCorrupt is what a [Store] returns, wrapped, when the count it
// keeps for a run does not parse as a count: garbage, a negative number, a
// number out of range, a key of another type. The layer then refuses the
// call whatever [WithFailClosed] says (run-limit-exceeded/run_calls_corrupt:
// a count that cannot be read may hide any number of calls, and counting
// locally would let every replica run the tool once more) and reports it
// to [WithOnStoreError] (Op "take"); the Store is not left alone, since it
// answered. A Release that finds the count corrupt is reported (Op
// "release").
var ErrStoreCorrupt = errors.New("runlimit: the store's count for the run does not parse")

// errCorrupt ends a call whose run's count in the Store does not parse.
var errCorrupt = taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunCallsCorrupt,
	"this tool's calls in this run could not be counted: the shared count is unreadable; nothing ran")

// errResting is the StoreError of a call counted locally because the Store
// failed moments ago.
var errResting = storeResting{}

type storeResting struct{}

func (storeResting) Error() string {
	return "runlimit: the store failed moments ago; counting locally"
}

// MaxLocalRuns bounds the named runs whose own count a replica keeps for
// the Store's outages (see [WithStore]); past it, the run used least
// recently is forgotten, and its calls during an outage count from zero on
// this replica.
const MaxLocalRuns = 1 << 16

// shared is the state of a layer with a Store.
type shared struct {
	s          Store
	failClosed bool
	guard      storeguard.Guard
	local      *keyed.Map[*counts] // the replica's count of each named run
}

func newShared(c storeConfig) *shared {
	s := &shared{s: c.s, failClosed: c.failClosed,
		local: keyed.New(MaxLocalRuns, func(string) *counts { return newCounts() })}
	s.guard = storeguard.Guard{Layer: "runlimit", Timeout: c.timeout, Resting: errResting}
	if s.guard.Timeout == 0 {
		s.guard.Timeout = DefaultStoreTimeout
	}
	if f := c.onError; f != nil {
		s.guard.OnError = func(op string, err error) { f(StoreError{Op: op, Err: err}) }
	}
	return s
}

// sharedCall counts a call of the run named id in the Store, or in the
// replica's count of the run when the Store cannot answer, and runs next.
// The replica's count also holds the calls the Store admitted here, so
// that during an outage the replica's calls of the run stay within the
// limit, and a call it has no room for is refused without asking the
// Store (whose count may not hold yet what ran here during an outage). A
// Take whose answer did not arrive may still be applied: the call's op
// settles it, with a Release when the call does not run or had no effect,
// a Record when it ran.
func (l *layer) sharedCall(ctx context.Context, id string, tool string, limit int,
	next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	s := l.shared
	c := s.local.Get(id)
	if c.full(tool, limit) {
		return toolmw.Result{}, l.refusals[tool]
	}
	op := storeguard.NewOp()
	var ok, sent bool
	var corrupt error
	local, end := s.guard.Ask(ctx, "take", func(ctx context.Context) error {
		sent = true
		var err error
		ok, err = s.s.Take(ctx, id, tool, limit, op)
		if errors.Is(err, ErrStoreCorrupt) {
			corrupt = err // the store answered, with state it cannot count on
			return nil
		}
		return err
	})
	switch {
	case corrupt != nil:
		s.report("take", corrupt)
		return toolmw.Result{}, errCorrupt
	case end != nil, local && s.failClosed:
		if sent { // the take may land yet: cancel it
			s.release(ctx, id, tool, op)
		}
		if end != nil {
			return toolmw.Result{}, end
		}
		return toolmw.Result{}, errStoreDown
	case local:
		if !c.take(tool, limit) {
			if sent {
				s.release(ctx, id, tool, op)
			}
			return toolmw.Result{}, l.refusals[tool]
		}
	case !ok:
		return toolmw.Result{}, l.refusals[tool]
	default:
		c.add(tool)
	}
	attempt := attemptOf(ctx)
	returned := false
	defer func() {
		if !returned && local { // a panic or runtime.Goexit: the tool ran
			s.record(ctx, id, tool, op)
		}
	}()
	res, err := next(ctx, args)
	returned = true
	switch {
	case noEffect(ctx, attempt, err):
		c.giveBack(tool)
		if !local || sent {
			s.release(ctx, id, tool, op)
		}
	case local:
		s.record(ctx, id, tool, op)
	}
	return res, err
}

// release gives the slot of op back in the Store, or cancels op's take,
// eventually (see storeguard.Guard.Eventually).
func (s *shared) release(ctx context.Context, id, tool, op string) {
	s.guard.Eventually(ctx, "release", func(ctx context.Context) error {
		return s.answered("release", s.s.Release(ctx, id, tool, op))
	})
}

// record counts op, a call that ran on the replica's count, in the Store,
// eventually.
func (s *shared) record(ctx context.Context, id, tool, op string) {
	s.guard.Eventually(ctx, "record", func(ctx context.Context) error {
		return s.answered("record", s.s.Record(ctx, id, tool, op))
	})
}

// answered returns err, or nil after reporting it when it says that the
// Store answered with corrupt state: trying again would not help, and the
// Store is not left alone.
func (s *shared) answered(op string, err error) error {
	if errors.Is(err, ErrStoreCorrupt) {
		s.report(op, err)
		return nil
	}
	return err
}

// report reports an operation the Store answered with corrupt state.
func (s *shared) report(op string, err error) {
	if s.guard.OnError != nil {
		s.guard.OnError(op, err)
	}
}
