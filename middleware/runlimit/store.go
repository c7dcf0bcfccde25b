package runlimit

import (
	"context"
	"encoding/json"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/middleware/internal/runshare"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// A Store keeps the calls admitted in each named run outside the process,
// so that a limit holds however many replicas serve the run's calls.
// adapters/redisstate implements it on Redis. The layer asks it once per call
// of a limited tool in a run named with budget.WithID, with a context
// bounded by the store timeout (see [WithStore]) and the call's own, and once more when the
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
	// wrapping store.ErrCorrupt — the stored count does not parse —
	// makes it refuse the call whatever [WithFailClosed] says
	// (run-limit-exceeded/run_calls_corrupt: a count that cannot be read
	// may hide any number of calls, and counting locally would let every
	// replica run the tool once more) and report it (Op "take", Refused);
	// the Store is not left alone, since it answered.
	Take(ctx context.Context, id, tool string, limit int, op string) (ok bool, err error)
	// Release gives back the slot the call op of tool in the run named id
	// took: the call had no effect (see the package documentation), or it
	// never ran. An op that took no slot is cancelled: its Take admits
	// nothing, should it arrive. A count never goes below zero; one that
	// does not parse is left as it is, and Release returns an error
	// wrapping store.ErrCorrupt, which the layer reports (Op "release")
	// and does not try again.
	Release(ctx context.Context, id, tool, op string) error
	// Record counts the call op of tool in the run named id, which ran
	// without the Store's admission (the Store did not answer in time), so
	// that the run's count holds it once the Store answers again: the
	// calls decided during an outage are written back. An op already
	// counted is not counted again; the limit is not checked, since the
	// call ran. A count that does not parse is left as it is, and Record
	// returns an error wrapping store.ErrCorrupt, which the layer reports
	// (Op "record") and does not try again.
	Record(ctx context.Context, id, tool, op string) error
}

// WithStore makes the layer count the calls of a named run (budget.WithID)
// in s, shared by every replica using the same Store, so that a limit
// holds for the run across the fleet: Once holds exactly once. Each call
// of a limited tool is one Take, and a call that had no effect one Release
// more. Calls of a run without an id keep in-process counts. opts set how
// the layer uses s (store.WithTimeout, store.WithOnError); an invalid one
// is invalid (see [Validate]).
//
// When s fails or does not answer within the store timeout
// (store.DefaultTimeout unless set), the call is counted in the replica's
// own count of the run (fail open; see [WithFailClosed]), reported as a
// store.Error (Layer "runlimit", Op "take") and marked degraded
// (toolmw.Call.Degraded is "runlimit"), and s is left alone for
// store.Rest before it is tried again (only the failing part of it, when
// its error says so: see store.Partial). The replica's own count of a run
// is kept by run id, for up to [MaxLocalRuns] runs, and holds every call
// of the run this replica admitted, through s or not: during an outage,
// each replica admits at most the limit per run. A call that ran on it is
// written back to s (Record, Op "record") as soon as s answers again, and
// a Take that did not answer is settled (Release, Op "release") — both in
// the background, retried after each rest for up to store.GiveUp —, so
// that after an outage the run's count in s holds every call that ran,
// once.
//
// nil means in-process counts only (the default).
func WithStore(s Store, opts ...store.Option) Option {
	return func(c *config) {
		if err := c.store.Set(s, opts); err != nil {
			c.reject("WithStore: %v", err)
		}
	}
}

// WithFailClosed makes a call of a named run that the [Store] could not
// count fail instead of being counted locally: use it when a side effect
// repeated once per replica during an outage is worse than refusing. The
// call does not run and ends as run-limit-exceeded/run_call_limit, like the
// limit's own refusal, but it is not final: the kind is not retryable, so
// taxonomy.ShouldRetry says no and no retry layer repeats it at once, yet
// the model or the loop may call the tool again later in the run and succeed
// once the Store answers.
func WithFailClosed() Option {
	return func(c *config) { c.store.FailClosed = true }
}

// errStoreDown: WithFailClosed and the Store did not count the call.
var errStoreDown = taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunCallLimit,
	"this tool's calls in this run could not be counted; nothing ran; it may be called again later")

// errCorrupt ends a call whose run's count in the Store does not parse.
var errCorrupt = taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunCallsCorrupt,
	"this tool's calls in this run could not be counted: the shared count is unreadable; nothing ran")

// MaxLocalRuns bounds the named runs whose own count a replica keeps for
// the Store's outages (see [WithStore]); past it, the run used least
// recently is forgotten, and its calls during an outage count from zero on
// this replica.
const MaxLocalRuns = runshare.MaxLocalRuns

// shared is the state of a layer with a Store: the replica's count of
// each named run.
type shared struct {
	*runshare.Shared[Store, counts]
}

func newShared(c runshare.Config[Store]) *shared {
	return &shared{runshare.New("runlimit", c, errStoreDown, errCorrupt, newCounts)}
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
	c := s.Local(id)
	if c.full(tool, limit) {
		return toolmw.Result{}, l.refuse(tool)
	}
	op := storeguard.NewOp()
	var ok bool
	local, sent, end := s.Ask(ctx, "take", func(ctx context.Context) error {
		var err error
		ok, err = s.Store.Take(ctx, id, tool, limit, op)
		return err
	})
	switch {
	case end != nil:
		if sent { // the take may land yet: cancel it
			s.release(ctx, id, tool, op)
		}
		return toolmw.Result{}, end
	case local:
		if !c.take(tool, limit) {
			if sent {
				s.release(ctx, id, tool, op)
			}
			return toolmw.Result{}, l.refuse(tool)
		}
	case !ok:
		return toolmw.Result{}, l.refuse(tool)
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
// eventually.
func (s *shared) release(ctx context.Context, id, tool, op string) {
	s.Eventually(ctx, "release", func(ctx context.Context) error { return s.Store.Release(ctx, id, tool, op) })
}

// record counts op, a call that ran on the replica's count, in the Store,
// eventually.
func (s *shared) record(ctx context.Context, id, tool, op string) {
	s.Eventually(ctx, "record", func(ctx context.Context) error { return s.Store.Record(ctx, id, tool, op) })
}
