package spend

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/middleware/internal/runshare"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// A Store keeps the spend of each named run outside the process, so that a
// run's spend limit holds however many replicas serve its calls.
// adapters/redisstate implements it on Redis. The layer asks it once per call
// of a costed tool in a run named with budget.WithID whose context carries
// an [Account], with a context bounded by the store timeout (see [WithStore]) and the
// call's own, and once more when the call ends, to settle — also when the call
// was reserved on the replica's own account because the Store did not
// answer, so that what it cost is written back.
//
// Amounts are whole billionths of the application's unit, as the layer
// keeps them (a limit of [MaxAmount] is 10^18 of them); an implementation
// may support less and return an error for an amount it cannot keep
// exactly. The limit is the one of the call's Account: give every replica
// serving a run the same.
//
// Every operation names the call it is for with an operation id, op: 32
// hexadecimal digits, one per call. An answer that never arrived leaves
// the outcome of an operation unknown — it may have been applied, or may
// still be, late — so the layer settles it later with another operation
// of the same op, and the Store must apply each op's effect at most once:
// a Reserve of an op already holding holds nothing more and admits it; a
// Reserve of an op already settled holds nothing and refuses it; a Settle
// of an op that holds nothing (its Reserve never arrived, or is still on
// its way) charges what it is told and records the op as settled, so that
// its Reserve, should it arrive, holds nothing; a second Settle of an op
// does nothing. What a Store keeps per op lives as long as the run's
// spend.
//
// Implementations must be safe for concurrent use and return soon after
// ctx is done: the call waits for Reserve. id is a valid run id (see
// budget.WithID), but it is not sanitised by the Store's callers: treat it
// as hostile (bound it, hash it). The state of a run should expire by
// itself some time after its last use, since nothing tells the Store that
// a run has ended.
type Store interface {
	// Reserve holds amount for the call op of the run named id if what the
	// run spent, plus what its calls in flight hold, plus amount is at
	// most limit, and reports whether it did, with the run's spent and
	// held after it (or as they are, when it refuses). An error, or no
	// answer before ctx is done, makes the layer reserve on the replica's
	// own account of the run (or refuse the call, with [WithFailClosed]);
	// an error wrapping store.ErrCorrupt — the stored spend does not
	// parse — makes it refuse the call whatever [WithFailClosed] says
	// (budget-exceeded/spend_store_corrupt: a spend that cannot be read may
	// hide any amount, and reserving on the replica's account would let
	// every replica spend the limit once more) and report it (Op
	// "reserve", Refused); the Store is not left alone, since it answered.
	Reserve(ctx context.Context, id string, limit, amount int64, op string) (spent, held int64, ok bool, err error)
	// Settle ends the call op of the run named id, which cost charge (at
	// most what it reserved, or, for a call the Store did not reserve, at
	// most its tool's maximum): what op holds is no longer held, never
	// below zero, and the run's spent goes up by charge. A call that did
	// not run is settled with a charge of 0. A spend that does not parse
	// is left as it is, and Settle returns an error wrapping
	// store.ErrCorrupt, which the layer reports (Op "settle") and does not
	// try again.
	Settle(ctx context.Context, id, op string, charge int64) error
}

// WithStore makes the layer keep the spend of a named run (budget.WithID)
// in s, shared by every replica using the same Store, so that a run's
// spend limit holds for the run across the fleet. Each call of a costed
// tool in a named run whose context carries an [Account] is one Reserve
// and one Settle. Calls of a run without an id, or without a run, keep
// to the Account alone. opts set how the layer uses s (store.WithTimeout,
// store.WithOnError); an invalid one is invalid (see [Validate]).
//
// When s fails or does not answer within the store timeout
// (store.DefaultTimeout unless set), the call is reserved on the
// replica's own account of the run (fail open; see [WithFailClosed]),
// reported as a store.Error (Layer "spend", Op "reserve") and marked
// degraded (toolmw.Call.Degraded is "spend"), and s is left alone for
// store.Rest before it is tried again (only the failing part of it, when
// its error says so: see store.Partial). The replica's own account of a
// run is kept by run id, for up to [MaxLocalRuns] runs, and holds what
// every call of the run admitted on this replica, through s or not, holds
// or spent: during an outage, each replica spends at most the limit per
// run. What a call decided on it cost is written back to s (Settle, Op
// "settle") as soon as s answers again, and a Reserve that did not answer
// is settled — both in the background, retried after each rest for up to
// store.GiveUp —, so that after an outage the run's spend in s holds every
// call that ran, once, and no reservation of a call that ended.
//
// nil means the Account alone (the default).
func WithStore(s Store, opts ...store.Option) Option {
	return func(c *config) {
		if err := c.store.Set(s, opts); err != nil {
			c.reject("WithStore: %v", err)
		}
	}
}

// WithFailClosed makes a call of a named run whose spend the [Store] could
// not check fail instead of being reserved locally: use it when spending up
// to the limit once per replica during an outage is worse than refusing. The
// call does not run and ends as budget-exceeded/spend_limit, like the
// limit's own refusal, with a message saying that the spend could not be
// checked, but it is not final: the kind is not retryable, so
// taxonomy.ShouldRetry says no and no retry layer repeats it at once, yet
// the model or the loop may call the tool again later in the run and succeed
// once the Store answers.
func WithFailClosed() Option {
	return func(c *config) { c.store.FailClosed = true }
}

// errStoreDown: WithFailClosed and the Store did not check the call.
var errStoreDown = taxonomy.New(taxonomy.KindBudgetExceeded, taxonomy.CodeSpendLimit,
	"this run's spend could not be checked against its limit; nothing ran; it may be called again later")

// errCorrupt ends a call whose run's spend in the Store does not parse.
var errCorrupt = taxonomy.New(taxonomy.KindBudgetExceeded, taxonomy.CodeSpendCorrupt,
	"this run's spend could not be checked against its limit: the shared record is unreadable; nothing ran")

// MaxLocalRuns bounds the named runs whose own account a replica keeps
// for the Store's outages (see [WithStore]); past it, the run used least
// recently is forgotten, and its calls during an outage spend from zero on
// this replica.
const MaxLocalRuns = runshare.MaxLocalRuns

// shared is the state of a layer with a Store: the replica's account of
// each named run.
type shared struct{ *runshare.Shared[Store, tally] }

// tally is what a replica's calls of one named run hold and spent, in
// units.
type tally struct {
	mu          sync.Mutex
	held, spent int64
}

// reserve holds u units if they fit limit, or returns what the run's calls
// here took.
func (t *tally) reserve(limit, u int64) (taken int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	taken = t.held + t.spent
	if taken+u > limit {
		return taken, false
	}
	t.held += u
	return taken, true
}

// room reports whether u more units fit limit, with what the run's calls
// here took.
func (t *tally) room(limit, u int64) (taken int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	taken = t.held + t.spent
	return taken, taken+u <= limit
}

func (t *tally) add(u int64) {
	t.mu.Lock()
	t.held += u
	t.mu.Unlock()
}

func (t *tally) settle(held, charge int64) {
	t.mu.Lock()
	t.held -= held
	t.spent += charge
	t.mu.Unlock()
}

func newShared(c runshare.Config[Store]) *shared {
	return &shared{runshare.New("spend", c, errStoreDown, errCorrupt, func() *tally { return &tally{} })}
}

// stored is a call of a named run whose spend the Store keeps: the run,
// the call's op, the replica's account of the run, and whether the Store
// may hold a reservation of the op (it admitted it, or was asked and did
// not answer).
type stored struct {
	id, op string
	local  *tally
	asked  bool
}

// sharedCall reserves a call of the run named id in the Store, or on the
// replica's own account of the run when the Store cannot answer, and runs
// next. The replica's account also holds what the Store admitted here, so
// that during an outage the replica's spend of the run stays within the
// limit, and a call that does not fit it is refused without asking the
// Store (whose spend may not hold yet what ran here during an outage). A
// Reserve whose answer did not arrive may still be applied: the call's op
// settles it, with a charge of 0 when the call does not run.
func (l *layer) sharedCall(ctx context.Context, id string, acct *Account, call toolmw.Call, c cost,
	next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	s := l.shared
	st := stored{id: id, op: storeguard.NewOp(), local: s.Local(id)}
	if taken, ok := st.local.room(acct.limit, c.max); !ok {
		return toolmw.Result{}, acct.refusal(c.max, taken)
	}
	var spent, held int64
	var ok bool
	local, sent, end := s.Ask(ctx, "reserve", func(ctx context.Context) error {
		var err error
		spent, held, ok, err = s.Store.Reserve(ctx, id, acct.limit, c.max, st.op)
		return err
	})
	st.asked = sent
	switch {
	case end != nil:
		s.cancel(ctx, st)
		return toolmw.Result{}, end
	case local:
		if taken, ok := st.local.reserve(acct.limit, c.max); !ok {
			s.cancel(ctx, st)
			return toolmw.Result{}, acct.refusal(c.max, taken)
		}
	case !ok:
		return toolmw.Result{}, acct.refusal(c.max, spent+held)
	default:
		st.local.add(c.max)
	}
	acct.add(c.max)
	return l.run(ctx, acct, &st, call, c, next, args)
}

// cancel settles a call that did not run: its Reserve, asked without an
// answer, may land yet.
func (s *shared) cancel(ctx context.Context, st stored) { s.settle(ctx, st, 0) }

// settle settles the call st in the Store, eventually. A call the Store
// was not asked about and that cost nothing is not its business.
func (s *shared) settle(ctx context.Context, st stored, charge int64) {
	if !st.asked && charge == 0 {
		return
	}
	s.Eventually(ctx, "settle", func(ctx context.Context) error { return s.Store.Settle(ctx, st.id, st.op, charge) })
}
