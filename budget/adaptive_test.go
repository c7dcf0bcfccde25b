package budget_test

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolmw/toolmw/budget"
)

// step is one operation on a budget, in a ledger test.
type step struct {
	op      string // "call", "retry", "observe"
	attempt budget.Attempt
	ok      bool // for "retry": whether TryRetry must allow it
}

var (
	call          = step{op: "call"}
	retryOK       = step{op: "retry", ok: true}
	retryDenied   = step{op: "retry", ok: false}
	retrySucceeds = step{op: "observe", attempt: budget.Attempt{Retry: true, Outcome: budget.Succeeded}}
	retryFails    = step{op: "observe", attempt: budget.Attempt{Retry: true, Outcome: budget.Failed}}
	retryOverload = step{op: "observe", attempt: budget.Attempt{Retry: true, Outcome: budget.Overloaded}}
	firstOverload = step{op: "observe", attempt: budget.Attempt{Outcome: budget.Overloaded}}
	firstFails    = step{op: "observe", attempt: budget.Attempt{Outcome: budget.Failed}}
	firstSucceeds = step{op: "observe", attempt: budget.Attempt{Outcome: budget.Succeeded}}
)

func repeat(n int, steps ...step) []step {
	var out []step
	for range n {
		out = append(out, steps...)
	}
	return out
}

func run(t *testing.T, b *budget.Retry, steps []step) {
	t.Helper()
	for i, s := range steps {
		switch s.op {
		case "call":
			b.Deposit()
		case "retry":
			if got := b.TryRetry(); got != s.ok {
				t.Fatalf("step %d: TryRetry = %v, want %v (balance %v)", i, got, s.ok, b.Tokens())
			}
		case "observe":
			b.Observe(s.attempt)
		}
	}
}

// The adaptive ledger, step by step (see the package documentation).
func TestAdaptiveLedger(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reserve int
		steps   []step
		want    float64
	}{
		{"starts full", 2, nil, 2},
		{"a retry costs a token", 2, []step{retryOK}, 1},
		{"a retry that succeeds is refunded", 2, []step{retryOK, retrySucceeds}, 2},
		{"a retry that fails keeps its price", 2, []step{retryOK, retryFails}, 1},
		{"an overloaded retry pays twice", 3, []step{retryOK, retryOverload}, 1},
		{"an overloaded first attempt takes back its deposit", 2,
			append(repeat(2, retryOK), call, firstOverload, call), 0.1},
		{"a first attempt that fails or succeeds changes nothing", 2,
			append(repeat(2, retryOK), call, firstFails, call, firstSucceeds), 0.2},
		{"never above the reserve", 2, append(repeat(100, call), retrySucceeds, retrySucceeds), 2},
		{"never below nothing", 2, append(repeat(2, retryOK), retryOverload, firstOverload, retryDenied), 0},
		{"refunds pay for retries the reserve could not", 1,
			repeat(50, retryOK, retrySucceeds), 1},
		{"a dead dependency gets the ratio: 10 calls, one retry", 1,
			append(append([]step{retryOK, retryFails, retryDenied}, repeat(10, call)...), retryOK, retryFails, retryDenied), 0},
		{"overload: calls earn nothing, so retries stop", 2,
			append(append([]step{retryOK, retryOverload}, repeat(100, call, firstOverload)...), retryDenied), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := budget.NewAdaptive(budget.WithReserve(tc.reserve))
			run(t, b, tc.steps)
			if got := b.Tokens(); math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("balance %v, want %v", got, tc.want)
			}
		})
	}
}

// A fixed-ratio budget, the zero Retry included, learns nothing.
func TestFixedIgnoresObserve(t *testing.T) {
	steps := []step{retryOK, retrySucceeds, retryOK, retryOverload, firstOverload, call}
	for name, b := range map[string]*budget.Retry{"NewRetry": budget.NewRetry(), "zero": new(budget.Retry)} {
		run(t, b, steps)
		if got := b.Tokens(); math.Abs(got-8.1) > 1e-9 {
			t.Errorf("%s: balance %v, want 8.1 (10 − 2 retries + 0.1)", name, got)
		}
	}
}

func TestOutcomeString(t *testing.T) {
	for o, want := range map[budget.AttemptOutcome]string{
		budget.Failed: "failed", budget.Succeeded: "succeeded", budget.Overloaded: "overloaded", 9: "AttemptOutcome(9)",
	} {
		if got := o.String(); got != want {
			t.Errorf("%d: %q, want %q", o, got, want)
		}
	}
}

// failure says how an attempt fails: its outcome, and whether it fails.
type failure func(rng *rand.Rand) (fails bool, o budget.AttemptOutcome)

func independent(p float64, o budget.AttemptOutcome) failure {
	return func(rng *rand.Rand) (bool, budget.AttemptOutcome) {
		if rng.Float64() < p {
			return true, o
		}
		return false, budget.Succeeded
	}
}

// simulateAdaptive makes calls the way the retry layer does (a deposit per
// call, a token per retry, Observe after each attempt but a first success,
// at most maxAttempts attempts), and returns the attempts of each call and
// how many succeeded.
func simulateAdaptive(b *budget.Retry, rng *rand.Rand, calls, maxAttempts int, f failure) (attempts []int, ok int) {
	attempts = make([]int, calls)
	for i := range attempts {
		b.Deposit()
		for n := 1; ; n++ {
			attempts[i] = n
			fails, o := f(rng)
			if fails || n > 1 {
				b.Observe(budget.Attempt{Retry: n > 1, Outcome: o})
			}
			if !fails {
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

// The outage bound holds whatever the failures look like: attempts ≤ 1.1 ×
// calls + reserve, and ≤ 110 in any 100 calls after the reserve is spent.
func TestAdaptiveDeadDependency(t *testing.T) {
	const calls, warmup, window = 10000, 100, 100
	for _, o := range []budget.AttemptOutcome{budget.Failed, budget.Overloaded} {
		attempts, ok := simulateAdaptive(budget.NewAdaptive(), rand.New(rand.NewPCG(1, 2)), calls, 3, independent(1, o))
		if ok != 0 {
			t.Fatalf("%v: %d calls succeeded against a dead dependency", o, ok)
		}
		if total, limit := sum(attempts), 1.1*calls+budget.DefaultReserve; float64(total) > limit {
			t.Errorf("%v: %d attempts for %d calls, want ≤ %v", o, total, calls, limit)
		}
		for i := warmup; i+window <= calls; i++ {
			if got := sum(attempts[i : i+window]); got > 110 {
				t.Errorf("%v: calls %d..%d made %d attempts, want ≤ 110", o, i, i+window, got)
				break
			}
		}
		t.Logf("dead dependency, %v: %.4f attempts per call", o, float64(sum(attempts))/calls)
	}
}

// Independent faults are masked until failed retries would pass the ratio;
// beyond, the extra load stays near ratio / p, and overloaded attempts
// brake harder.
func TestAdaptiveTransientFaults(t *testing.T) {
	const calls = 100000
	for _, tc := range []struct {
		fault                  float64
		outcome                budget.AttemptOutcome
		minSuccess, maxPerCall float64
	}{
		{0.05, budget.Failed, 0.9995, 1.06},
		{0.20, budget.Failed, 0.99, 1.25},
		{0.50, budget.Failed, 0.55, 1.25},     // binds: failed retries ≈ 10% of calls
		{0.90, budget.Failed, 0.10, 1.12},     // nearly dead: close to the fixed ratio
		{0.20, budget.Overloaded, 0.93, 1.21}, // timeouts, yet retries mostly succeed: a light brake
		{0.50, budget.Overloaded, 0.50, 1.09}, // timeouts: calls earn half, retries pay up to twice
	} {
		attempts, ok := simulateAdaptive(budget.NewAdaptive(), rand.New(rand.NewPCG(3, 4)), calls, 3, independent(tc.fault, tc.outcome))
		success, per := float64(ok)/calls, float64(sum(attempts))/calls
		t.Logf("%v %.0f%%: success %.4f, %.4f attempts per call", tc.outcome, tc.fault*100, success, per)
		if success < tc.minSuccess || per > tc.maxPerCall {
			t.Errorf("%v %.0f%%: success %.4f (want ≥ %v), %.4f attempts per call (want ≤ %v)",
				tc.outcome, tc.fault*100, success, tc.minSuccess, per, tc.maxPerCall)
		}
	}
}

// Under concurrent use the ledger balances: what was spent on retries is
// what the reserve, the deposits and the refunds paid for, less what
// overload charged, and the balance stays within [0, reserve].
func TestAdaptiveConcurrent(t *testing.T) {
	b := budget.NewAdaptive()
	var retries, refunds atomic.Int64
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for range 500 {
				b.Deposit()
				if rng.IntN(4) == 0 {
					b.Observe(budget.Attempt{Outcome: budget.Overloaded})
				}
				if b.TryRetry() {
					retries.Add(1)
					switch rng.IntN(3) {
					case 0:
						b.Observe(budget.Attempt{Retry: true, Outcome: budget.Succeeded})
						refunds.Add(1)
					case 1:
						b.Observe(budget.Attempt{Retry: true, Outcome: budget.Overloaded})
					}
				}
				if got := b.Tokens(); got < 0 || got > budget.DefaultReserve {
					t.Errorf("balance %v outside [0, %d]", got, budget.DefaultReserve)
					return
				}
			}
		}()
	}
	wg.Wait()
	// 8000 deposits of 0.1 and the reserve of 10 pay for at most 810
	// retries that were not refunded.
	if paid := float64(retries.Load()-refunds.Load()) + b.Tokens(); paid > 810.0001 {
		t.Fatalf("%d retries − %d refunds + balance %v = %v, want ≤ 810", retries.Load(), refunds.Load(), b.Tokens(), paid)
	}
}
