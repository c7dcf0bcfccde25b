package budget_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/budget/budgettest"
	"github.com/toolmw/toolmw/store"
)

// faulty makes a store fail or stall as fail says, and counts the
// operations it was asked, failed or not.
type faulty struct {
	mu    sync.Mutex
	fail  func(context.Context) error
	asked int
}

func (f *faulty) failWith(fail func(context.Context) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = fail
}

// ask counts an operation and returns fail's error, if any.
func (f *faulty) ask(ctx context.Context) error {
	f.mu.Lock()
	f.asked++
	fail := f.fail
	f.mu.Unlock()
	if fail == nil {
		return nil
	}
	return fail(ctx)
}

func (f *faulty) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked
}

// tokens is a memory TokenStore that can be made to fail.
type tokens struct {
	budgettest.MemTokenStore
	faulty
}

func (s *tokens) Apply(ctx context.Context, op budget.TokenOp) (budget.TokenBalance, error) {
	if err := s.ask(ctx); err != nil {
		return budget.TokenBalance{}, err
	}
	return s.MemTokenStore.Apply(ctx, op)
}

// runs is a memory RunStore that can be made to fail.
type runs struct {
	budgettest.MemRunStore
	faulty
}

func (s *runs) Take(ctx context.Context, id, tool string, limit int) (int, bool, error) {
	if err := s.ask(ctx); err != nil {
		return 0, false, err
	}
	return s.MemRunStore.Take(ctx, id, tool, limit)
}

var errDown = errors.New("dial tcp 10.0.0.7:6379: connection refused")

func down(context.Context) error { return errDown }

func stall(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// reports collects the store errors reported to it.
type reports struct {
	mu   sync.Mutex
	errs []store.Error
}

func (r *reports) option() store.Option {
	return store.WithOnError(func(e store.Error) {
		r.mu.Lock()
		r.errs = append(r.errs, e)
		r.mu.Unlock()
	})
}

func (r *reports) get() []store.Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]store.Error(nil), r.errs...)
}

// TestTokenStoreShared: two Retry budgets on one store draw on one bucket:
// the reserve is spent once, whichever withdraws, and the deposits of one
// pay for the retries of the other.
func TestTokenStoreShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &budgettest.MemTokenStore{}
		a := budget.NewRetry(budget.WithReserve(3), budget.WithTokenStore(s))
		b := budget.NewRetry(budget.WithReserve(3), budget.WithTokenStore(s))
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
		s := &budgettest.MemTokenStore{}
		s.Set(0)
		b := budget.NewAdaptive(budget.WithReserve(100), budget.WithTokenStore(s))
		for range 1000 { // 100 tokens
			b.Deposit()
			synctest.Wait()
		}
		if err := b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if balance, _ := s.Balance(); balance != 100_000 {
			t.Errorf("balance = %d thousandths, want 100 tokens", balance)
		}
		if n := s.Ops(); n > 11 {
			t.Errorf("%d round trips for 1000 deposits, want at most one per ten tokens", n)
		}
		// Observe's charges are queued and sent with the next withdrawal.
		b.Observe(budget.Attempt{Retry: true, Outcome: budget.Overloaded}) // −1
		b.Observe(budget.Attempt{Outcome: budget.Overloaded})              // −0.1
		n := s.Ops()
		if !b.TryRetry() {
			t.Fatal("no retry with 100 tokens")
		}
		if balance, _ := s.Balance(); balance != 100_000-1000-100-1000 {
			t.Errorf("balance = %d, want 97.9 tokens", balance)
		}
		if s.Ops() != n+1 {
			t.Errorf("%d round trips for two charges and a withdrawal, want 1", s.Ops()-n)
		}
	})
}

// TestTokenStoreFallsBack: a store that fails or stalls leaves the retry to
// the local balance, which starts from the last shared one, within the
// store timeout; the fallback is reported and returned as degraded; the
// store rests, then is asked again.
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
				s := &tokens{}
				var got reports
				b := budget.NewRetry(budget.WithReserve(5), budget.WithTokenStore(s,
					store.WithTimeout(20*time.Millisecond), got.option()))
				ctx := context.Background()
				for range 4 { // the shared bucket holds 1 token
					if ok, degraded := b.TryRetryContext(ctx); !ok || degraded {
						t.Fatalf("TryRetryContext = %v, %v with tokens left, want true, false", ok, degraded)
					}
				}
				s.failWith(tc.fail)
				start := time.Now()
				if ok, degraded := b.TryRetryContext(ctx); !ok || !degraded {
					t.Errorf("TryRetryContext = %v, %v; want the local balance's last token, degraded", ok, degraded)
				}
				if took := time.Since(start); took != tc.took {
					t.Errorf("the fallback took %v, want %v", took, tc.took)
				}
				if ok, degraded := b.TryRetryContext(ctx); ok || !degraded {
					t.Errorf("TryRetryContext = %v, %v while the store rests; want false (no local token), degraded", ok, degraded)
				}
				r := got.get()
				want := store.Error{Layer: "retry_budget", Op: "retry", Err: r[0].Err}
				if len(r) != 2 || r[0] != want || !errors.Is(r[0].Err, tc.want) || !errors.Is(r[1].Err, store.ErrResting) {
					t.Errorf("reports = %+v, want 2: a retry with %v, then one resting", r, tc.want)
				}
				if n := s.calls(); n != 5 {
					t.Errorf("the store was asked %d times, want 5 (it rests after its failure)", n)
				}
				time.Sleep(time.Second)
				s.failWith(nil)
				b.TryRetry()
				if n := s.calls(); n != 6 {
					t.Error("the store was not asked again after its rest")
				}
			})
		})
	}
}

// TestTokenStoreDepositFails: a batch of deposits the store did not take
// is reported as a deposit, rests the store, and is sent again with the
// next operation after the rest.
func TestTokenStoreDepositFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &tokens{}
		s.Set(0)
		var got reports
		b := budget.NewRetry(budget.WithReserve(5), budget.WithTokenStore(s, got.option()))
		s.failWith(down)
		for range 10 {
			b.Deposit()
		}
		synctest.Wait()
		if r := got.get(); len(r) != 1 || r[0].Layer != "retry_budget" || r[0].Op != "deposit" || !errors.Is(r[0].Err, errDown) {
			t.Fatalf("reports = %+v, want one deposit with %v", r, errDown)
		}
		asked := s.calls()
		for range 10 {
			b.Deposit()
		}
		synctest.Wait()
		if s.calls() != asked {
			t.Errorf("the store was asked while it rests")
		}
		s.failWith(nil)
		time.Sleep(store.Rest)
		if ok, degraded := b.TryRetryContext(context.Background()); !ok || degraded {
			t.Errorf("TryRetryContext = %v, %v after the rest, want the deposits' token from the store", ok, degraded)
		}
		if balance, _ := s.Balance(); balance != 1000 {
			t.Errorf("balance = %d, want the 2 tokens deposited less the 1 withdrawn", balance)
		}
	})
}

// TestRunStoreShared: Runs with the same id on one store share their caps,
// whichever takes; a Run without an id never asks the store.
func TestRunStoreShared(t *testing.T) {
	s := &budgettest.MemRunStore{}
	a := budget.NewRun(budget.WithID("run-1"), budget.WithMaxAttempts(5), budget.WithRunStore(s))
	b := budget.NewRun(budget.WithID("run-1"), budget.WithMaxAttempts(5), budget.WithRunStore(s))
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
	local := budget.NewRun(budget.WithRunStore(s))
	local.Take("search")
	if n := s.Ops(); n != 20 {
		t.Errorf("store calls = %d, want 20 (a run without an id is local)", n)
	}
}

// TestRunStoreFallsBack: a run store that fails or stalls leaves the count
// to the Run, from the last count it gave, within the timeout; the
// fallback is reported and returned as degraded.
func TestRunStoreFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &runs{}
		var got reports
		r := budget.NewRun(budget.WithID("run-1"), budget.WithMaxAttempts(3),
			budget.WithRunStore(s, store.WithTimeout(20*time.Millisecond), got.option()))
		ctx := context.Background()
		for range 2 {
			if ok, degraded := r.TakeContext(ctx, "search"); !ok || degraded {
				t.Fatalf("TakeContext = %v, %v under the cap, want true, false", ok, degraded)
			}
		}
		s.failWith(stall)
		start := time.Now()
		third, degraded3 := r.TakeContext(ctx, "search")
		fourth, degraded4 := r.TakeContext(ctx, "search")
		if !third || fourth {
			t.Error("the local count did not carry on from the shared one (2 of 3 used)")
		}
		if !degraded3 || !degraded4 {
			t.Errorf("degraded = %v, %v, want true for both takes decided locally", degraded3, degraded4)
		}
		if took := time.Since(start); took != 20*time.Millisecond {
			t.Errorf("took %v, want one store timeout, 20ms", took)
		}
		rep := got.get()
		want := store.Error{Layer: "run_budget", Op: "take", Err: context.DeadlineExceeded}
		if len(rep) != 2 || rep[0] != want || !errors.Is(rep[1].Err, store.ErrResting) {
			t.Errorf("reports = %+v, want 2: %+v, then one resting", rep, want)
		}
	})
}

// TestStoreOptionsInvalid: an invalid store option is reported by
// ValidateRetry and ValidateRun, and ignored by the constructors.
func TestStoreOptionsInvalid(t *testing.T) {
	if budget.ValidateRetry(budget.WithTokenStore(&budgettest.MemTokenStore{}, store.WithTimeout(-1))) == nil {
		t.Error("ValidateRetry accepted a negative store timeout")
	}
	if budget.ValidateRun(budget.WithRunStore(&budgettest.MemRunStore{}, store.WithTimeout(-1))) == nil {
		t.Error("ValidateRun accepted a negative store timeout")
	}
	if err := budget.ValidateRetry(budget.WithTokenStore(nil, store.WithTimeout(0), nil)); err != nil {
		t.Errorf("ValidateRetry(nil store, 0) = %v, want the defaults", err)
	}
	// The constructors keep the default timeout.
	synctest.Test(t, func(t *testing.T) {
		s := &tokens{}
		s.failWith(stall)
		b := budget.NewRetry(budget.WithTokenStore(s, store.WithTimeout(-1)))
		start := time.Now()
		b.TryRetry()
		if took := time.Since(start); took != store.DefaultTimeout {
			t.Errorf("a stalled store held the retry %v, want the default timeout, %v", took, store.DefaultTimeout)
		}
	})
	// The zero Retry has no store: Flush has nothing to send.
	var b budget.Retry
	if err := b.Flush(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestStoreBoundedByContext: TryRetryContext and TakeContext wait for a
// stalled store no longer than the caller's context, decide locally, and
// do not count the caller's end against the store: it is asked again next
// time, nothing is reported, and the call is not degraded.
func TestStoreBoundedByContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tk, rn := &tokens{}, &runs{}
		tk.failWith(stall)
		rn.failWith(stall)
		var got reports
		b := budget.NewRetry(budget.WithTokenStore(tk, store.WithTimeout(time.Second), got.option()))
		r := budget.NewRun(budget.WithID("run-1"), budget.WithRunStore(rn, store.WithTimeout(time.Second), got.option()))
		for _, op := range []func(context.Context) (bool, bool){b.TryRetryContext,
			func(ctx context.Context) (bool, bool) { return r.TakeContext(ctx, "search") }} {
			for range 2 {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
				start := time.Now()
				if ok, degraded := op(ctx); !ok || degraded {
					t.Errorf("= %v, %v; want true (local tokens and attempts left), not degraded", ok, degraded)
				}
				if took := time.Since(start); took != 10*time.Millisecond {
					t.Errorf("took %v, want the caller's 10ms", took)
				}
				cancel()
			}
		}
		if tk.calls() != 2 || rn.calls() != 2 {
			t.Errorf("the stores were asked %d and %d times, want 2 each (no rest)", tk.calls(), rn.calls())
		}
		if r := got.get(); len(r) != 0 {
			t.Errorf("%d fallbacks reported for the caller's own deadline, want 0", len(r))
		}
	})
}

// TestRunStoreAnswersOutOfOrder: when the answer to an earlier take (count
// 1) arrives after the answer to a later one (count 2), the Run keeps the
// higher count rather than the last to arrive.
func TestRunStoreAnswersOutOfOrder(t *testing.T) {
	s := &crossedRuns{counted: make(chan struct{}), release: make(chan struct{})}
	r := budget.NewRun(budget.WithID("run-1"), budget.WithMaxAttempts(5),
		budget.WithRunStore(s, store.WithTimeout(time.Minute))) // the held answer is not a stall
	done := make(chan bool)
	go func() { done <- r.Take("search") }()
	<-s.counted
	if !r.Take("search") {
		t.Fatal("the second take was refused under the cap")
	}
	close(s.release)
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
	budgettest.MemRunStore
	once             sync.Once
	counted, release chan struct{}
}

func (c *crossedRuns) Take(ctx context.Context, id, tool string, limit int) (int, bool, error) {
	used, ok, err := c.MemRunStore.Take(ctx, id, tool, limit)
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
	return 0, false, errors.Join(errors.New("calls field is \"garbage\""), store.ErrCorrupt)
}

// corruptBucket is a TokenStore whose balance does not parse: it reads
// it as empty, applies the op to that and says so.
type corruptBucket struct{ calls int }

func (c *corruptBucket) Apply(_ context.Context, op budget.TokenOp) (budget.TokenBalance, error) {
	c.calls++
	return budget.TokenBalance{Balance: min(op.Add, op.Capacity)}, errors.Join(errors.New("balance is \"garbage\""), store.ErrCorrupt)
}

// TestStoreCorruptFailsClosed: a RunStore whose count of a run does not
// parse refuses the attempt — it is not counted locally, as an outage
// would be, nor marked degraded — and reports it, every time (the store
// answered: it is not left alone); a TokenStore whose balance does not
// parse lends no retry, and is reported, every time.
func TestStoreCorruptFailsClosed(t *testing.T) {
	rs := &corruptRuns{}
	var got reports
	r := budget.NewRun(budget.WithID("run-1"), budget.WithRunStore(rs, got.option()))
	for i := range 3 {
		if ok, degraded := r.TakeContext(context.Background(), "pay"); ok || degraded {
			t.Fatalf("take %d: TakeContext = %v, %v on a count that does not parse, want false, false", i+1, ok, degraded)
		}
	}
	rep := got.get()
	if rs.calls != 3 || len(rep) != 3 || rep[0].Layer != "run_budget" || rep[0].Op != "take" || !rep[0].Refused || !errors.Is(rep[0].Err, store.ErrCorrupt) {
		t.Fatalf("%d store calls, reports %v", rs.calls, rep)
	}

	bucket := &corruptBucket{}
	got = reports{}
	b := budget.NewRetry(budget.WithTokenStore(bucket, got.option()))
	for i := range 3 {
		if ok, degraded := b.TryRetryContext(context.Background()); ok || degraded {
			t.Fatalf("retry %d: TryRetryContext = %v, %v on a balance that does not parse, want false, false", i+1, ok, degraded)
		}
	}
	rep = got.get()
	if bucket.calls != 3 || len(rep) != 3 || rep[0].Layer != "retry_budget" || rep[0].Op != "retry" || !rep[0].Refused || !errors.Is(rep[0].Err, store.ErrCorrupt) {
		t.Fatalf("%d store calls, reports %v", bucket.calls, rep)
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
		tk := &tokens{}
		b := budget.NewRetry(budget.WithReserve(5), budget.WithTokenStore(tk))
		tk.failWith(partial)
		b.TryRetry()
		b.TryRetry()
		if n := tk.calls(); n != 2 {
			t.Errorf("the token store was asked %d times, want 2: a partial outage does not rest it", n)
		}
		rn := &runs{}
		r := budget.NewRun(budget.WithID("run-1"), budget.WithMaxAttempts(3), budget.WithRunStore(rn))
		rn.failWith(partial)
		r.Take("search")
		r.Take("search")
		if n := rn.calls(); n != 2 {
			t.Errorf("the run store was asked %d times, want 2: a partial outage does not rest it", n)
		}
	})
}
