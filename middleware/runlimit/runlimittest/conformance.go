package runlimittest

import (
	"context"
	"testing"

	"github.com/toolmw/toolmw/internal/testrig/kitrig"
	"github.com/toolmw/toolmw/middleware/runlimit"
)

// TestStore runs the conformance checks against stores made by newStore,
// one fresh store per check; newStore may call t.Cleanup to close it.
//
// It checks the contract of runlimit.Store: Take admits up to the limit
// and no more, per run and per tool; an op's effect applies at most once
// (a Take of an op admitted admits it again without counting it; a Take
// of an op released admits nothing; a Release before its Take cancels the
// op, so its late Take admits nothing and the count does not go below
// zero; a Release or a Record sent twice counts once; a Record counts
// without checking the limit); 50 goroutines racing for a limit of 5 are
// admitted 5 times, and racing with one op once; and hostile run ids and
// tool names (long, binary, look-alike) are kept apart. A corrupt count
// (store.ErrCorrupt) cannot be made through the Store's API: each store
// tests it on its own.
func TestStore(t *testing.T, newStore func(t *testing.T) runlimit.Store) {
	t.Helper()
	kitrig.Run(t, newStore,
		check{Name: "Limit", Run: testLimit},
		check{Name: "TakeOnce", Run: testTakeOnce},
		check{Name: "Release", Run: testRelease},
		check{Name: "ReleaseBeforeTake", Run: testReleaseBeforeTake},
		check{Name: "Record", Run: testRecord},
		check{Name: "TakeRace", Run: testTakeRace},
		check{Name: "SameOpRace", Run: testSameOpRace},
		check{Name: "HostileKeys", Run: testHostileKeys},
	)
}

// check is one conformance check.
type check = kitrig.Check[runlimit.Store]

var op = kitrig.Op

func take(t *testing.T, s runlimit.Store, id, tool string, limit int, op string) bool {
	t.Helper()
	ok, err := s.Take(context.Background(), id, tool, limit, op)
	if err != nil {
		t.Fatalf("Take(%.20q, %.20q, %d, %s): %v", id, tool, limit, op, err)
	}
	return ok
}

func release(t *testing.T, s runlimit.Store, id, tool, op string) {
	t.Helper()
	if err := s.Release(context.Background(), id, tool, op); err != nil {
		t.Fatalf("Release(%.20q, %.20q, %s): %v", id, tool, op, err)
	}
}

func record(t *testing.T, s runlimit.Store, id, tool, op string) {
	t.Helper()
	if err := s.Record(context.Background(), id, tool, op); err != nil {
		t.Fatalf("Record(%.20q, %.20q, %s): %v", id, tool, op, err)
	}
}

// admits takes ops from..to-1 of tool in run id under limit and returns
// how many were admitted.
func admits(t *testing.T, s runlimit.Store, id, tool string, limit, from, to int) int {
	t.Helper()
	n := 0
	for i := from; i < to; i++ {
		if take(t, s, id, tool, limit, op(i)) {
			n++
		}
	}
	return n
}

// Take admits up to the limit, per run and per tool.
func testLimit(t *testing.T, s runlimit.Store) {
	if n := admits(t, s, "run-1", "search", 3, 0, 5); n != 3 {
		t.Errorf("run-1 search, limit 3: %d of 5 admitted, want 3", n)
	}
	if n := admits(t, s, "run-1", "book", 1, 10, 12); n != 1 {
		t.Errorf("run-1 book, limit 1: %d of 2 admitted, want 1 (a tool has its own count)", n)
	}
	if n := admits(t, s, "run-2", "search", 3, 20, 25); n != 3 {
		t.Errorf("run-2 search, limit 3: %d of 5 admitted, want 3 (a run has its own count)", n)
	}
	if n := admits(t, s, "run-1", "search", 4, 30, 32); n != 1 {
		t.Errorf("run-1 search at 3, limit raised to 4: %d of 2 admitted, want 1", n)
	}
}

// A Take of an op already admitted admits it again, without counting it.
func testTakeOnce(t *testing.T, s runlimit.Store) {
	for i := range 3 {
		if !take(t, s, "run-1", "book", 2, op(0)) {
			t.Fatalf("Take %d of one op: refused, want admitted again", i+1)
		}
	}
	if n := admits(t, s, "run-1", "book", 2, 1, 3); n != 1 {
		t.Errorf("after one op taken three times, limit 2: %d of 2 other ops admitted, want 1", n)
	}
}

// A Release gives the op's slot back, once; the op's late Take admits
// nothing.
func testRelease(t *testing.T, s runlimit.Store) {
	if !take(t, s, "run-1", "book", 1, op(0)) {
		t.Fatal("the first Take: refused")
	}
	release(t, s, "run-1", "book", op(0))
	release(t, s, "run-1", "book", op(0)) // a second Release gives nothing more back
	if take(t, s, "run-1", "book", 1, op(0)) {
		t.Error("a Take of a released op: admitted, want refused")
	}
	if !take(t, s, "run-1", "book", 1, op(1)) {
		t.Fatal("after the Release: another op refused, want admitted")
	}
	if take(t, s, "run-1", "book", 1, op(2)) {
		t.Error("a second Release of one op gave back another op's slot")
	}
}

// A Release of an op not taken cancels it: its Take, arriving afterwards,
// admits nothing, and the count does not go below zero.
func testReleaseBeforeTake(t *testing.T, s runlimit.Store) {
	release(t, s, "run-1", "book", op(0))
	if take(t, s, "run-1", "book", 1, op(0)) {
		t.Error("a Take of a cancelled op: admitted, want refused")
	}
	if n := admits(t, s, "run-1", "book", 1, 1, 3); n != 1 {
		t.Errorf("after a cancelled op, limit 1: %d of 2 ops admitted, want 1 (the count never goes below zero)", n)
	}
}

// A Record counts its op once, without checking the limit; the op's Take
// admits it without counting it again.
func testRecord(t *testing.T, s runlimit.Store) {
	record(t, s, "run-1", "search", op(0))
	record(t, s, "run-1", "search", op(0))
	if !take(t, s, "run-1", "search", 2, op(0)) {
		t.Error("a Take of a recorded op: refused, want admitted (it ran)")
	}
	if n := admits(t, s, "run-1", "search", 2, 1, 3); n != 1 {
		t.Errorf("after one op recorded twice, limit 2: %d of 2 ops admitted, want 1", n)
	}
	record(t, s, "run-1", "search", op(3)) // past the limit: the call ran
	if n := admits(t, s, "run-1", "search", 3, 4, 6); n != 0 {
		t.Errorf("after a Record past the limit, limit 3: %d ops admitted, want 0", n)
	}
	if !take(t, s, "run-1", "search", 3, op(3)) {
		t.Error("a Take of the op recorded past the limit: refused, want admitted")
	}
}

// 50 goroutines racing for a limit of 5 are admitted 5 times.
func testTakeRace(t *testing.T, s runlimit.Store) {
	n := kitrig.Race(t, func(i int) (bool, error) {
		return s.Take(context.Background(), "run-1", "book", 5, op(i))
	})
	if n != 5 {
		t.Errorf("%d racers admitted for a limit of 5, want 5", n)
	}
	if take(t, s, "run-1", "book", 5, op(kitrig.Racers)) {
		t.Error("after the race: one more admitted")
	}
}

// 50 goroutines racing with one op, half taking and half recording, count
// it once.
func testSameOpRace(t *testing.T, s runlimit.Store) {
	kitrig.Race(t, func(i int) (bool, error) {
		if i%2 == 0 {
			return false, s.Record(context.Background(), "run-1", "book", op(0))
		}
		return s.Take(context.Background(), "run-1", "book", 2, op(0))
	})
	if n := admits(t, s, "run-1", "book", 2, 1, 3); n != 1 {
		t.Errorf("after one op raced 50 times, limit 2: %d of 2 ops admitted, want 1", n)
	}
}

// Hostile run ids and tool names — long, binary, look-alike — are kept
// apart: each pair is its own count.
func testHostileKeys(t *testing.T, s runlimit.Store) {
	names := kitrig.Hostile()
	long := names[len(names)-3]
	i := 0
	for _, id := range names {
		for _, tool := range []string{"t", "t:x", long} {
			if !take(t, s, id, tool, 1, op(i)) {
				t.Fatalf("Take in run %.20q of tool %.20q: refused, want its own count", id, tool)
			}
			i++
		}
	}
	for _, id := range names {
		if take(t, s, id, "t", 1, op(i)) {
			t.Errorf("a second Take in run %.20q: admitted, want the first one counted", id)
		}
		i++
	}
}
