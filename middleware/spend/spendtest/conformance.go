package spendtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolmw/toolmw/internal/testrig/kitrig"
	"github.com/toolmw/toolmw/middleware/spend"
)

// TestStore runs the conformance checks against stores made by newStore,
// one fresh store per check; newStore may call t.Cleanup to close it.
//
// It checks the contract of spend.Store: Reserve holds up to the limit
// and no more, per run, and answers the run's spent and held; Settle
// turns what an op holds into what it cost; an op's effect applies at most
// once (a Reserve of an op holding admits it again without holding more; a
// Reserve of an op settled holds nothing and refuses; a Settle of an op
// that holds nothing charges what it is told and cancels the op, so its
// late Reserve holds nothing; a second Settle does nothing); 50 goroutines
// racing for a limit of 5 reservations hold 5, and racing Reserves and
// Settles of one op leave it settled once; and hostile run ids (long,
// binary, look-alike) are kept apart. Amounts stay below 2^40 billionths.
// A corrupt spend (store.ErrCorrupt) cannot be made through the Store's
// API: each store tests it on its own.
func TestStore(t *testing.T, newStore func(t *testing.T) spend.Store) {
	t.Helper()
	kitrig.Run(t, newStore,
		check{Name: "Limit", Run: testLimit},
		check{Name: "ReserveOnce", Run: testReserveOnce},
		check{Name: "Settle", Run: testSettle},
		check{Name: "SettleBeforeReserve", Run: testSettleBeforeReserve},
		check{Name: "ReserveRace", Run: testReserveRace},
		check{Name: "SameOpRace", Run: testSameOpRace},
		check{Name: "HostileIDs", Run: testHostileIDs},
	)
}

// check is one conformance check.
type check = kitrig.Check[spend.Store]

var op = kitrig.Op

// unit is one billion billionths: one of the application's units.
const unit = 1e9

// answer is what a Reserve answered.
type answer struct {
	spent, held int64
	ok          bool
}

func reserve(t *testing.T, s spend.Store, id string, limit, amount int64, op string) answer {
	t.Helper()
	spent, held, ok, err := s.Reserve(context.Background(), id, limit, amount, op)
	if err != nil {
		t.Fatalf("Reserve(%.20q, %d, %d, %s): %v", id, limit, amount, op, err)
	}
	return answer{spent, held, ok}
}

func settle(t *testing.T, s spend.Store, id, op string, charge int64) {
	t.Helper()
	if err := s.Settle(context.Background(), id, op, charge); err != nil {
		t.Fatalf("Settle(%.20q, %s, %d): %v", id, op, charge, err)
	}
}

func want(t *testing.T, what string, got, want answer) {
	t.Helper()
	if got != want {
		t.Errorf("%s: spent %d, held %d, admitted %v; want %d, %d, %v", what,
			got.spent, got.held, got.ok, want.spent, want.held, want.ok)
	}
}

// Reserve holds up to the limit, per run, with the run's spent and held.
func testLimit(t *testing.T, s spend.Store) {
	const limit = 10 * unit
	want(t, "the first", reserve(t, s, "run-1", limit, 4*unit, op(0)), answer{0, 4 * unit, true})
	want(t, "the second", reserve(t, s, "run-1", limit, 6*unit, op(1)), answer{0, 10 * unit, true})
	want(t, "past the limit", reserve(t, s, "run-1", limit, 1, op(2)), answer{0, 10 * unit, false})
	want(t, "another run", reserve(t, s, "run-2", limit, limit, op(3)), answer{0, limit, true})
	want(t, "nothing", reserve(t, s, "run-1", limit, 0, op(4)), answer{0, 10 * unit, true})
}

// A Reserve of an op holding admits it again without holding more.
func testReserveOnce(t *testing.T, s spend.Store) {
	const limit = 10 * unit
	for i := range 3 {
		want(t, fmt.Sprintf("Reserve %d of one op", i+1), reserve(t, s, "run-1", limit, 6*unit, op(0)), answer{0, 6 * unit, true})
	}
	want(t, "another op", reserve(t, s, "run-1", limit, 5*unit, op(1)), answer{0, 6 * unit, false})
}

// Settle turns what an op holds into what it cost, once; a Reserve of an
// op settled holds nothing and refuses.
func testSettle(t *testing.T, s spend.Store) {
	const limit = 10 * unit
	reserve(t, s, "run-1", limit, 6*unit, op(0))
	reserve(t, s, "run-1", limit, 2*unit, op(1))
	settle(t, s, "run-1", op(0), 1*unit)
	settle(t, s, "run-1", op(0), 1*unit) // again: nothing
	want(t, "after the Settle", reserve(t, s, "run-1", limit, 7*unit, op(2)), answer{1 * unit, 9 * unit, true})
	want(t, "a Reserve of the op settled", reserve(t, s, "run-1", limit, 0, op(0)), answer{1 * unit, 9 * unit, false})
	settle(t, s, "run-1", op(1), 0)
	settle(t, s, "run-1", op(2), 7*unit)
	want(t, "all settled", reserve(t, s, "run-1", limit, 2*unit, op(3)), answer{8 * unit, 2 * unit, true})
}

// A Settle of an op that holds nothing charges what it is told and
// cancels the op: its Reserve, arriving afterwards, holds nothing.
func testSettleBeforeReserve(t *testing.T, s spend.Store) {
	const limit = 10 * unit
	settle(t, s, "run-1", op(0), 3*unit)
	want(t, "the late Reserve", reserve(t, s, "run-1", limit, 5*unit, op(0)), answer{3 * unit, 0, false})
	settle(t, s, "run-1", op(1), 0) // a call that did not run: cancelled
	want(t, "the late Reserve of a cancelled op", reserve(t, s, "run-1", limit, 5*unit, op(1)), answer{3 * unit, 0, false})
	want(t, "another op", reserve(t, s, "run-1", limit, 7*unit, op(2)), answer{3 * unit, 7 * unit, true})
}

// 50 goroutines racing for a limit of 5 reservations hold 5.
func testReserveRace(t *testing.T, s spend.Store) {
	n := kitrig.Race(t, func(i int) (bool, error) {
		_, _, ok, err := s.Reserve(context.Background(), "run-1", 5*unit, unit, op(i))
		return ok, err
	})
	if n != 5 {
		t.Errorf("%d racers admitted for 5 reservations, want 5", n)
	}
	want(t, "after the race", reserve(t, s, "run-1", 5*unit, 1, op(kitrig.Racers)), answer{0, 5 * unit, false})
}

// Reserves and Settles of one op racing leave it settled once: charged
// once, holding nothing.
func testSameOpRace(t *testing.T, s spend.Store) {
	kitrig.Race(t, func(i int) (bool, error) {
		if i%2 == 0 {
			return false, s.Settle(context.Background(), "run-1", op(0), 2*unit)
		}
		_, _, ok, err := s.Reserve(context.Background(), "run-1", 10*unit, 5*unit, op(0))
		return ok, err
	})
	want(t, "after the race", reserve(t, s, "run-1", 10*unit, 0, op(1)), answer{2 * unit, 0, true})
}

// Hostile run ids — long, binary, look-alike — are kept apart: each is
// its own spend.
func testHostileIDs(t *testing.T, s spend.Store) {
	ids := kitrig.Hostile()
	for i, id := range ids {
		want(t, fmt.Sprintf("run %.20q", id), reserve(t, s, id, unit, unit, op(i)), answer{0, unit, true})
	}
	for i, id := range ids {
		want(t, fmt.Sprintf("again in run %.20q", id), reserve(t, s, id, unit, 1, op(len(ids)+i)), answer{0, unit, false})
	}
}
