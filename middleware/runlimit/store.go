package runlimit

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/taxonomy"
)

// A Store keeps the calls admitted in each named run outside the process,
// so that a limit holds however many replicas serve the run's calls.
// adapters/redis implements it on Redis. The layer asks it once per call of
// a limited tool in a run named with budget.WithID, with a context bounded
// by [WithStoreTimeout] and the call's own, and once more when the call
// gives its slot back.
//
// Implementations must be safe for concurrent use and return soon after
// ctx is done: the call waits for Take. id is a valid run id (see
// budget.WithID) and tool a tool name, but neither is sanitised by the
// Store's callers: treat both as hostile (bound them, hash them). The
// state of a run should expire by itself some time after its last use,
// since nothing tells the Store that a run has ended.
type Store interface {
	// Take admits one call of tool in the run named id if fewer than limit
	// calls of it are admitted, and reports whether it did. An error, or no
	// answer before ctx is done, makes the layer count the call locally (or
	// refuse it, with [WithFailClosed]); an error wrapping
	// [ErrStoreCorrupt] — the stored count does not parse — makes it
	// refuse the call.
	Take(ctx context.Context, id, tool string, limit int) (ok bool, err error)
	// Release gives back one admitted call of tool in the run named id:
	// the call had no effect (see the package documentation). A count
	// never goes below zero; one that does not parse is left as it is, and
	// Release returns an error wrapping [ErrStoreCorrupt].
	Release(ctx context.Context, id, tool string) error
}

// StoreError reports an operation that the [Store] did not complete: it
// failed or did not answer within [WithStoreTimeout]. It is a plain value,
// safe to copy and to share.
type StoreError struct {
	// Op names the operation: "take" (a call was counted locally, or
	// refused with [WithFailClosed]) or "release" (a slot was not given
	// back: it stays taken in the Store).
	Op string
	// Err is the Store's error, or context.DeadlineExceeded when it did not
	// answer in time. It may name the Store's address: it is for the
	// operator's metrics and logs, not for the model.
	Err error
}

// DefaultStoreTimeout is how long a call waits for the [Store] by default
// before it is counted locally.
const DefaultStoreTimeout = 50 * time.Millisecond

// WithStore makes the layer count the calls of a named run (budget.WithID)
// in s, shared by every replica using the same Store, so that a limit
// holds for the run across the fleet: Once holds exactly once. Each call
// of a limited tool is one Take, and a call that had no effect one Release
// more. Calls of a run without an id keep in-process counts. When s fails
// or does not answer within [WithStoreTimeout], the call is counted in the
// replica's own count of the run (fail open; see [WithFailClosed]),
// reported to [WithOnStoreError] and marked degraded
// (toolmw.SetDegraded), and s is left alone for a quarter of a second
// before it is tried again. nil means in-process counts only (the
// default). The Option may be shared between goroutines.
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

// shared is the state of a layer with a Store.
type shared struct {
	s          Store
	failClosed bool
	guard      storeguard.Guard
}

func newShared(c storeConfig) *shared {
	s := &shared{s: c.s, failClosed: c.failClosed}
	s.guard = storeguard.Guard{Layer: "runlimit", Timeout: c.timeout, Resting: errResting}
	if s.guard.Timeout == 0 {
		s.guard.Timeout = DefaultStoreTimeout
	}
	if f := c.onError; f != nil {
		s.guard.OnError = func(op string, err error) { f(StoreError{Op: op, Err: err}) }
	}
	return s
}

// sharedCall counts a call of a named run in the Store, or in c, the
// replica's count of the run, when the Store cannot answer, and runs next.
// c also counts the calls the Store admitted here, so that during an
// outage the replica's calls of the run stay within the limit. A call
// whose own context ends while the Store is asked may have taken a slot
// there, which then stays taken.
func (l *layer) sharedCall(ctx context.Context, run *budget.Run, c *counts, tool string, limit int,
	next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	s := l.shared
	id := run.ID()
	var ok bool
	var corrupt error
	local, end := s.guard.Ask(ctx, "take", func(ctx context.Context) error {
		var err error
		ok, err = s.s.Take(ctx, id, tool, limit)
		if errors.Is(err, ErrStoreCorrupt) {
			corrupt = err // the store answered, with state it cannot count on
			return nil
		}
		return err
	})
	switch {
	case end != nil:
		return toolmw.Result{}, end
	case corrupt != nil:
		s.report("take", corrupt)
		return toolmw.Result{}, errCorrupt
	case local && s.failClosed:
		return toolmw.Result{}, errStoreDown
	case local:
		return l.localCall(ctx, c, tool, limit, next, args)
	case !ok:
		return toolmw.Result{}, l.refusals[tool]
	}
	c.add(tool)
	attempt := attemptOf(ctx)
	res, err := next(ctx, args)
	if noEffect(ctx, attempt, err) {
		c.giveBack(tool)
		s.guard.After(ctx, "release", func(ctx context.Context) error {
			if err := s.s.Release(ctx, id, tool); errors.Is(err, ErrStoreCorrupt) {
				s.report("release", err) // the store answered: no rest
			} else if err != nil {
				return err
			}
			return nil
		})
	}
	return res, err
}

// report reports an operation the Store answered with corrupt state.
func (s *shared) report(op string, err error) {
	if s.guard.OnError != nil {
		s.guard.OnError(op, err)
	}
}
