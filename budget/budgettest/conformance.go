package budgettest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolmw/toolmw/budget"
)

// racers is how many goroutines race for the last tokens or attempts,
// released at once.
const racers = 50

// capacity is the bucket of the TokenStore checks: 10 tokens.
const capacity = 10_000

// TestTokenStore runs the conformance checks of the budget.TokenStore
// contract against stores made by newStore, one fresh store (a bucket
// never seen) per check; newStore may call t.Cleanup to close it.
//
// It checks that a bucket never seen is full; that an op applies Add, then
// Take, then Withdraw; that the balance never goes below zero nor above
// the op's capacity; that a withdrawal is taken only if the balance holds
// all of it; and that of 50 goroutines racing to withdraw a token each,
// exactly as many as the bucket holds succeed. A balance that does not
// parse (store.ErrCorrupt) cannot be provoked through the port: a store
// checks it in its own tests.
func TestTokenStore(t *testing.T, newStore func(t *testing.T) budget.TokenStore) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s budget.TokenStore)
	}{
		{"UnseenIsFull", testUnseenFull},
		{"Order", testOrder},
		{"NeverNegative", testNeverNegative},
		{"NeverAboveCapacity", testNeverAboveCapacity},
		{"WithdrawAllOrNothing", testWithdrawAllOrNothing},
		{"ConcurrentWithdrawals", testConcurrentWithdrawals},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore(t)) })
	}
}

// apply applies op with the checks' capacity and fails t on an error.
func apply(t *testing.T, s budget.TokenStore, op budget.TokenOp) budget.TokenBalance {
	t.Helper()
	if op.Capacity == 0 {
		op.Capacity = capacity
	}
	b, err := s.Apply(context.Background(), op)
	if err != nil {
		t.Fatalf("Apply(%+v): %v", op, err)
	}
	return b
}

// wantBalance fails t unless got is want.
func wantBalance(t *testing.T, what string, got, want budget.TokenBalance) {
	t.Helper()
	if got != want {
		t.Errorf("%s: %+v, want %+v", what, got, want)
	}
}

// drain empties the bucket.
func drain(t *testing.T, s budget.TokenStore) {
	t.Helper()
	wantBalance(t, "draining", apply(t, s, budget.TokenOp{Take: capacity}), budget.TokenBalance{})
}

func testUnseenFull(t *testing.T, s budget.TokenStore) {
	wantBalance(t, "an op that changes nothing on an unseen bucket", apply(t, s, budget.TokenOp{}),
		budget.TokenBalance{Balance: capacity})
}

func testOrder(t *testing.T, s budget.TokenStore) {
	drain(t, s)
	// Add before Take: an empty bucket given 1 and charged 1 is empty
	// (Take first would leave 1).
	wantBalance(t, "Add 1000 then Take 1000 on an empty bucket", apply(t, s, budget.TokenOp{Add: 1000, Take: 1000}),
		budget.TokenBalance{})
	// Add is held to the capacity before Take: a full bucket given 1 and
	// charged 1 holds capacity - 1.
	apply(t, s, budget.TokenOp{Add: capacity})
	wantBalance(t, "Add 1000 then Take 1000 on a full bucket", apply(t, s, budget.TokenOp{Add: 1000, Take: 1000}),
		budget.TokenBalance{Balance: capacity - 1000})
	// Take before Withdraw: 2 charged 1 cannot lend 1.5 (Withdraw first
	// would).
	drain(t, s)
	apply(t, s, budget.TokenOp{Add: 2000})
	wantBalance(t, "Take 1000 then Withdraw 1500 from 2000", apply(t, s, budget.TokenOp{Take: 1000, Withdraw: 1500}),
		budget.TokenBalance{Balance: 1000})
	// All three in one op.
	wantBalance(t, "Add 1500, Take 500, Withdraw 1000 from 1000", apply(t, s, budget.TokenOp{Add: 1500, Take: 500, Withdraw: 1000}),
		budget.TokenBalance{Balance: 1000, Withdrawn: true})
}

func testNeverNegative(t *testing.T, s budget.TokenStore) {
	apply(t, s, budget.TokenOp{Take: 7000})
	wantBalance(t, "Take past the balance", apply(t, s, budget.TokenOp{Take: 5000}), budget.TokenBalance{})
	wantBalance(t, "Take from an empty bucket", apply(t, s, budget.TokenOp{Take: 1}), budget.TokenBalance{})
	wantBalance(t, "Add 500 after", apply(t, s, budget.TokenOp{Add: 500}), budget.TokenBalance{Balance: 500})
}

func testNeverAboveCapacity(t *testing.T, s budget.TokenStore) {
	wantBalance(t, "Add to a full bucket", apply(t, s, budget.TokenOp{Add: 5000}), budget.TokenBalance{Balance: capacity})
	apply(t, s, budget.TokenOp{Take: 4000})
	wantBalance(t, "Add past the capacity", apply(t, s, budget.TokenOp{Add: capacity}), budget.TokenBalance{Balance: capacity})
	// A smaller capacity (a replica configured with a smaller reserve)
	// holds the balance to it.
	wantBalance(t, "a capacity below the balance", apply(t, s, budget.TokenOp{Capacity: 3000}),
		budget.TokenBalance{Balance: 3000})
	wantBalance(t, "the larger capacity again", apply(t, s, budget.TokenOp{}), budget.TokenBalance{Balance: 3000})
}

func testWithdrawAllOrNothing(t *testing.T, s budget.TokenStore) {
	drain(t, s)
	apply(t, s, budget.TokenOp{Add: 500})
	wantBalance(t, "Withdraw 1000 from 500", apply(t, s, budget.TokenOp{Withdraw: 1000}), budget.TokenBalance{Balance: 500})
	wantBalance(t, "Withdraw 0 from 500", apply(t, s, budget.TokenOp{}), budget.TokenBalance{Balance: 500})
	wantBalance(t, "Withdraw 500 from 500", apply(t, s, budget.TokenOp{Withdraw: 500}),
		budget.TokenBalance{Withdrawn: true})
	wantBalance(t, "Withdraw 1 from 0", apply(t, s, budget.TokenOp{Withdraw: 1}), budget.TokenBalance{})
}

func testConcurrentWithdrawals(t *testing.T, s budget.TokenStore) {
	apply(t, s, budget.TokenOp{Take: capacity - 7000}) // 7 tokens
	var wg sync.WaitGroup
	var mu sync.Mutex
	withdrawn := 0
	start := make(chan struct{})
	for range racers {
		wg.Go(func() {
			<-start
			b, err := s.Apply(context.Background(), budget.TokenOp{Capacity: capacity, Withdraw: 1000})
			if err != nil {
				t.Errorf("Apply: %v", err)
				return
			}
			if b.Balance < 0 || b.Balance > 6000 {
				t.Errorf("balance %d after a racing withdrawal, want within [0, 6000]", b.Balance)
			}
			if b.Withdrawn {
				mu.Lock()
				withdrawn++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if withdrawn != 7 {
		t.Errorf("%d of %d racing withdrawals of a token from 7 tokens succeeded, want 7", withdrawn, racers)
	}
	wantBalance(t, "after the race", apply(t, s, budget.TokenOp{}), budget.TokenBalance{})
}

// TestRunStore runs the conformance checks of the budget.RunStore contract
// against stores made by newStore, one fresh store per check (its runs
// never seen); newStore may call t.Cleanup to close it.
//
// It checks that Take admits while fewer than limit were taken and returns
// the count after it; that a limit of 0 admits nothing; that a raised limit
// admits again; that tools and runs count apart; that of 50 goroutines
// racing for a tool's attempts exactly limit succeed, with the counts 1 to
// limit; and that hostile tool names (long, binary, with separators, hash
// tags or look-alike prefixes) are accepted and counted apart. A count that
// does not parse (store.ErrCorrupt) cannot be provoked through the port: a
// store checks it in its own tests.
func TestRunStore(t *testing.T, newStore func(t *testing.T) budget.RunStore) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s budget.RunStore)
	}{
		{"AdmitsUnderLimit", testAdmits},
		{"ZeroLimit", testZeroLimit},
		{"RaisedLimit", testRaisedLimit},
		{"ToolsAndRunsApart", testApart},
		{"ConcurrentTakes", testConcurrentTakes},
		{"HostileTools", testHostileTools},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore(t)) })
	}
}

// take takes one attempt and fails t on an error or an answer other than
// (used, ok).
func take(t *testing.T, s budget.RunStore, id, tool string, limit, used int, ok bool) {
	t.Helper()
	u, k, err := s.Take(context.Background(), id, tool, limit)
	if err != nil {
		t.Fatalf("Take(%q, %.40q, %d): %v", id, tool, limit, err)
	}
	if u != used || k != ok {
		t.Errorf("Take(%q, %.40q, %d) = %d, %v; want %d, %v", id, tool, limit, u, k, used, ok)
	}
}

func testAdmits(t *testing.T, s budget.RunStore) {
	for i := 1; i <= 3; i++ {
		take(t, s, "run-1", "search", 3, i, true)
	}
	take(t, s, "run-1", "search", 3, 3, false)
	take(t, s, "run-1", "search", 3, 3, false)
}

func testZeroLimit(t *testing.T, s budget.RunStore) {
	take(t, s, "run-1", "search", 0, 0, false)
	take(t, s, "run-1", "search", 1, 1, true)
}

func testRaisedLimit(t *testing.T, s budget.RunStore) {
	take(t, s, "run-1", "search", 1, 1, true)
	take(t, s, "run-1", "search", 1, 1, false)
	take(t, s, "run-1", "search", 2, 2, true)
	take(t, s, "run-1", "search", 1, 2, false)
}

func testApart(t *testing.T, s budget.RunStore) {
	take(t, s, "run-1", "search", 1, 1, true)
	take(t, s, "run-1", "fetch", 1, 1, true)
	take(t, s, "run-2", "search", 1, 1, true)
	take(t, s, "run-1", "search", 1, 1, false)
	take(t, s, "run-2", "fetch", 1, 1, true)
	// A tool named as the run and a tool of another run, side by side.
	take(t, s, "run-1", "run-2", 1, 1, true)
	take(t, s, "run-1:search", "", 1, 1, true)
	take(t, s, "run-1", ":search", 1, 1, true)
}

func testConcurrentTakes(t *testing.T, s budget.RunStore) {
	const limit = 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := make(map[int]bool)
	start := make(chan struct{})
	for range racers {
		wg.Go(func() {
			<-start
			used, ok, err := s.Take(context.Background(), "run-race", "search", limit)
			if err != nil {
				t.Errorf("Take: %v", err)
				return
			}
			if used < 1 || used > limit {
				t.Errorf("a racing Take returned %d used, want within [1, %d]", used, limit)
			}
			if ok {
				mu.Lock()
				if counts[used] {
					t.Errorf("two takes were given count %d", used)
				}
				counts[used] = true
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if len(counts) != limit {
		t.Errorf("%d of %d racing takes succeeded, want the limit, %d", len(counts), racers, limit)
	}
	take(t, s, "run-race", "search", limit, limit, false)
}

func testHostileTools(t *testing.T, s budget.RunStore) {
	long := strings.Repeat("x", 1<<16)
	tools := []string{
		"", "search", "search\x00", "\x00search", "search ", "SEARCH",
		"{run-1}", "{search}", "search:run-1", "run-1:search", "*", "\\", "'; DROP TABLE runs; --",
		"\xff\xfe\x00\x01", "ï¿½", "\u202e", long, long + "y", long[:len(long)-1] + "y",
	}
	for i := range 64 { // names that share a long prefix and differ at the end
		tools = append(tools, fmt.Sprintf("%s%02d", strings.Repeat("p", 300), i))
	}
	for _, tool := range tools {
		take(t, s, "run-hostile", tool, 1, 1, true)
	}
	for _, tool := range tools {
		take(t, s, "run-hostile", tool, 1, 1, false)
	}
}
