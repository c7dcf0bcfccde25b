package spend

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/taxonomy"
)

// A Store keeps the spend of each named run outside the process, so that a
// run's spend limit holds however many replicas serve its calls.
// adapters/redis implements it on Redis. The layer asks it once per call
// of a costed tool in a run named with budget.WithID whose context carries
// an [Account], with a context bounded by [WithStoreTimeout] and the call's
// own, and once more when the call ends, to settle.
//
// Amounts are whole billionths of the application's unit, as the layer
// keeps them (a limit of [MaxAmount] is 10^18 of them); an implementation
// may support less and return an error for an amount it cannot keep
// exactly. The limit is the one of the call's Account: give every replica
// serving a run the same.
//
// Implementations must be safe for concurrent use and return soon after
// ctx is done: the call waits for Reserve. id is a valid run id (see
// budget.WithID), but it is not sanitised by the Store's callers: treat it
// as hostile (bound it, hash it). The state of a run should expire by
// itself some time after its last use, since nothing tells the Store that
// a run has ended.
type Store interface {
	// Reserve holds amount for a call of the run named id if what the run
	// spent, plus what its calls in flight hold, plus amount is at most
	// limit, and reports whether it did, with the run's spent and held
	// after it (or as they are, when it refuses). An error, or no answer
	// before ctx is done, makes the layer reserve in the call's Account
	// (or refuse the call, with [WithFailClosed]); an error wrapping
	// [ErrStoreCorrupt] — the stored spend does not parse — makes it
	// refuse the call.
	Reserve(ctx context.Context, id string, limit, amount int64) (spent, held int64, ok bool, err error)
	// Settle ends a call of the run named id that held held and cost
	// charge (0 ≤ charge ≤ held): the run's held goes down by held, never
	// below zero, and its spent up by charge. A spend that does not parse
	// is left as it is, and Settle returns an error wrapping
	// [ErrStoreCorrupt].
	Settle(ctx context.Context, id string, held, charge int64) error
}

// StoreError reports an operation that the [Store] did not complete: it
// failed or did not answer within [WithStoreTimeout]. It is a plain value,
// safe to copy and to share.
type StoreError struct {
	// Op names the operation: "reserve" (a call was reserved in the
	// call's Account, or refused with [WithFailClosed]) or "settle" (a
	// call's reservation was not settled: it stays held in the Store
	// until the run's state expires).
	Op string
	// Err is the Store's error, or context.DeadlineExceeded when it did not
	// answer in time. It may name the Store's address: it is for the
	// operator's metrics and logs, not for the model.
	Err error
}

// DefaultStoreTimeout is how long a call waits for the [Store] by default
// before it is reserved locally.
const DefaultStoreTimeout = 50 * time.Millisecond

// WithStore makes the layer keep the spend of a named run (budget.WithID)
// in s, shared by every replica using the same Store, so that a run's
// spend limit holds for the run across the fleet. Each call of a costed
// tool in a named run whose context carries an [Account] is one Reserve
// and one Settle. Calls of a run without an id, or without a run, keep
// to the Account alone. When s fails or does not answer within
// [WithStoreTimeout], the call is reserved in its Account, the replica's
// own view of the run (fail open; see [WithFailClosed]), reported to
// [WithOnStoreError] and marked degraded (toolmw.SetDegraded), and s is
// left alone for a quarter of a second before it is tried again. nil
// means the Account alone (the default). The Option may be shared
// between goroutines.
func WithStore(s Store) Option {
	return func(c *config) { c.store.s = s }
}

// WithStoreTimeout bounds how long a call waits for the [Store] before it
// is reserved locally (0 means [DefaultStoreTimeout]); the call's context
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

// WithFailClosed makes a call of a named run whose spend the [Store] could
// not check fail instead of being reserved locally: use it when spending
// up to the limit once per replica during an outage is worse than
// refusing. The call does not run and ends as budget-exceeded/spend_limit,
// like the limit's own refusal, with a message saying that the spend could
// not be checked, but it is not final: the kind is not retryable, so
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

// errStoreDown: WithFailClosed and the Store did not check the call.
var errStoreDown = taxonomy.New(taxonomy.KindBudgetExceeded, taxonomy.CodeSpendLimit,
	"this run's spend could not be checked against its limit; nothing ran; it may be called again later")

// ErrStoreCorrupt is what a [Store] returns, wrapped, when the spend it
// keeps for a run does not parse as amounts: garbage, a negative amount,
// one out of range, a key of another type. The layer then refuses the call
// whatever [WithFailClosed] says (budget-exceeded/spend_store_corrupt: a
// spend that cannot be read may hide any amount, and reserving in the
// Account would let every replica spend the limit once more) and reports
// it to [WithOnStoreError] (Op "reserve"); the Store is not left alone,
// since it answered. A Settle that finds the spend corrupt is reported (Op
// "settle").
var ErrStoreCorrupt = errors.New("spend: the store's spend for the run does not parse")

// errCorrupt ends a call whose run's spend in the Store does not parse.
var errCorrupt = taxonomy.New(taxonomy.KindBudgetExceeded, taxonomy.CodeSpendCorrupt,
	"this run's spend could not be checked against its limit: the shared record is unreadable; nothing ran")

// errResting is the StoreError of a call reserved locally because the
// Store failed moments ago.
var errResting = storeResting{}

type storeResting struct{}

func (storeResting) Error() string {
	return "spend: the store failed moments ago; reserving locally"
}

// shared is the state of a layer with a Store.
type shared struct {
	s          Store
	failClosed bool
	guard      storeguard.Guard
}

func newShared(c storeConfig) *shared {
	s := &shared{s: c.s, failClosed: c.failClosed}
	s.guard = storeguard.Guard{Layer: "spend", Timeout: c.timeout, Resting: errResting}
	if s.guard.Timeout == 0 {
		s.guard.Timeout = DefaultStoreTimeout
	}
	if f := c.onError; f != nil {
		s.guard.OnError = func(op string, err error) { f(StoreError{Op: op, Err: err}) }
	}
	return s
}

// sharedCall reserves a call of the run named id in the Store, or in acct,
// the replica's account of the run, when the Store cannot answer, and runs
// next. acct also holds the reservations the Store admitted here, so that
// during an outage the replica's spend of the run stays within the limit.
// A call whose own context ends while the Store is asked may have reserved
// there, which then stays held until the run expires.
func (l *layer) sharedCall(ctx context.Context, id string, acct *Account, call toolmw.Call, c cost,
	next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	s := l.shared
	var spent, held int64
	var ok bool
	var corrupt error
	local, end := s.guard.Ask(ctx, "reserve", func(ctx context.Context) error {
		var err error
		spent, held, ok, err = s.s.Reserve(ctx, id, acct.limit, c.max)
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
		s.report("reserve", corrupt)
		return toolmw.Result{}, errCorrupt
	case local && s.failClosed:
		return toolmw.Result{}, errStoreDown
	case local:
		if err := acct.reserve(c.max); err != nil {
			return toolmw.Result{}, err
		}
		return l.run(ctx, acct, "", call, c, next, args)
	case !ok:
		return toolmw.Result{}, acct.refusal(c.max, spent+held)
	}
	acct.add(c.max)
	return l.run(ctx, acct, id, call, c, next, args)
}

// settle settles a call in the Store (see storeguard.Guard.After).
func (s *shared) settle(ctx context.Context, id string, held, charge int64) {
	s.guard.After(ctx, "settle", func(ctx context.Context) error {
		if err := s.s.Settle(ctx, id, held, charge); errors.Is(err, ErrStoreCorrupt) {
			s.report("settle", err) // the store answered: no rest
		} else if err != nil {
			return err
		}
		return nil
	})
}

// report reports an operation the Store answered with corrupt state.
func (s *shared) report(op string, err error) {
	if s.guard.OnError != nil {
		s.guard.OnError(op, err)
	}
}
