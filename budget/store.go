package budget

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/store"
)

// A TokenStore keeps a [Retry]'s balance outside the process, so that every
// replica given the same TokenStore draws on one bucket. adapters/redisstate
// implements it on Redis. Amounts are in thousandths of a token.
//
// Implementations must be safe for concurrent use, and return soon after
// ctx is done: a retry waits for Apply.
type TokenStore interface {
	// Apply applies op to the shared bucket atomically and returns the
	// balance after it. A bucket the store has never seen (or has
	// forgotten) is full: it holds op.Capacity.
	//
	// A balance that does not parse (garbage, a negative or out-of-range
	// number, a key of another type: what a broken or hostile writer left)
	// reads as empty: Apply applies op to that and writes the result over
	// it, withdrawing nothing, and returns the new balance with an error
	// wrapping store.ErrCorrupt. The Retry takes that balance as the
	// store's answer (no retry is lent by a balance it cannot read),
	// reports the error, and does not leave the store alone (it answered).
	Apply(ctx context.Context, op TokenOp) (TokenBalance, error)
}

// TokenOp is one change to a shared bucket, applied in this order: Add,
// Take, Withdraw. Amounts are in thousandths of a token and never negative.
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

// TokenBalance is a shared bucket after a [TokenOp].
type TokenBalance struct {
	// Balance is what the bucket holds, in thousandths of a token.
	Balance int64
	// Withdrawn says the op's Withdraw was taken.
	Withdrawn bool
}

// A RunStore keeps how many attempts each tool of a named run has used,
// outside the process, so that the cap of a [Run] holds however many
// replicas serve the run's calls. adapters/redisstate implements it on Redis.
//
// Implementations must be safe for concurrent use, and return soon after
// ctx is done: an attempt waits for Take.
type RunStore interface {
	// Take takes one attempt of tool in the run named id if fewer than
	// limit were taken, and returns how many are taken after it and whether
	// it took one. id is a valid run id (see [WithID]); tool is not
	// sanitised: the store must treat it as hostile.
	//
	// A count that does not parse (garbage, a negative or out-of-range
	// number, a key of another type) takes nothing: Take returns ok false
	// with an error wrapping store.ErrCorrupt. The Run refuses the attempt
	// (fails closed, as if the cap were used up), reports the error, and
	// does not leave the store alone (it answered).
	Take(ctx context.Context, id, tool string, limit int) (used int, ok bool, err error)
}

// Batching of a shared Retry's deposits: a deposit sends the queue, in the
// background, once it holds flushTokens or flushEvery has passed since the
// last send, whichever comes first, so a call does not pay a round trip for
// its deposit and a busy replica sends at most a hundred batches a second.
const (
	flushTokens = 10 * milli
	flushEvery  = 10 * time.Millisecond
)

// WithTokenStore makes the Retry keep its balance in s, shared by every
// replica using the same store (the TokenStore names the bucket), used as
// opts say (store.WithTimeout, store.WithOnError). Deposits and the
// adaptive algorithm's charges are batched (sent in the background 10 ms
// after the last send or once ten tokens are queued, or with the next
// withdrawal); a retry's withdrawal is one round trip. When s fails or does
// not answer within its timeout, the Retry carries on with its local
// balance, starting from the last balance s gave, reports it as a
// store.Error of layer "retry_budget" (Op "retry" for a withdrawal,
// "deposit" for a batch), tells the caller of [Retry.TryRetryContext] that
// it decided without s, and leaves s alone for store.Rest. nil means an
// in-process balance only (the default). An invalid option is ignored, the
// default kept, and reported by [ValidateRetry].
func WithTokenStore(s TokenStore, opts ...store.Option) RetryOption {
	return func(c *retryConfig) {
		c.store = s
		cfg, err := store.NewConfig(opts...)
		if err != nil {
			c.reject("WithTokenStore: %v", err)
		}
		c.storeCfg = cfg
	}
}

// WithRunStore makes a named run (see [WithID]) count its attempts in s,
// used as opts say (store.WithTimeout, store.WithOnError), so its caps hold
// across every replica serving its calls; a run without an id counts
// in-process. Each [Run.Take] is one round trip. When s fails or does not
// answer within its timeout, the run counts locally from the highest count
// s gave, reports it as a store.Error of layer "run_budget" and Op "take",
// tells the caller of [Run.TakeContext] that it decided without s, and
// leaves s alone for store.Rest. nil means in-process counts only (the
// default). An invalid option is ignored, the default kept, and reported by
// [ValidateRun].
func WithRunStore(s RunStore, opts ...store.Option) RunOption {
	return func(c *runConfig) {
		c.store = s
		cfg, err := store.NewConfig(opts...)
		if err != nil {
			c.reject("WithRunStore: %v", err)
		}
		c.storeCfg = cfg
	}
}

// sharedTokens is the part of a Retry kept in a TokenStore.
type sharedTokens struct {
	store TokenStore
	guard *storeguard.Guard

	add, take atomic.Int64 // thousandths not yet sent
	sent      atomic.Int64 // unix nanoseconds of the last send
	sending   atomic.Bool  // a batch is on its way
}

// deposit queues n thousandths to add and sends the batch when it is due.
func (b *Retry) sharedDeposit(n int64) {
	s := b.shared
	pending := s.add.Add(n)
	now := time.Now().UnixNano()
	if (pending >= flushTokens || now-s.sent.Load() >= int64(flushEvery)) &&
		!s.guard.Resting() && s.sending.CompareAndSwap(false, true) {
		go b.send()
	}
}

// send sends the queued batch, on a goroutine of its own.
func (b *Retry) send() {
	defer b.shared.sending.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), b.shared.guard.Timeout())
	defer cancel()
	if _, err := b.apply(ctx, 0); err != nil {
		b.shared.guard.Failed("deposit", "", err)
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
// amounts are queued again. A balance that does not parse is the store's
// answer: it is reported, nothing is withdrawn, and apply returns no error.
func (b *Retry) apply(ctx context.Context, withdraw int64) (TokenBalance, error) {
	s := b.shared
	_, capacity := b.params()
	add, take := s.add.Swap(0), s.take.Swap(0)
	r, err := s.store.Apply(ctx, TokenOp{Capacity: capacity, Add: add, Take: take, Withdraw: withdraw})
	corrupt := errors.Is(err, store.ErrCorrupt)
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
		// applied and nothing was withdrawn (a retry is refused). Report
		// it; no rest.
		if withdraw > 0 {
			s.guard.Corrupt("retry", "", err)
		} else {
			s.guard.After("deposit", "", err)
		}
		r.Withdrawn = false
	}
	return r, nil
}

// sharedTryRetry withdraws a token from the store, or from the local
// balance when the store cannot answer; degraded says the store failed or
// rests.
func (b *Retry) sharedTryRetry(ctx context.Context) (ok, degraded bool) {
	var r TokenBalance
	local, end := b.shared.guard.Ask(ctx, "retry", "", func(ctx context.Context) error {
		var err error
		r, err = b.apply(ctx, milli)
		return err
	})
	switch {
	case end != nil: // the caller's end is not the store's failure
		return b.localTryRetry(), false
	case local:
		return b.localTryRetry(), true
	}
	return r.Withdrawn, false
}

// sharedTake takes one attempt of tool from the run's store. decided false
// leaves the attempt to the local count: the store failed or rests
// (degraded), or ctx ended first.
func (r *Run) sharedTake(ctx context.Context, tool string, limit int) (ok, decided, degraded bool) {
	var used int
	var corrupt error
	local, end := r.guard.Ask(ctx, "take", "", func(ctx context.Context) error {
		var err error
		used, ok, err = r.store.Take(ctx, r.id, tool, limit)
		if errors.Is(err, store.ErrCorrupt) {
			corrupt = err // an answer: not the store's failure
			return nil
		}
		return err
	})
	switch {
	case corrupt != nil:
		// The store answered with a count it cannot read: refuse the
		// attempt (fail closed) and report it; no rest.
		r.guard.Corrupt("take", "", corrupt)
		return false, true, false
	case end != nil: // the caller's end, not the store's failure
		return false, false, false
	case local:
		return false, false, true
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
	return ok, true, false
}
