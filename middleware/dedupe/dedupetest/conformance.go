package dedupetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolmw/toolmw/internal/testrig/kitrig"
	"github.com/toolmw/toolmw/middleware/dedupe"
)

// TestStore runs the conformance checks against stores made by newStore,
// one fresh store per check; newStore may call t.Cleanup to close it.
//
// It checks the contract of dedupe.Store: a claim makes a started record
// held by its op, and a claim by another op gets that record unchanged;
// the same claim sent twice gets it again; Finish makes it done with its
// outcome, byte for byte (binary, empty, and MaxOutcome bytes; one byte
// more is ErrTooLarge), the same Finish sent twice succeeds, and another
// op's is ErrLost; Release deletes a started record of its op only; a
// lease renewed holds, one ended is taken over only with Takeover and the
// same arguments, after which the old holder's Renew and Finish are
// ErrLost; a record past its keep is gone (checked with the wall clock,
// 2.5 s); 50 goroutines claiming one record at once, or taking one over,
// make one holder; and hostile run ids and keys (binary, look-alike, long:
// up to MinKeyBytes they are taken, past it they may be refused with
// ErrTooLarge) name distinct records. A corrupt record (store.ErrCorrupt)
// cannot be made through the Store's API: each store tests it on its own.
func TestStore(t *testing.T, newStore func(t *testing.T) dedupe.Store) {
	t.Helper()
	kitrig.Run(t, newStore,
		check{Name: "Claim", Run: testClaim},
		check{Name: "ClaimTwice", Run: testClaimTwice},
		check{Name: "Finish", Run: testFinish},
		check{Name: "Outcomes", Run: testOutcomes},
		check{Name: "Release", Run: testRelease},
		check{Name: "Lease", Run: testLease},
		check{Name: "Takeover", Run: testTakeover},
		check{Name: "Keep", Run: testKeep},
		check{Name: "ClaimRace", Run: testClaimRace},
		check{Name: "TakeoverRace", Run: testTakeoverRace},
		check{Name: "HostileKeys", Run: testHostileKeys},
	)
}

// check is one conformance check.
type check = kitrig.Check[dedupe.Store]

var op = kitrig.Op

// The run and the key most checks use, and two digests of arguments.
const run = "run-1"

var (
	key   = digest("key")
	argsA = digest("a")
	argsB = digest("b")
)

// digest returns 64 hex digits, as the layer makes keys and digests.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// t0 is the time the checks start at: whole milliseconds, as a Store keeps
// times, and now, for a store that also keeps its records by its own clock.
func t0() time.Time { return time.UnixMilli(time.Now().UnixMilli()) }

// claimAt returns the claim of op at now, leased for a second, kept a
// minute.
func claimAt(op string, now time.Time) dedupe.Claim {
	return dedupe.Claim{Op: op, Args: argsA, Now: now, Until: now.Add(time.Second), Keep: time.Minute}
}

func claim(t *testing.T, s dedupe.Store, run, key string, c dedupe.Claim) dedupe.Record {
	t.Helper()
	rec, err := s.Claim(context.Background(), run, key, c)
	if err != nil {
		t.Fatalf("Claim(%.20q, %.20q, op %s): %v", run, key, c.Op, err)
	}
	return rec
}

func finish(t *testing.T, s dedupe.Store, op string, outcome []byte, now time.Time) {
	t.Helper()
	if err := s.Finish(context.Background(), run, key, op, outcome, now, time.Minute); err != nil {
		t.Fatalf("Finish(op %s): %v", op, err)
	}
}

// started fails unless rec is a started record of op, of args, leased
// until until.
func started(t *testing.T, rec dedupe.Record, op, args string, until time.Time) {
	t.Helper()
	if rec.Done || rec.Op != op || rec.Args != args || !rec.Until.Equal(until) {
		t.Fatalf("record %s: want started by %s, args %.8s…, until %v", show(rec), op, args, until.UnixMilli())
	}
}

// done fails unless rec is a done record of op holding outcome.
func done(t *testing.T, rec dedupe.Record, op string, outcome []byte) {
	t.Helper()
	if !rec.Done || rec.Op != op || rec.Args != argsA || !bytes.Equal(rec.Outcome, outcome) {
		t.Fatalf("record %s: want done by %s with %d bytes of outcome", show(rec), op, len(outcome))
	}
}

func show(rec dedupe.Record) string {
	return fmt.Sprintf("{op %s args %.8s… until %d done %v outcome %d bytes}",
		rec.Op, rec.Args, rec.Until.UnixMilli(), rec.Done, len(rec.Outcome))
}

// A claim makes a started record of its op; another op's claim gets it
// unchanged.
func testClaim(t *testing.T, s dedupe.Store) {
	now := t0()
	c := claimAt(op(1), now)
	started(t, claim(t, s, run, key, c), op(1), argsA, c.Until)
	other := claimAt(op(2), now.Add(500*time.Millisecond))
	other.Args = argsB
	started(t, claim(t, s, run, key, other), op(1), argsA, c.Until)
	other.Takeover = true // the lease is alive: no takeover
	started(t, claim(t, s, run, key, other), op(1), argsA, c.Until)
}

// The same claim sent twice gets its record again, its lease as it was.
func testClaimTwice(t *testing.T, s dedupe.Store) {
	now := t0()
	c := claimAt(op(1), now)
	claim(t, s, run, key, c)
	again := claimAt(op(1), now.Add(300*time.Millisecond))
	started(t, claim(t, s, run, key, again), op(1), argsA, c.Until)
}

// Finish makes the record done; the same Finish again succeeds; another
// op's Finish, or its holder's with another outcome, is ErrLost.
func testFinish(t *testing.T, s dedupe.Store) {
	now := t0()
	claim(t, s, run, key, claimAt(op(1), now))
	out := []byte(`{"content":"booked"}`)
	finish(t, s, op(1), out, now.Add(10*time.Millisecond))
	done(t, claim(t, s, run, key, claimAt(op(2), now.Add(20*time.Millisecond))), op(1), out)
	finish(t, s, op(1), out, now.Add(30*time.Millisecond)) // sent twice
	for _, o := range []struct {
		op  string
		out []byte
	}{{op(2), out}, {op(1), []byte(`{"content":"other"}`)}} {
		err := s.Finish(context.Background(), run, key, o.op, o.out, now.Add(40*time.Millisecond), time.Minute)
		if !errors.Is(err, dedupe.ErrLost) {
			t.Fatalf("Finish(op %s) of a record done: %v, want ErrLost", o.op, err)
		}
	}
	done(t, claim(t, s, run, key, claimAt(op(3), now.Add(50*time.Millisecond))), op(1), out)
	// A Finish of a record nobody claimed is ErrLost, and makes none.
	err := s.Finish(context.Background(), run, digest("unclaimed"), op(1), out, now, time.Minute)
	if !errors.Is(err, dedupe.ErrLost) {
		t.Fatalf("Finish of a record never claimed: %v, want ErrLost", err)
	}
	started(t, claim(t, s, run, digest("unclaimed"), claimAt(op(4), now)), op(4), argsA, now.Add(time.Second))
}

// Outcomes come back byte for byte, up to MaxOutcome; one byte more is
// ErrTooLarge and changes nothing.
func testOutcomes(t *testing.T, s dedupe.Store) {
	now := t0()
	big := bytes.Repeat([]byte{0, 0xff, '"', '\\', 'x'}, dedupe.MaxOutcome/5+1)
	for i, out := range [][]byte{{}, {0}, []byte("\xff\xfe\x00\n\r'\"%s"), big[:dedupe.MaxOutcome]} {
		k := digest(fmt.Sprint("outcome", i))
		claim(t, s, run, k, claimAt(op(1), now))
		if err := s.Finish(context.Background(), run, k, op(1), out, now, time.Minute); err != nil {
			t.Fatalf("Finish of %d bytes: %v", len(out), err)
		}
		rec := claim(t, s, run, k, claimAt(op(2), now))
		if !rec.Done || !bytes.Equal(rec.Outcome, out) {
			t.Fatalf("outcome of %d bytes came back as %s", len(out), show(rec))
		}
	}
	k := digest("too large")
	claim(t, s, run, k, claimAt(op(1), now))
	err := s.Finish(context.Background(), run, k, op(1), big[:dedupe.MaxOutcome+1], now, time.Minute)
	if !errors.Is(err, dedupe.ErrTooLarge) {
		t.Fatalf("Finish of MaxOutcome+1 bytes: %v, want ErrTooLarge", err)
	}
	started(t, claim(t, s, run, k, claimAt(op(2), now)), op(1), argsA, now.Add(time.Second))
}

// Release deletes a started record of its op only.
func testRelease(t *testing.T, s dedupe.Store) {
	ctx := context.Background()
	now := t0()
	claim(t, s, run, key, claimAt(op(1), now))
	if err := s.Release(ctx, run, key, op(2)); err != nil { // not its holder
		t.Fatalf("Release by another op: %v", err)
	}
	started(t, claim(t, s, run, key, claimAt(op(2), now)), op(1), argsA, now.Add(time.Second))
	if err := s.Release(ctx, run, key, op(1)); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := s.Release(ctx, run, key, op(1)); err != nil { // sent twice
		t.Fatalf("Release again: %v", err)
	}
	started(t, claim(t, s, run, key, claimAt(op(3), now)), op(3), argsA, now.Add(time.Second))
	finish(t, s, op(3), []byte("x"), now)
	if err := s.Release(ctx, run, key, op(3)); err != nil { // done: stays
		t.Fatalf("Release of a done record: %v", err)
	}
	done(t, claim(t, s, run, key, claimAt(op(4), now)), op(3), []byte("x"))
	if err := s.Release(ctx, run, digest("absent"), op(1)); err != nil {
		t.Fatalf("Release of no record: %v", err)
	}
}

// Renew moves the lease; a lease ended is not taken over without
// Takeover; Renew of a record not held is ErrLost.
func testLease(t *testing.T, s dedupe.Store) {
	ctx := context.Background()
	now := t0()
	claim(t, s, run, key, claimAt(op(1), now))
	later := now.Add(3 * time.Second)
	if err := s.Renew(ctx, run, key, op(1), later, now.Add(500*time.Millisecond), time.Minute); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	c := claimAt(op(2), now.Add(2*time.Second)) // past the first lease, within the renewed one
	c.Takeover = true
	started(t, claim(t, s, run, key, c), op(1), argsA, later)
	c = claimAt(op(2), later) // the lease ended at later, without Takeover
	started(t, claim(t, s, run, key, c), op(1), argsA, later)
	if err := s.Renew(ctx, run, key, op(2), later.Add(time.Second), later, time.Minute); !errors.Is(err, dedupe.ErrLost) {
		t.Fatalf("Renew by another op: %v, want ErrLost", err)
	}
	if err := s.Renew(ctx, run, digest("absent"), op(1), later, now, time.Minute); !errors.Is(err, dedupe.ErrLost) {
		t.Fatalf("Renew of no record: %v, want ErrLost", err)
	}
	finish(t, s, op(1), []byte("x"), later) // its holder may still finish it
	if err := s.Renew(ctx, run, key, op(1), later.Add(time.Second), later, time.Minute); !errors.Is(err, dedupe.ErrLost) {
		t.Fatalf("Renew of a done record: %v, want ErrLost", err)
	}
}

// A started record whose lease ended is taken over with Takeover and the
// same arguments only; its old holder then holds nothing.
func testTakeover(t *testing.T, s dedupe.Store) {
	ctx := context.Background()
	now := t0()
	claim(t, s, run, key, claimAt(op(1), now))
	end := now.Add(time.Second)
	c := claimAt(op(2), end)
	c.Takeover, c.Args = true, argsB // other arguments: never
	started(t, claim(t, s, run, key, c), op(1), argsA, end)
	c.Args = argsA
	started(t, claim(t, s, run, key, c), op(2), argsA, c.Until)
	if err := s.Renew(ctx, run, key, op(1), c.Until.Add(time.Second), end, time.Minute); !errors.Is(err, dedupe.ErrLost) {
		t.Fatalf("Renew by the old holder: %v, want ErrLost", err)
	}
	if err := s.Finish(ctx, run, key, op(1), []byte("late"), end, time.Minute); !errors.Is(err, dedupe.ErrLost) {
		t.Fatalf("Finish by the old holder: %v, want ErrLost", err)
	}
	if err := s.Release(ctx, run, key, op(1)); err != nil {
		t.Fatalf("Release by the old holder: %v", err)
	}
	finish(t, s, op(2), []byte("y"), end)
	c = claimAt(op(3), end.Add(30*time.Second))
	c.Takeover = true // a done record is never taken over
	rec := claim(t, s, run, key, c)
	if !rec.Done || rec.Op != op(2) || !bytes.Equal(rec.Outcome, []byte("y")) {
		t.Fatalf("record %s: want done by %s", show(rec), op(2))
	}
}

// A record is kept at least its keep, and forgotten after: checked with
// the wall clock, for a store that keeps records by its own.
func testKeep(t *testing.T, s dedupe.Store) {
	const keep = 2 * time.Second
	now := t0()
	c := dedupe.Claim{Op: op(1), Args: argsA, Now: now, Until: now.Add(100 * time.Millisecond), Keep: keep}
	claim(t, s, run, key, c)
	if err := s.Finish(context.Background(), run, key, op(1), []byte("x"), now, keep); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	done(t, claim(t, s, run, key, claimAt(op(2), now.Add(keep/4))), op(1), []byte("x"))
	time.Sleep(time.Until(now.Add(keep + 500*time.Millisecond)))
	after := claimAt(op(3), time.Now())
	started(t, claim(t, s, run, key, after), op(3), argsA, time.UnixMilli(after.Until.UnixMilli()))
}

// Racers claiming one record at once make one holder.
func testClaimRace(t *testing.T, s dedupe.Store) {
	now := t0()
	n := kitrig.Race(t, func(i int) (bool, error) {
		rec, err := s.Claim(context.Background(), run, key, claimAt(op(i), now))
		return err == nil && rec.Op == op(i), err
	})
	if n != 1 {
		t.Fatalf("%d of %d racers got the record, want 1", n, kitrig.Racers)
	}
}

// Racers taking over one record whose lease ended make one holder.
func testTakeoverRace(t *testing.T, s dedupe.Store) {
	now := t0()
	claim(t, s, run, key, claimAt(op(1000), now))
	end := now.Add(time.Second)
	n := kitrig.Race(t, func(i int) (bool, error) {
		c := claimAt(op(i), end)
		c.Takeover = true
		rec, err := s.Claim(context.Background(), run, key, c)
		return err == nil && rec.Op == op(i), err
	})
	if n != 1 {
		t.Fatalf("%d of %d racers took the record over, want 1", n, kitrig.Racers)
	}
}

// MinKeyBytes is how long a run id or a key every Store takes may be, of
// any bytes; past it, a Store may refuse them with dedupe.ErrTooLarge (the
// layer's are at most 128 and 64 bytes).
const MinKeyBytes = 1024

// Hostile run ids and keys name distinct records.
func testHostileKeys(t *testing.T, s dedupe.Store) {
	now := t0()
	names := kitrig.Hostile()
	i := 0
	for _, r := range names {
		for _, k := range []string{key, names[len(names)-1-i%len(names)], "k"} {
			i++
			rec, err := s.Claim(context.Background(), r, k, claimAt(op(i), now))
			if err != nil && (len(r) > MinKeyBytes || len(k) > MinKeyBytes) && errors.Is(err, dedupe.ErrTooLarge) {
				continue // a store may bound what it takes past MinKeyBytes
			}
			if err != nil {
				t.Fatalf("Claim(%.20q, %.20q): %v", r, k, err)
			}
			if rec.Op != op(i) {
				t.Fatalf("run %.20q key %.20q: got the record of op %s, want a new one", r, k, rec.Op)
			}
		}
	}
}
