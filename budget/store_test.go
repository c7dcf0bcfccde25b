package budget_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw/budget"
)

// memBucket is a TokenStore in memory, with the semantics of the port: a
// bucket it has not seen is full. fail, when set, makes it fail or stall.
type memBucket struct {
	mu      sync.Mutex
	seen    bool
	balance int64
	ops     []budget.TokenOp
	fail    func(ctx context.Context) error
}

func (m *memBucket) Apply(ctx context.Context, op budget.TokenOp) (budget.TokenBalance, error) {
	m.mu.Lock()
	fail := m.fail
	m.ops = append(m.ops, op)
	m.mu.Unlock()
	if fail != nil {
		if err := fail(ctx); err != nil {
			return budget.TokenBalance{}, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.seen {
		m.seen, m.balance = true, op.Capacity
	}
	m.balance = min(m.balance+op.Add, op.Capacity)
	m.balance = max(m.balance-op.Take, 0)
	ok := op.Withdraw > 0 && m.balance >= op.Withdraw
	if ok {
		m.balance -= op.Withdraw
	}
	return budget.TokenBalance{Balance: m.balance, Withdrawn: ok}, nil
}

func (m *memBucket) set(balance int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen, m.balance = true, balance
}

func (m *memBucket) state() (balance int64, ops []budget.TokenOp) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.balance, append([]budget.TokenOp(nil), m.ops...)
}

func (m *memBucket) failWith(f func(ctx context.Context) error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = f
}

var errDown = errors.New("dial tcp 10.0.0.7:6379: connection refused")

func down(context.Context) error { return errDown }

func stall(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestTokenStoreShared: two Retry budgets on one store draw on one bucket:
// the reserve is spent once, whichever withdraws, and the deposits of one
// pay for the retries of the other.
func TestTokenStoreShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &memBucket{}
		a := budget.NewRetry(budget.WithReserve(3), budget.WithTokenStore(store))
		b := budget.NewRetry(budget.WithReserve(3), budget.WithTokenStore(store))
		got := 0
		for i := range 8 {
			if []*budget.Retry{a, b}[i%2].TryRetry() {
				got++
			}
		}
		if got != 3 {
			t.Fatalf("retries = %d, want the shared reserve, 3", got)
		}
		for range 20 { // 2 tokens at 0.1 a call
			a.Deposit()
		}
		synctest.Wait()
		if err := a.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := []bool{b.TryRetry(), b.TryRetry(), b.TryRetry()}; !got[0] || !got[1] || got[2] {
			t.Errorf("b's retries = %v, want exactly the 2 tokens a deposited", got)
		}
		if tokens := a.Tokens(); tokens != 2 {
			t.Errorf("a.Tokens() = %v, want the 2 tokens of its last send", tokens)
		}
		if err := a.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if tokens := a.Tokens(); tokens != 0 {
			t.Errorf("a.Tokens() = %v after a Flush, want the shared 0", tokens)
		}
	})
}

// TestTokenStoreBatches: deposits are sent in batches of ten tokens (or 10
// ms, or with the next withdrawal), not one round trip per call.
func TestTokenStoreBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &memBucket{}
		store.set(0)
		b := budget.NewAdaptive(budget.WithReserve(100), budget.WithTokenStore(store))
		for range 1000 { // 100 tokens
			b.Deposit()
			synctest.Wait()
		}
		if err := b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		balance, ops := store.state()
		if balance != 100_000 {
			t.Errorf("balance = %d thousandths, want 100 tokens", balance)
		}
		if len(ops) > 11 {
			t.Errorf("%d round trips for 1000 deposits, want at most one per ten tokens", len(ops))
		}
		// Observe's charges are queued and sent with the next withdrawal.
		b.Observe(budget.Attempt{Retry: true, Outcome: budget.Overloaded}) // −1
		b.Observe(budget.Attempt{Outcome: budget.Overloaded})              // −0.1
		n := len(ops)
		if !b.TryRetry() {
			t.Fatal("no retry with 100 tokens")
		}
		balance, ops = store.state()
		if balance != 100_000-1000-100-1000 {
			t.Errorf("balance = %d, want 97.9 tokens", balance)
		}
		if len(ops) != n+1 {
			t.Errorf("%d round trips for two charges and a withdrawal, want 1", len(ops)-n)
		}
	})
}

// TestTokenStoreFallsBack: a store that fails or stalls leaves the retry to
// the local balance, which starts from the last shared one, within the
// store timeout; the fallback is reported; the store rests, then is asked
// again.
func TestTokenStoreFallsBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(context.Context) error
		took time.Duration
		want error
	}{
		{"error", down, 0, errDown},
		{"stall", stall, 20 * time.Millisecond, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &memBucket{}
				var reports []budget.StoreError
				var mu sync.Mutex
				b := budget.NewRetry(budget.WithReserve(5), budget.WithTokenStore(store),
					budget.WithTokenStoreTimeout(20*time.Millisecond),
					budget.WithOnTokenStoreError(func(e budget.StoreError) {
						mu.Lock()
						reports = append(reports, e)
						mu.Unlock()
					}))
				for range 4 { // the shared bucket holds 1 token
					if !b.TryRetry() {
						t.Fatal("refused with tokens left")
					}
				}
				store.failWith(tc.fail)
				start := time.Now()
				if !b.TryRetry() {
					t.Error("the local balance, following the shared one, refused its last token")
				}
				if took := time.Since(start); took != tc.took {
					t.Errorf("the fallback took %v, want %v", took, tc.took)
				}
				if b.TryRetry() {
					t.Error("the local balance granted a token the shared bucket did not have")
				}
				mu.Lock()
				if len(reports) != 2 || reports[0].Op != "retry" || !errors.Is(reports[0].Err, tc.want) {
					t.Errorf("reports = %+v, want 2, the first a retry with %v", reports, tc.want)
				}
				mu.Unlock()
				_, ops := store.state()
				if len(ops) != 5 {
					t.Errorf("the store was asked %d times, want 5 (it rests after its failure)", len(ops))
				}
				time.Sleep(time.Second)
				store.failWith(nil)
				b.TryRetry()
				if _, ops := store.state(); len(ops) != 6 {
					t.Error("the store was not asked again after its rest")
				}
			})
		})
	}
}

// TestRunStoreShared: Runs with the same id on one store share their caps,
// whichever takes; a Run without an id never asks the store.
func TestRunStoreShared(t *testing.T) {
	store := &memRuns{}
	a := budget.NewRun(budget.WithID("run-1"), budget.WithMaxAttempts(5), budget.WithRunStore(store))
	b := budget.NewRun(budget.WithID("run-1"), budget.WithMaxAttempts(5), budget.WithRunStore(store))
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	for i := range 20 {
		wg.Go(func() {
			if []*budget.Run{a, b}[i%2].Take("search") {
				mu.Lock()
				taken++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if taken != 5 {
		t.Errorf("taken = %d across two replicas, want the cap, 5", taken)
	}
	if a.Used("search") != 5 || b.Remaining("search") != 0 {
		t.Errorf("Used = %d, Remaining = %d; want 5, 0", a.Used("search"), b.Remaining("search"))
	}
	local := budget.NewRun(budget.WithRunStore(store))
	local.Take("search")
	if n := store.calls(); n != 20 {
		t.Errorf("store calls = %d, want 20 (a run without an id is local)", n)
	}
}

// TestRunStoreFallsBack: a run store that fails or stalls leaves the count
// to the Run, from the last count it gave, within the timeout.
func TestRunStoreFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &memRuns{}
		var reports int
		r := budget.NewRun(budget.WithID("run-1"), budget.WithMaxAttempts(3), budget.WithRunStore(store),
			budget.WithRunStoreTimeout(20*time.Millisecond),
			budget.WithOnRunStoreError(func(e budget.StoreError) {
				if e.Op == "take" {
					reports++
				}
			}))
		if first, second := r.Take("search"), r.Take("search"); !first || !second {
			t.Fatal("refused under the cap")
		}
		store.failWith(stall)
		start := time.Now()
		if third, fourth := r.Take("search"), r.Take("search"); !third || fourth {
			t.Error("the local count did not carry on from the shared one (2 of 3 used)")
		}
		if took := time.Since(start); took != 20*time.Millisecond {
			t.Errorf("took %v, want one store timeout, 20ms", took)
		}
		if reports != 2 {
			t.Errorf("reports = %d, want 2", reports)
		}
	})
}

func TestStoreOptionsInvalid(t *testing.T) {
	if budget.ValidateRetry(budget.WithTokenStoreTimeout(-1)) == nil {
		t.Error("ValidateRetry accepted a negative store timeout")
	}
	if budget.ValidateRun(budget.WithRunStoreTimeout(-1)) == nil {
		t.Error("ValidateRun accepted a negative store timeout")
	}
	if err := budget.ValidateRetry(budget.WithTokenStore(nil), budget.WithTokenStoreTimeout(0)); err != nil {
		t.Errorf("ValidateRetry(nil store, 0) = %v, want the defaults", err)
	}
	// The zero Retry has no store: Flush has nothing to send.
	var b budget.Retry
	if err := b.Flush(context.Background()); err != nil {
		t.Error(err)
	}
}

// memRuns is a RunStore in memory.
type memRuns struct {
	mu   sync.Mutex
	used map[[2]string]int
	n    int
	fail func(context.Context) error
}

func (m *memRuns) Take(ctx context.Context, id, tool string, limit int) (int, bool, error) {
	m.mu.Lock()
	m.n++
	fail := m.fail
	m.mu.Unlock()
	if fail != nil {
		if err := fail(ctx); err != nil {
			return 0, false, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used == nil {
		m.used = make(map[[2]string]int)
	}
	k := [2]string{id, tool}
	if m.used[k] >= limit {
		return m.used[k], false, nil
	}
	m.used[k]++
	return m.used[k], true, nil
}

func (m *memRuns) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

func (m *memRuns) failWith(f func(context.Context) error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = f
}

// TestStoreBoundedByContext: TryRetryContext and TakeContext wait for a
// stalled store no longer than the caller's context, decide locally, and
// do not count the caller's end against the store: it is asked again next
// time, and nothing is reported.
func TestStoreBoundedByContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tokens, runs := &memBucket{}, &memRuns{}
		tokens.failWith(stall)
		runs.failWith(stall)
		reported := 0
		onErr := func(budget.StoreError) { reported++ }
		b := budget.NewRetry(budget.WithTokenStore(tokens), budget.WithTokenStoreTimeout(time.Second), budget.WithOnTokenStoreError(onErr))
		r := budget.NewRun(budget.WithID("run-1"), budget.WithRunStore(runs), budget.WithRunStoreTimeout(time.Second), budget.WithOnRunStoreError(onErr))
		for _, op := range []func(context.Context) bool{b.TryRetryContext, func(ctx context.Context) bool { return r.TakeContext(ctx, "search") }} {
			for range 2 {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
				start := time.Now()
				if !op(ctx) {
					t.Error("refused with local tokens and attempts left")
				}
				if took := time.Since(start); took != 10*time.Millisecond {
					t.Errorf("took %v, want the caller's 10ms", took)
				}
				cancel()
			}
		}
		if _, ops := tokens.state(); len(ops) != 2 || runs.calls() != 2 {
			t.Errorf("the stores were asked %d and %d times, want 2 each (no rest)", len(ops), runs.calls())
		}
		if reported != 0 {
			t.Errorf("%d fallbacks reported for the caller's own deadline, want 0", reported)
		}
	})
}

// TestRunStoreAnswersOutOfOrder: when the answer to an earlier take (count
// 1) arrives after the answer to a later one (count 2), the Run keeps the
// higher count rather than the last to arrive.
func TestRunStoreAnswersOutOfOrder(t *testing.T) {
	store := &crossedRuns{counted: make(chan struct{}), release: make(chan struct{})}
	r := budget.NewRun(budget.WithID("run-1"), budget.WithMaxAttempts(5), budget.WithRunStore(store),
		budget.WithRunStoreTimeout(time.Minute)) // the held answer is not a stall
	done := make(chan bool)
	go func() { done <- r.Take("search") }()
	<-store.counted
	if !r.Take("search") {
		t.Fatal("the second take was refused under the cap")
	}
	close(store.release)
	if !<-done {
		t.Fatal("the first take was refused under the cap")
	}
	if got := r.Used("search"); got != 2 {
		t.Errorf("Used = %d after two takes whose answers crossed, want 2", got)
	}
}

// crossedRuns is a RunStore whose first answer is held back until release
// is closed, after the take has been counted.
type crossedRuns struct {
	memRuns
	once             sync.Once
	counted, release chan struct{}
}

func (c *crossedRuns) Take(ctx context.Context, id, tool string, limit int) (int, bool, error) {
	used, ok, err := c.memRuns.Take(ctx, id, tool, limit)
	held := false
	c.once.Do(func() { held = true })
	if held {
		close(c.counted)
		<-c.release
	}
	return used, ok, err
}

// corruptRuns is a RunStore whose counts do not parse: every Take says so.
type corruptRuns struct{ calls int }

func (c *corruptRuns) Take(context.Context, string, string, int) (int, bool, error) {
	c.calls++
	return 0, false, errors.Join(errors.New("calls field is \"garbage\""), budget.ErrStoreCorrupt)
}

// corruptBucket is a TokenStore whose balance does not parse: it reads
// it as empty, applies the op to that and says so.
type corruptBucket struct{ calls int }

func (c *corruptBucket) Apply(_ context.Context, op budget.TokenOp) (budget.TokenBalance, error) {
	c.calls++
	return budget.TokenBalance{Balance: min(op.Add, op.Capacity)}, errors.Join(errors.New("balance is \"garbage\""), budget.ErrStoreCorrupt)
}

// TestStoreCorruptFailsClosed: a RunStore whose count of a run does not
// parse refuses the attempt — it is not counted locally, as an outage
// would be — and reports it, every time (the store answered: it is not
// left alone); a TokenStore whose balance does not parse lends no retry,
// and is reported, every time.
func TestStoreCorruptFailsClosed(t *testing.T) {
	runs := &corruptRuns{}
	var reports []budget.StoreError
	r := budget.NewRun(budget.WithID("run-1"), budget.WithRunStore(runs),
		budget.WithOnRunStoreError(func(e budget.StoreError) { reports = append(reports, e) }))
	for i := range 3 {
		if r.Take("pay") {
			t.Fatalf("take %d: an attempt was taken on a count that does not parse", i+1)
		}
	}
	if runs.calls != 3 || len(reports) != 3 || reports[0].Op != "take" || !errors.Is(reports[0].Err, budget.ErrStoreCorrupt) {
		t.Fatalf("%d store calls, reports %v", runs.calls, reports)
	}

	bucket := &corruptBucket{}
	reports = nil
	b := budget.NewRetry(budget.WithTokenStore(bucket),
		budget.WithOnTokenStoreError(func(e budget.StoreError) { reports = append(reports, e) }))
	for i := range 3 {
		if b.TryRetry() {
			t.Fatalf("retry %d: a token was lent by a balance that does not parse", i+1)
		}
	}
	if bucket.calls != 3 || len(reports) != 3 || reports[0].Op != "retry" || !errors.Is(reports[0].Err, budget.ErrStoreCorrupt) {
		t.Fatalf("%d store calls, reports %v", bucket.calls, reports)
	}
}

// partialOutage is the error of a store one node of which failed (as the
// Redis Store reports a node of a cluster): the store rests that node
// itself.
type partialOutage struct{}

func (partialOutage) Error() string       { return "one node of the store failed" }
func (partialOutage) PartialOutage() bool { return true }

// TestPartialOutageDoesNotRest: a failure of part of a store does not rest
// the whole store, for the token bucket or the run's counts: the next
// operation asks it again (other keys live on other nodes).
func TestPartialOutageDoesNotRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		partial := func(context.Context) error { return partialOutage{} }
		bucket := &memBucket{}
		b := budget.NewRetry(budget.WithReserve(5), budget.WithTokenStore(bucket))
		bucket.failWith(partial)
		b.TryRetry()
		b.TryRetry()
		if _, ops := bucket.state(); len(ops) != 2 {
			t.Errorf("the token store was asked %d times, want 2: a partial outage does not rest it", len(ops))
		}
		runs := &memRuns{}
		r := budget.NewRun(budget.WithID("run-1"), budget.WithMaxAttempts(3), budget.WithRunStore(runs))
		runs.failWith(partial)
		r.Take("search")
		r.Take("search")
		if n := runs.calls(); n != 2 {
			t.Errorf("the run store was asked %d times, want 2: a partial outage does not rest it", n)
		}
	})
}
