package budget_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/budget/budgettest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunTake(t *testing.T) {
	r := budget.NewRun(budget.WithMaxAttempts(3), budget.WithToolMaxAttempts("search", 5))
	for _, tc := range []struct {
		tool  string
		limit int
	}{{"book", 3}, {"search", 5}, {"", 3}} {
		if got := r.Limit(tc.tool); got != tc.limit {
			t.Errorf("Limit(%q) = %d, want %d", tc.tool, got, tc.limit)
		}
		for i := range tc.limit {
			if !r.Take(tc.tool) {
				t.Fatalf("Take(%q) #%d = false, want true", tc.tool, i+1)
			}
		}
		if r.Take(tc.tool) {
			t.Errorf("Take(%q) past the cap = true", tc.tool)
		}
		if got := r.Used(tc.tool); got != tc.limit {
			t.Errorf("Used(%q) = %d, want %d", tc.tool, got, tc.limit)
		}
		if got := r.Remaining(tc.tool); got != 0 {
			t.Errorf("Remaining(%q) = %d, want 0", tc.tool, got)
		}
	}
	if got := r.Remaining("other"); got != 3 {
		t.Errorf("Remaining(other) = %d, want 3: tools must not share a cap", got)
	}
}

func TestRunDefault(t *testing.T) {
	r := budget.NewRun()
	n := 0
	for r.Take("t") {
		n++
	}
	if n != budget.DefaultRunAttempts {
		t.Fatalf("took %d attempts, want %d", n, budget.DefaultRunAttempts)
	}
}

func TestRunConcurrentCapIsExact(t *testing.T) {
	r := budget.NewRun()
	var took atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if r.Take("flaky") {
					took.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if got := took.Load(); got != budget.DefaultRunAttempts {
		t.Fatalf("took %d attempts across goroutines, want exactly %d", got, budget.DefaultRunAttempts)
	}
	if got := r.Used("flaky"); got != budget.DefaultRunAttempts {
		t.Fatalf("Used = %d, want %d", got, budget.DefaultRunAttempts)
	}
}

func TestRunContext(t *testing.T) {
	if _, ok := budget.RunFrom(context.Background()); ok {
		t.Fatal("RunFrom(Background) reported a run")
	}
	ctx := budget.WithRun(context.Background(), budget.WithMaxAttempts(2))
	r, ok := budget.RunFrom(ctx)
	if !ok || r.Limit("x") != 2 {
		t.Fatalf("RunFrom = %v, %v; want the run with cap 2", r, ok)
	}
	child, cancel := context.WithCancel(ctx)
	defer cancel()
	if r2, _ := budget.RunFrom(child); r2 != r {
		t.Fatal("a derived context does not share the run")
	}
	if got := budget.ContextWithRun(ctx, nil); got != ctx {
		t.Fatal("ContextWithRun(ctx, nil) did not return ctx")
	}
}

func TestValidateRun(t *testing.T) {
	tests := []struct {
		name string
		opts []budget.RunOption
		ok   bool
	}{
		{"none", nil, true},
		{"good", []budget.RunOption{budget.WithMaxAttempts(1), budget.WithToolMaxAttempts("a", 4)}, true},
		{"zero means the default", []budget.RunOption{budget.WithMaxAttempts(0), budget.WithToolMaxAttempts("a", 0)}, true},
		{"negative", []budget.RunOption{budget.WithMaxAttempts(-1)}, false},
		{"negative tool", []budget.RunOption{budget.WithToolMaxAttempts("a", -1)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := budget.ValidateRun(tc.opts...)
			if (err == nil) != tc.ok {
				t.Fatalf("ValidateRun = %v, want ok=%v", err, tc.ok)
			}
			// Whatever the verdict, the run is usable with the defaults kept.
			r := budget.NewRun(tc.opts...)
			if r.Limit("zz") < 1 {
				t.Fatalf("Limit = %d after invalid options", r.Limit("zz"))
			}
		})
	}
	if got := budget.NewRun(budget.WithMaxAttempts(-1)).Limit("x"); got != budget.DefaultRunAttempts {
		t.Fatalf("an invalid cap changed the limit to %d", got)
	}
	if got := budget.NewRun(budget.WithMaxAttempts(0)).Limit("x"); got != budget.DefaultRunAttempts {
		t.Fatalf("WithMaxAttempts(0) gave the limit %d, want the default", got)
	}
	r := budget.NewRun(budget.WithMaxAttempts(5), budget.WithToolMaxAttempts("a", 2), budget.WithToolMaxAttempts("a", 0))
	if got := r.Limit("a"); got != 5 {
		t.Fatalf("WithToolMaxAttempts(a, 0) gave the limit %d, want the run's cap 5", got)
	}
}

// The zero Run and the zero Retry work with the defaults rather than
// denying everything.
func TestZeroValues(t *testing.T) {
	var r budget.Run
	if got := r.Limit("t"); got != budget.DefaultRunAttempts {
		t.Fatalf("zero Run: Limit = %d, want %d", got, budget.DefaultRunAttempts)
	}
	n := 0
	for r.Take("t") {
		n++
	}
	if n != budget.DefaultRunAttempts || r.Used("t") != n || r.Remaining("t") != 0 || r.Remaining("u") != budget.DefaultRunAttempts {
		t.Fatalf("zero Run: took %d, used %d, remaining %d/%d", n, r.Used("t"), r.Remaining("t"), r.Remaining("u"))
	}

	var b budget.Retry
	if got := b.Tokens(); got != budget.DefaultReserve {
		t.Fatalf("zero Retry holds %v tokens, want the full default reserve %d", got, budget.DefaultReserve)
	}
	for i := range budget.DefaultReserve {
		if !b.TryRetry() {
			t.Fatalf("zero Retry refused retry %d of its reserve", i+1)
		}
	}
	if b.TryRetry() {
		t.Fatal("zero Retry allowed a retry past its reserve")
	}
	for range 10 { // ten calls at the default ratio earn one retry
		b.Deposit()
	}
	if !b.TryRetry() || b.TryRetry() {
		t.Fatal("zero Retry did not refill at the default ratio")
	}
}

func TestRetryBucket(t *testing.T) {
	b := budget.NewRetry(budget.WithReserve(2), budget.WithRatio(0.25))
	if got := b.Tokens(); got != 2 {
		t.Fatalf("starts with %v tokens, want 2 (full)", got)
	}
	for range 2 {
		if !b.TryRetry() {
			t.Fatal("could not spend the reserve")
		}
	}
	if b.TryRetry() {
		t.Fatal("TryRetry on an empty bucket = true")
	}
	for range 3 {
		b.Deposit()
	}
	if b.TryRetry() {
		t.Fatal("0.75 tokens allowed a retry")
	}
	b.Deposit()
	if !b.TryRetry() {
		t.Fatal("1 token did not allow a retry")
	}
	for range 100 {
		b.Deposit()
	}
	if got := b.Tokens(); got != 2 {
		t.Fatalf("bucket holds %v tokens, want at most the reserve 2", got)
	}
}

func TestRetryZeroRatioNeverRefills(t *testing.T) {
	b := budget.NewRetry(budget.WithRatio(0), budget.WithReserve(1))
	b.TryRetry()
	for range 1000 {
		b.Deposit()
	}
	if b.TryRetry() {
		t.Fatal("a zero ratio refilled the bucket")
	}
}

func TestRetryConcurrent(t *testing.T) {
	b := budget.NewRetry()
	var won atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				b.Deposit()
				if b.TryRetry() {
					won.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	// 1600 deposits of 0.1 plus the reserve of 10 pay for at most 170
	// retries (deposits into a full bucket are dropped, so maybe fewer).
	left := b.Tokens()
	if got := float64(won.Load()) + left; got > 170.0001 || left < 0 {
		t.Fatalf("retries %d + balance %v = %v, want ≤ 170 and a balance ≥ 0", won.Load(), left, got)
	}
}

func TestValidateRetry(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  budget.RetryOption
		ok   bool
	}{
		{"ratio 0", budget.WithRatio(0), true},
		{"ratio 1", budget.WithRatio(1), true},
		{"ratio negative", budget.WithRatio(-0.1), false},
		{"ratio above 1", budget.WithRatio(1.5), false},
		{"ratio NaN", budget.WithRatio(math.NaN()), false},
		{"reserve 1", budget.WithReserve(1), true},
		{"reserve 0 means the default", budget.WithReserve(0), true},
		{"reserve negative", budget.WithReserve(-1), false},
		{"reserve too large", budget.WithReserve(math.MaxInt), false},
	} {
		if err := budget.ValidateRetry(tc.opt); (err == nil) != tc.ok {
			t.Errorf("%s: ValidateRetry = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	for _, reserve := range []int{-1, 0} {
		if got := budget.NewRetry(budget.WithReserve(reserve)).Tokens(); got != budget.DefaultReserve {
			t.Fatalf("WithReserve(%d) gave %v tokens, want the default %d", reserve, got, budget.DefaultReserve)
		}
	}
}

func TestRemaining(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, ok := budget.Remaining(context.Background(), now); ok {
		t.Fatal("Remaining without a deadline reported one")
	}
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(time.Hour))
	defer cancel()
	if got, ok := budget.Remaining(ctx, now.Add(59*time.Minute)); !ok || got != time.Minute {
		t.Fatalf("Remaining = %v, %v; want 1m, true", got, ok)
	}
	if got, _ := budget.Remaining(ctx, now.Add(2*time.Hour)); got != 0 {
		t.Fatalf("Remaining past the deadline = %v, want 0", got)
	}
}

func TestWaitFits(t *testing.T) {
	now := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(time.Hour))
	defer cancel()
	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		wait time.Duration
		want bool
	}{
		{"no deadline", context.Background(), 1000 * time.Hour, true},
		{"ends before", ctx, time.Hour - time.Nanosecond, true},
		{"ends at the deadline", ctx, time.Hour, false},
		{"ends past", ctx, 2 * time.Hour, false},
		{"zero wait", ctx, 0, true},
		{"cancelled", cancelled, 0, false},
	} {
		if got := budget.WaitFits(tc.ctx, now, tc.wait); got != tc.want {
			t.Errorf("%s: WaitFits = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// simulate makes calls through a retry budget the way the retry layer does
// (one deposit per call, one token per retry, at most maxAttempts attempts)
// against a dependency failing each attempt with probability fault. It
// returns the attempts of each call and how many calls succeeded.
func simulate(b *budget.Retry, rng *rand.Rand, calls, maxAttempts int, fault float64) (attempts []int, ok int) {
	attempts = make([]int, calls)
	for i := range attempts {
		b.Deposit()
		for n := 1; ; n++ {
			attempts[i] = n
			if rng.Float64() >= fault {
				ok++
				break
			}
			if n == maxAttempts || !b.TryRetry() {
				break
			}
		}
	}
	return attempts, ok
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func TestRetryBudgetDeadDependency(t *testing.T) {
	const calls, warmup, window = 10000, 100, 100
	attempts, ok := simulate(budget.NewRetry(), rand.New(rand.NewPCG(1, 2)), calls, 3, 1)
	if ok != 0 {
		t.Fatalf("%d calls succeeded against a dead dependency", ok)
	}
	total := sum(attempts)
	if limit := 1.1*calls + budget.DefaultReserve; float64(total) > limit {
		t.Fatalf("%d attempts for %d calls, want ≤ %v", total, calls, limit)
	}
	after := attempts[warmup:]
	if per := float64(sum(after)) / float64(len(after)); per > 1.1 {
		t.Fatalf("after warm-up %.4f attempts per call, want ≤ 1.1", per)
	}
	for i := warmup; i+window <= calls; i++ {
		if got := sum(attempts[i : i+window]); got > 110 {
			t.Fatalf("calls %d..%d made %d attempts, want ≤ 110", i, i+window, got)
		}
	}
	t.Logf("dead dependency: %.4f attempts per call overall", float64(total)/calls)
}

func TestRetryBudgetTransientFaults(t *testing.T) {
	const calls = 10000
	for _, tc := range []struct {
		fault       float64
		minSuccess  float64
		maxAttempts float64
	}{
		{0.05, 0.9995, 1.06},
		{0.20, 0.87, 1.11},
	} {
		attempts, ok := simulate(budget.NewRetry(), rand.New(rand.NewPCG(3, 4)), calls, 3, tc.fault)
		success := float64(ok) / calls
		per := float64(sum(attempts)) / calls
		t.Logf("fault %.0f%%: success %.4f, %.4f attempts per call", tc.fault*100, success, per)
		if success < tc.minSuccess {
			t.Errorf("fault %v: success %.4f, want ≥ %v", tc.fault, success, tc.minSuccess)
		}
		if per > tc.maxAttempts {
			t.Errorf("fault %v: %.4f attempts per call, want ≤ %v", tc.fault, per, tc.maxAttempts)
		}
	}
}

func BenchmarkRetryDepositFull(b *testing.B) {
	rb := budget.NewRetry()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rb.Deposit()
		}
	})
}

func BenchmarkRunTake(b *testing.B) {
	r := budget.NewRun(budget.WithMaxAttempts(1 << 62))
	b.ReportAllocs()
	for b.Loop() {
		r.Take("search")
	}
}

// TestRunID: an id of the plain shape is the run's id as given; any other
// (a "/", a space, a non-ASCII letter, too long, or the hashed form itself)
// is hashed into "tmr_" and 32 hex digits of SHA-256("toolmw hashed run id\x00" +
// id): stable, the same in every process (the test computes it on its
// own), distinct for distinct ids, never reported as invalid, never
// dropped.
func TestRunID(t *testing.T) {
	if id := budget.NewRun(budget.WithID("run_42:a-b.c")).ID(); id != "run_42:a-b.c" {
		t.Errorf("ID() = %q", id)
	}
	if id := new(budget.Run).ID(); id != "" {
		t.Errorf("zero Run: ID() = %q, want empty", id)
	}
	if id := budget.NewRun(budget.WithID("")).ID(); id != "" {
		t.Errorf("WithID(\"\"): ID() = %q, want empty", id)
	}
	hashed := func(id string) string {
		sum := sha256.Sum256([]byte("toolmw hashed run id\x00" + id))
		return "tmr_" + hex.EncodeToString(sum[:16])
	}
	reserved := hashed("tenant/42/run-7") // an id of the plain shape that reads like a hashed one
	seen := map[string]string{}
	for _, raw := range []string{"tenant/42/run-7", "tenant/42/run-8", "run 1", "sk_live_\n", strings.Repeat("a", budget.MaxRunIDLen+1), "ü", reserved} {
		if err := budget.ValidateRun(budget.WithID(raw)); err != nil {
			t.Errorf("WithID(%.20q): %v", raw, err)
		}
		id := budget.NewRun(budget.WithID(raw)).ID()
		if id != hashed(raw) {
			t.Errorf("WithID(%.20q): ID() = %q, want %q", raw, id, hashed(raw))
		}
		if err := budget.ValidateRun(budget.WithID(id)); err != nil || id == raw {
			t.Errorf("WithID(%.20q): ID() = %q, not a plain id (%v)", raw, id, err)
		}
		if other, dup := seen[id]; dup {
			t.Errorf("%.20q and %.20q share the id %q", raw, other, id)
		}
		seen[id] = raw
	}
	if id := budget.NewRun(budget.WithID("tmr_0123")).ID(); id != "tmr_0123" {
		t.Errorf("an id merely starting like a hashed one: ID() = %q", id)
	}
}

// TestRunIDNotStorableIsShared: three replicas given a run id that a store
// key could not hold as it is ("tenant/42/run-7") still share the run's
// count in the store: asked three times, one attempt of a tool capped at
// one, not one per replica.
func TestRunIDNotStorableIsShared(t *testing.T) {
	store := &budgettest.MemRunStore{}
	taken := 0
	for range 3 {
		r := budget.NewRun(budget.WithID("tenant/42/run-7"), budget.WithToolMaxAttempts("pay", 1), budget.WithRunStore(store))
		if r.Take("pay") {
			taken++
		}
	}
	if n := store.Ops(); taken != 1 || n != 3 {
		t.Fatalf("%d attempts taken across three replicas, the store asked %d times; want 1 and 3", taken, n)
	}
}
