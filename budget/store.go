package budget

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw/internal/callnote"
)

// A TokenStore keeps a [Retry]'s balance outside the process, so that every
// replica given the same TokenStore draws on one bucket. adapters/redis
// implements it on Redis. Amounts are in thousandths of a token.
//
// Implementations must be safe for concurrent use, and return soon after
// ctx is done: a retry waits for Apply.
type TokenStore interface {
	// Apply applies op to the shared bucket atomically and returns the
	// balance after it. A bucket the store has never seen (or has
	// forgotten) is full: it holds op.Capacity.
	Apply(ctx context.Context, op TokenOp) (TokenBalance, error)
}

// TokenOp is one change to a shared bucket, applied in this order: Add,
// Take, Withdraw. Amounts are in thousandths of a token and never negative.
// It is a plain value, safe to copy and to share.
type TokenOp struct {
	// Capacity is the bucket's size: the reserve. The balance never exceeds
	// it.
	Capacity int64
	// Add is added first (deposits and refunds), up to Capacity.
	Add int64
	// Take is removed next (overload charges), down to 0.
	Take int64
	// Withdraw is removed last, and only if the balance holds all of it (a
	// retry's token); 0 withdraws nothing.
	Withdraw int64
}

// TokenBalance is a shared bucket after a [TokenOp]. It is a plain value,
// safe to copy and to share.
type TokenBalance struct {
	// Balance is what the bucket holds, in thousandths of a token.
	Balance int64
	// Withdrawn says the op's Withdraw was taken.
	Withdrawn bool
}

// A RunStore keeps how many attempts each tool of a named run has used,
// outside the process, so that the cap of a [Run] holds however many
// replicas serve the run's calls. adapters/redis implements it on Redis.
//
// Implementations must be safe for concurrent use, and return soon after
// ctx is done: an attempt waits for Take.
type RunStore interface {
	// Take takes one attempt of tool in the run named id if fewer than
	// limit were taken, and returns how many are taken after it and whether
	// it took one. id is a valid run id (see [WithID]); tool is not
	// sanitised: the store must treat it as hostile.
	Take(ctx context.Context, id, tool string, limit int) (used int, ok bool, err error)
}

// ErrStoreCorrupt is what a [TokenStore] or a [RunStore] returns, wrapped,
// when the state it keeps does not parse: garbage, a negative or
// out-of-range number, a key of another type, what a broken or hostile
// writer left. It fails closed, and the store is not left alone (it
// answered):
//
//   - a TokenStore reads such a balance as empty, applies the op to that
//     and writes the result over it, withdrawing nothing: Apply returns the
//     new balance with the error, and the Retry takes the balance as the
//     store's answer (no retry is lent by a balance it cannot read) and
//     reports the error;
//   - a RunStore takes no attempt: Take returns ok false with the error,
//     and the Run refuses the attempt (as if the cap were used up) and
//     reports the error.
var ErrStoreCorrupt = errors.New("budget: the store's state does not parse")

// StoreError reports an operation that a [TokenStore] or a [RunStore] did
// not complete: it failed or did not answer within its timeout, and the
// budget decided with its local state instead. It is a plain value, safe to
// copy and to share.
type StoreError struct {
	// Op names the operation: "deposit" (a batch of deposits and charges),
	// "retry" (a withdrawal) or "take" (a run's attempt).
	Op string
	// Err is the store's error, or context.DeadlineExceeded when it did not
	// answer in time. It may name the store's address: it is for the
	// operator's metrics and logs, not for the model.
	Err error
}

// DefaultStoreTimeout is how long a budget waits for its store by default
// before it decides with its local state.
const DefaultStoreTimeout = 50 * time.Millisecond

// Batching of a shared Retry's deposits: a deposit sends the queue, in the
// background, once it holds flushTokens or flushEvery has passed since the
// last send, whichever comes first, so a call does not pay a round trip for
// its deposit and a busy replica sends at most a hundred batches a second.
const (
	flushTokens = 10 * milli
	flushEvery  = 10 * time.Millisecond
)

// partial reports whether err says that only part of the store failed (an
// error with a PartialOutage method returning true, as the Redis Store
// returns for one node of a cluster, which it then leaves alone itself):
// the budget does not rest the whole store for it.
func partial(err error) bool {
	var p interface{ PartialOutage() bool }
	return errors.As(err, &p) && p.PartialOutage()
}

// storeRest is how long a budget leaves a store alone after it failed: the
// local state decides meanwhile, so an outage costs at most one timeout
// per rest, and the store is tried again after it.
const storeRest = 250 * time.Millisecond

// errResting is the StoreError of an operation decided locally because the
// store failed moments ago.
var errResting = resting{}

type resting struct{}

func (resting) Error() string { return "budget: the store failed moments ago; deciding locally" }

// WithTokenStore makes the Retry keep its balance in s, shared by every
// replica using the same store (the TokenStore names the bucket). Deposits
// and the adaptive algorithm's charges are batched (sent in the background
// 10 ms after the last send or once ten tokens are queued, or with the next
// withdrawal); a retry's withdrawal is one round trip. When s fails or does not answer within
// [WithTokenStoreTimeout], the Retry carries on with its local balance,
// starting from the last balance s gave, reports it to
// [WithOnTokenStoreError], marks the call whose retry it decided
// (Call.Degraded is "retry_budget", which the tracing and logging layers
// show), and leaves s alone for a quarter of a second. nil means an
// in-process balance only (the default).
func WithTokenStore(s TokenStore) RetryOption {
	return func(c *retryConfig) { c.store = s }
}

// WithTokenStoreTimeout bounds how long one operation waits for the
// [TokenStore] (0 means [DefaultStoreTimeout]). A negative d is ignored and
// reported by [ValidateRetry].
func WithTokenStoreTimeout(d time.Duration) RetryOption {
	return func(c *retryConfig) {
		if d < 0 {
			c.reject("WithTokenStoreTimeout(%v): the timeout must not be negative", d)
			return
		}
		c.timeout = d
	}
}

// WithOnTokenStoreError sets a function called for every operation the
// [TokenStore] did not complete (nil means none). It runs on the caller's
// goroutine, or on the goroutine that sends a batch, and must not block.
func WithOnTokenStoreError(f func(StoreError)) RetryOption {
	return func(c *retryConfig) { c.onError = f }
}

// WithRunStore makes a named run (see [WithID]) count its attempts in s, so
// its caps hold across every replica serving its calls; a run without an id
// counts in-process. Each [Run.Take] is one round trip. When s fails or does
// not answer within [WithRunStoreTimeout], the run counts locally from the
// highest count s gave, reports it to [WithOnRunStoreError], marks the call
// whose attempt it counted (Call.Degraded is "run_budget"), and leaves s
// alone for a quarter of a second. nil means in-process counts only (the
// default).
func WithRunStore(s RunStore) RunOption {
	return func(c *runConfig) { c.store = s }
}

// WithRunStoreTimeout bounds how long one [Run.Take] waits for the
// [RunStore] (0 means [DefaultStoreTimeout]). A negative d is ignored and
// reported by [ValidateRun].
func WithRunStoreTimeout(d time.Duration) RunOption {
	return func(c *runConfig) {
		if d < 0 {
			c.reject("WithRunStoreTimeout(%v): the timeout must not be negative", d)
			return
		}
		c.timeout = d
	}
}

// WithOnRunStoreError sets a function called, on the caller's goroutine,
// for every [Run.Take] the [RunStore] did not complete (nil means none). It
// must not block.
func WithOnRunStoreError(f func(StoreError)) RunOption {
	return func(c *runConfig) { c.onError = f }
}

// sharedTokens is the part of a Retry kept in a TokenStore.
type sharedTokens struct {
	store   TokenStore
	timeout time.Duration
	onError func(StoreError)

	add, take atomic.Int64 // thousandths not yet sent
	sent      atomic.Int64 // unix nanoseconds of the last send
	sending   atomic.Bool  // a batch is on its way
	rest      atomic.Int64 // unix nanoseconds until which the store is left alone
}

// healthy reports whether the store may be asked now.
func (s *sharedTokens) healthy(now int64) bool {
	return now >= s.rest.Load()
}

// failed records that the store failed at now and reports it.
func (s *sharedTokens) failed(op string, err error, now int64) {
	if !partial(err) {
		s.rest.Store(now + int64(storeRest))
	}
	if s.onError != nil {
		s.onError(StoreError{Op: op, Err: err})
	}
}

// deposit queues n thousandths to add and sends the batch when it is due.
func (b *Retry) sharedDeposit(n int64) {
	s := b.shared
	pending := s.add.Add(n)
	now := time.Now().UnixNano()
	if (pending >= flushTokens || now-s.sent.Load() >= int64(flushEvery)) &&
		s.healthy(now) && s.sending.CompareAndSwap(false, true) {
		go b.send()
	}
}

// send sends the queued batch, on a goroutine of its own.
func (b *Retry) send() {
	defer b.shared.sending.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), b.shared.timeout)
	defer cancel()
	if _, err := b.apply(ctx, 0); err != nil {
		b.shared.failed("deposit", err, time.Now().UnixNano())
	}
}

// Flush sends the deposits and charges of a Retry with a [TokenStore] that
// are not sent yet, and reads the shared balance back into the local one
// ([Retry.Tokens]); it returns the store's error, if any (the amounts are
// then kept for the next send). It is for shutdown and tests; a Retry
// without a store has nothing to send. It is safe for concurrent use.
func (b *Retry) Flush(ctx context.Context) error {
	if b.shared == nil {
		return nil
	}
	_, err := b.apply(ctx, 0)
	return err
}

// apply sends the queued amounts with a withdrawal of withdraw thousandths
// and mirrors the balance the store returns locally. On an error the
// amounts are queued again.
func (b *Retry) apply(ctx context.Context, withdraw int64) (TokenBalance, error) {
	s := b.shared
	_, capacity := b.params()
	add, take := s.add.Swap(0), s.take.Swap(0)
	r, err := s.store.Apply(ctx, TokenOp{Capacity: capacity, Add: add, Take: take, Withdraw: withdraw})
	corrupt := err != nil && errors.Is(err, ErrStoreCorrupt)
	if err != nil && !corrupt {
		s.add.Add(add)
		s.take.Add(take)
		return TokenBalance{}, err
	}
	s.sent.Store(time.Now().UnixNano())
	// The local balance follows the shared one, less what is queued since.
	balance := min(max(r.Balance+s.add.Load()-s.take.Load(), 0), capacity)
	b.spent.Store(capacity - balance)
	if corrupt {
		// The store answered, reading what it held as empty: the op is
		// applied and nothing was withdrawn. Report it; no rest.
		op := "deposit"
		if withdraw > 0 {
			op = "retry"
		}
		if s.onError != nil {
			s.onError(StoreError{Op: op, Err: err})
		}
		r.Withdrawn = false
	}
	return r, nil
}

// sharedTryRetry withdraws a token from the store, or from the local
// balance when the store cannot answer.
func (b *Retry) sharedTryRetry(ctx context.Context) bool {
	s := b.shared
	if s.healthy(time.Now().UnixNano()) {
		sctx, cancel := context.WithTimeout(ctx, s.timeout)
		r, err := b.apply(sctx, milli)
		cancel()
		switch {
		case err == nil:
			return r.Withdrawn
		case ctx.Err() == nil: // the caller's end is not the store's failure
			s.failed("retry", err, time.Now().UnixNano())
			callnote.Degraded(ctx, "retry_budget")
		}
	} else {
		if s.onError != nil {
			s.onError(StoreError{Op: "retry", Err: errResting})
		}
		callnote.Degraded(ctx, "retry_budget")
	}
	return b.localTryRetry()
}

// sharedTake takes one attempt of tool from the run's store, or from the
// local count when the store cannot answer.
func (r *Run) sharedTake(ctx context.Context, tool string, limit int) (ok, decided bool) {
	now := time.Now().UnixNano()
	if now < r.rest.Load() {
		if r.onError != nil {
			r.onError(StoreError{Op: "take", Err: errResting})
		}
		callnote.Degraded(ctx, "run_budget")
		return false, false
	}
	sctx, cancel := context.WithTimeout(ctx, r.timeout)
	used, ok, err := r.store.Take(sctx, r.id, tool, limit)
	cancel()
	if errors.Is(err, ErrStoreCorrupt) {
		// The store answered with a count it cannot read: refuse the
		// attempt (fail closed) and report it; no rest.
		if r.onError != nil {
			r.onError(StoreError{Op: "take", Err: err})
		}
		return false, true
	}
	if err != nil && ctx.Err() != nil {
		return false, false // the caller's end, not the store's failure
	}
	if err != nil {
		if !partial(err) {
			r.rest.Store(time.Now().UnixNano() + int64(storeRest))
		}
		if r.onError != nil {
			r.onError(StoreError{Op: "take", Err: err})
		}
		callnote.Degraded(ctx, "run_budget")
		return false, false
	}
	r.mu.Lock()
	if r.used == nil {
		r.used = make(map[string]int)
	}
	// A run's shared count only grows, but answers to concurrent takes
	// arrive in any order: keep the highest, so a late answer with an older
	// count does not hand back attempts the store has already given out.
	r.used[tool] = max(r.used[tool], used)
	r.mu.Unlock()
	return ok, true
}
