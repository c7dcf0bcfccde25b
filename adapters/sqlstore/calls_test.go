package sqlstore_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/dedupe/dedupetest"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// callEnv is one database for the call records tests: two replicas (each
// with its own *sql.DB), a raw *sql.DB on the same database to write what
// the store would not, the table and the dialect.
type callEnv struct {
	a, b  dedupe.Store
	store *sqlstore.Store
	db    *sql.DB
	table string
	pg    bool
}

// raw runs q on the env's database, its ? placeholders numbered for
// PostgreSQL.
func (e callEnv) raw(t *testing.T, q string, args ...any) {
	t.Helper()
	if e.pg {
		var b strings.Builder
		n := 0
		for _, r := range q {
			if r == '?' {
				n++
				b.WriteString("$" + strconv.Itoa(n))
				continue
			}
			b.WriteRune(r)
		}
		q = b.String()
	}
	if _, err := e.db.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// rows returns how many call records the table holds.
func (e callEnv) rows(t *testing.T) int {
	t.Helper()
	var n int
	if err := e.db.QueryRowContext(context.Background(), "SELECT count(*) FROM "+e.table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func sqliteCalls(t *testing.T) callEnv {
	path := filepath.Join(t.TempDir(), "calls.db")
	db := openSQLite(t, path)
	s := newSQLiteStore(t, db)
	r := newSQLiteStore(t, openSQLite(t, path))
	return callEnv{a: s.CallRecords(), b: r.CallRecords(), store: s, db: db, table: "toolmw_call_records"}
}

func postgresCalls(t *testing.T) callEnv {
	pg := postgres(t)
	prefix := freshPrefix()
	db := pg.open(t)
	s := newPostgresStore(t, db, sqlstore.WithTablePrefix(prefix))
	r := newPostgresStore(t, pg.open(t), sqlstore.WithTablePrefix(prefix))
	return callEnv{a: s.CallRecords(), b: r.CallRecords(), store: s, db: db, table: prefix + "call_records", pg: true}
}

func TestSQLiteCallRecords(t *testing.T) { testCallRecords(t, sqliteCalls) }

func TestPostgresCallRecords(t *testing.T) {
	postgres(t)
	testCallRecords(t, postgresCalls)
}

// t0 is the layer's time in the call records tests; the store compares
// only the times it is given.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	run1   = "run-1"
	key1   = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	opA    = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	opB    = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	opC    = "cccccccccccccccccccccccccccccccc"
	args1  = "1111111111111111111111111111111111111111111111111111111111111111"
	args2  = "2222222222222222222222222222222222222222222222222222222222222222"
	lease  = 3 * time.Second
	window = time.Hour
)

// claim is op's claim at now, with a lease to now+lease and kept window.
func claim(op string, now time.Time, takeover bool) dedupe.Claim {
	return dedupe.Claim{Op: op, Args: args1, Now: now, Until: now.Add(lease), Keep: window, Takeover: takeover}
}

func mustClaim(t *testing.T, s dedupe.Store, run, key string, c dedupe.Claim) dedupe.Record {
	t.Helper()
	rec, err := s.Claim(context.Background(), run, key, c)
	if err != nil {
		t.Fatalf("Claim by %.8s: %v", c.Op, err)
	}
	return rec
}

// wantStarted checks that rec is started by op with its lease until.
func wantStarted(t *testing.T, rec dedupe.Record, op string, until time.Time) {
	t.Helper()
	if rec.Op != op || rec.Done || !rec.Until.Equal(until) || rec.Outcome != nil {
		t.Fatalf("record %+v; want started by %.8s until %v", rec, op, until)
	}
}

func wantDone(t *testing.T, rec dedupe.Record, op, outcome string) {
	t.Helper()
	if rec.Op != op || !rec.Done || string(rec.Outcome) != outcome {
		t.Fatalf("record %+v; want done by %.8s with %q", rec, op, outcome)
	}
}

// testCallRecords checks the dedupe.Store contract on the call records of
// the stores env makes, and what this store adds: bounds, corrupt rows,
// pruning.
func testCallRecords(t *testing.T, env func(t *testing.T) callEnv) {
	ctx := context.Background()

	t.Run("ClaimAbsent", func(t *testing.T) {
		e := env(t)
		rec := mustClaim(t, e.a, run1, key1, claim(opA, t0, false))
		wantStarted(t, rec, opA, t0.Add(lease))
		if rec.Args != args1 {
			t.Fatalf("Args = %q", rec.Args)
		}
		// The same claim, sent twice: the record as it was.
		again := claim(opA, t0.Add(time.Second), false)
		wantStarted(t, mustClaim(t, e.b, run1, key1, again), opA, t0.Add(lease))
		// Another op, the lease running: the holder's record, unchanged,
		// also with Takeover.
		for _, takeover := range []bool{false, true} {
			c := claim(opB, t0.Add(lease-time.Millisecond), takeover)
			c.Args = args2
			rec := mustClaim(t, e.b, run1, key1, c)
			wantStarted(t, rec, opA, t0.Add(lease))
			if rec.Args != args1 {
				t.Fatalf("another's claim changed the arguments: %q", rec.Args)
			}
		}
		// Other runs and keys are other records.
		wantStarted(t, mustClaim(t, e.b, "run-2", key1, claim(opB, t0, false)), opB, t0.Add(lease))
		wantStarted(t, mustClaim(t, e.b, run1, "k2", claim(opC, t0, false)), opC, t0.Add(lease))
	})

	t.Run("Takeover", func(t *testing.T) {
		e := env(t)
		mustClaim(t, e.a, run1, key1, claim(opA, t0, false))
		end := t0.Add(lease) // the lease ends at it: ended
		wantStarted(t, mustClaim(t, e.b, run1, key1, claim(opB, end, false)), opA, end)
		other := claim(opB, end, true)
		other.Args = args2 // another call's arguments: never taken over
		wantStarted(t, mustClaim(t, e.b, run1, key1, other), opA, end)
		rec := mustClaim(t, e.b, run1, key1, claim(opB, end, true))
		wantStarted(t, rec, opB, end.Add(lease))
		// The old holder holds nothing now.
		if err := e.a.Renew(ctx, run1, key1, opA, end.Add(time.Hour), end, window); !errors.Is(err, dedupe.ErrLost) {
			t.Fatalf("the old holder's Renew: %v, want ErrLost", err)
		}
		if err := e.a.Finish(ctx, run1, key1, opA, []byte("late"), end, window); !errors.Is(err, dedupe.ErrLost) {
			t.Fatalf("the old holder's Finish: %v, want ErrLost", err)
		}
		if err := e.a.Release(ctx, run1, key1, opA); err != nil {
			t.Fatalf("the old holder's Release: %v", err)
		}
		wantStarted(t, mustClaim(t, e.a, run1, key1, claim(opC, end, false)), opB, end.Add(lease))
		// A done record is never taken over.
		if err := e.b.Finish(ctx, run1, key1, opB, []byte("ok"), end, window); err != nil {
			t.Fatal(err)
		}
		wantDone(t, mustClaim(t, e.a, run1, key1, claim(opC, end.Add(time.Minute), true)), opB, "ok")
	})

	t.Run("RenewAndFinish", func(t *testing.T) {
		e := env(t)
		mustClaim(t, e.a, run1, key1, claim(opA, t0, false))
		now := t0.Add(2 * time.Second)
		if err := e.b.Renew(ctx, run1, key1, opA, now.Add(lease), now, window); err != nil {
			t.Fatalf("the holder's Renew: %v", err)
		}
		// The lease moved: at the old end the record is held still.
		wantStarted(t, mustClaim(t, e.b, run1, key1, claim(opB, t0.Add(lease), true)), opA, now.Add(lease))
		for _, op := range []string{opB, opA + "x", opA[:31]} {
			if err := e.b.Renew(ctx, run1, key1, op, now.Add(lease), now, window); !errors.Is(err, dedupe.ErrLost) {
				t.Fatalf("Renew by %q: %v, want ErrLost", op, err)
			}
			if err := e.b.Finish(ctx, run1, key1, op, []byte("x"), now, window); !errors.Is(err, dedupe.ErrLost) {
				t.Fatalf("Finish by %q: %v, want ErrLost", op, err)
			}
		}
		if err := e.a.Renew(ctx, run1, "absent", opA, now.Add(lease), now, window); !errors.Is(err, dedupe.ErrLost) {
			t.Fatalf("Renew of an absent record: %v, want ErrLost", err)
		}
		if err := e.a.Finish(ctx, run1, "absent", opA, []byte("x"), now, window); !errors.Is(err, dedupe.ErrLost) {
			t.Fatalf("Finish of an absent record: %v, want ErrLost", err)
		}
		// Renewed past its lease (the holder was slow, nobody took it
		// over): held still.
		late := now.Add(time.Minute)
		if err := e.a.Renew(ctx, run1, key1, opA, late.Add(lease), late, window); err != nil {
			t.Fatalf("a Renew after the lease ended, not taken over: %v", err)
		}
		outcome := []byte("outcome \x00\xff")
		if err := e.a.Finish(ctx, run1, key1, opA, outcome, late, window); err != nil {
			t.Fatalf("Finish: %v", err)
		}
		// The same Finish again: nil; another outcome: lost.
		if err := e.b.Finish(ctx, run1, key1, opA, outcome, late, window); err != nil {
			t.Fatalf("the same Finish again: %v", err)
		}
		if err := e.b.Finish(ctx, run1, key1, opA, []byte("other"), late, window); !errors.Is(err, dedupe.ErrLost) {
			t.Fatalf("a second Finish with another outcome: %v, want ErrLost", err)
		}
		if err := e.b.Renew(ctx, run1, key1, opA, late.Add(lease), late, window); !errors.Is(err, dedupe.ErrLost) {
			t.Fatalf("Renew of a done record: %v, want ErrLost", err)
		}
		for _, op := range []string{opA, opB} {
			rec := mustClaim(t, e.b, run1, key1, claim(op, late.Add(time.Minute), true))
			wantDone(t, rec, opA, string(outcome))
			if rec.Args != args1 {
				t.Fatalf("Args = %q", rec.Args)
			}
		}
		// Empty and nil outcomes are outcomes, and one Finish sent twice.
		for i, out := range [][]byte{nil, {}} {
			k := fmt.Sprintf("empty-%d", i)
			mustClaim(t, e.a, run1, k, claim(opA, t0, false))
			for range 2 {
				if err := e.a.Finish(ctx, run1, k, opA, out, t0, window); err != nil {
					t.Fatalf("Finish with %#v: %v", out, err)
				}
			}
			rec := mustClaim(t, e.b, run1, k, claim(opB, t0, false))
			if !rec.Done || rec.Outcome == nil || len(rec.Outcome) != 0 {
				t.Fatalf("an empty outcome read back: %+v", rec)
			}
		}
		// An outcome of MaxOutcome bytes.
		big := bytes.Repeat([]byte{0xAB}, dedupe.MaxOutcome)
		mustClaim(t, e.a, run1, "big", claim(opA, t0, false))
		if err := e.a.Finish(ctx, run1, "big", opA, big, t0, window); err != nil {
			t.Fatal(err)
		}
		if rec := mustClaim(t, e.b, run1, "big", claim(opB, t0, false)); !bytes.Equal(rec.Outcome, big) {
			t.Fatalf("an outcome of MaxOutcome bytes read back as %d bytes", len(rec.Outcome))
		}
	})

	t.Run("Release", func(t *testing.T) {
		e := env(t)
		mustClaim(t, e.a, run1, key1, claim(opA, t0, false))
		if err := e.b.Release(ctx, run1, key1, opB); err != nil {
			t.Fatalf("Release by another op: %v", err)
		}
		wantStarted(t, mustClaim(t, e.b, run1, key1, claim(opB, t0, false)), opA, t0.Add(lease))
		if err := e.b.Release(ctx, run1, key1, opA); err != nil {
			t.Fatalf("the holder's Release: %v", err)
		}
		if n := e.rows(t); n != 0 {
			t.Fatalf("%d rows after the Release", n)
		}
		wantStarted(t, mustClaim(t, e.b, run1, key1, claim(opB, t0, false)), opB, t0.Add(lease))
		if err := e.b.Finish(ctx, run1, key1, opB, []byte("ok"), t0, window); err != nil {
			t.Fatal(err)
		}
		if err := e.a.Release(ctx, run1, key1, opB); err != nil {
			t.Fatalf("Release of a done record: %v", err)
		}
		wantDone(t, mustClaim(t, e.a, run1, key1, claim(opC, t0, false)), opB, "ok")
		if err := e.a.Release(ctx, run1, "absent", opA); err != nil {
			t.Fatalf("Release of an absent record: %v", err)
		}
	})

	// A record whose keep ended at the claim's Now is absent: the claim
	// replaces it, done or started, and its holder holds nothing.
	t.Run("Expiry", func(t *testing.T) {
		e := env(t)
		mustClaim(t, e.a, run1, key1, claim(opA, t0, false))
		if err := e.a.Finish(ctx, run1, key1, opA, []byte("ok"), t0, window); err != nil {
			t.Fatal(err)
		}
		end := t0.Add(window)
		wantDone(t, mustClaim(t, e.b, run1, key1, claim(opB, end.Add(-time.Millisecond), false)), opA, "ok")
		wantStarted(t, mustClaim(t, e.b, run1, key1, claim(opB, end, false)), opB, end.Add(lease))

		// A started record expired: replaced too, and its holder's Renew
		// and Finish at a time past its keep are lost.
		mustClaim(t, e.a, run1, "k2", claim(opA, t0, false))
		if err := e.a.Renew(ctx, run1, "k2", opA, end.Add(lease), end, window); !errors.Is(err, dedupe.ErrLost) {
			t.Fatalf("Renew past the keep: %v, want ErrLost", err)
		}
		if err := e.a.Finish(ctx, run1, "k2", opA, []byte("late"), end, window); !errors.Is(err, dedupe.ErrLost) {
			t.Fatalf("Finish past the keep: %v, want ErrLost", err)
		}
		// Renew and Finish keep the record from their now on; a shorter
		// keep does not shorten it.
		mustClaim(t, e.a, run1, "k3", claim(opA, t0, false))
		half := t0.Add(window / 2)
		if err := e.a.Renew(ctx, run1, "k3", opA, half.Add(lease), half, window); err != nil {
			t.Fatal(err)
		}
		if err := e.a.Finish(ctx, run1, "k3", opA, []byte("ok"), half, time.Second); err != nil {
			t.Fatal(err)
		}
		wantDone(t, mustClaim(t, e.b, run1, "k3", claim(opB, half.Add(window-time.Millisecond), false)), opA, "ok")
		wantStarted(t, mustClaim(t, e.b, run1, "k3", claim(opB, half.Add(window), false)), opB, half.Add(window+lease))

		// A keep of zero: absent at once. Times are kept to the
		// millisecond, the keep rounded up.
		c := claim(opA, t0, false)
		c.Keep = 0
		mustClaim(t, e.a, run1, "k4", c)
		wantStarted(t, mustClaim(t, e.b, run1, "k4", claim(opB, t0, false)), opB, t0.Add(lease))
		c = claim(opA, t0.Add(1500*time.Microsecond), false)
		c.Keep = 1500 * time.Microsecond
		mustClaim(t, e.a, run1, "k5", c)
		wantStarted(t, mustClaim(t, e.b, run1, "k5", claim(opB, t0.Add(2*time.Millisecond), false)), opA, t0.Add(lease+time.Millisecond))
		wantStarted(t, mustClaim(t, e.b, run1, "k5", claim(opB, t0.Add(3*time.Millisecond), false)), opB, t0.Add(3*time.Millisecond+lease))
	})

	// Prune deletes the call records whose keep ended before the time
	// given, with the approvals and nonces older than it.
	t.Run("Prune", func(t *testing.T) {
		e := env(t)
		for i, keep := range []time.Duration{time.Minute, time.Hour, 2 * time.Hour} {
			c := claim(opA, t0, false)
			c.Keep = keep
			mustClaim(t, e.a, run1, fmt.Sprint(i), c)
		}
		n, err := e.store.Prune(ctx, t0.Add(time.Hour+time.Millisecond))
		if err != nil || n != 2 {
			t.Fatalf("Prune = %d, %v; want 2", n, err)
		}
		if e.rows(t) != 1 {
			t.Fatalf("%d rows left, want 1", e.rows(t))
		}
		wantStarted(t, mustClaim(t, e.b, run1, "2", claim(opB, t0, false)), opA, t0.Add(lease))
	})

	// Run ids, keys, ops and digests a hostile caller could send: any
	// bytes, kept apart, up to the bounds.
	t.Run("HostileNames", func(t *testing.T) {
		e := env(t)
		names := []string{
			"", "'; DROP TABLE toolmw_call_records; --", "a\x00b", "\xff\xfe", "K", "k", "k ",
			"💥", "?", "$1", "?1", strings.Repeat("k", sqlstore.MaxCallKeyBytes),
		}
		for i, n := range names {
			op := n[:min(len(n), sqlstore.MaxKeyBytes)]
			if op == "" {
				op = "op"
			}
			digest := n[:min(len(n), sqlstore.MaxKeyBytes)]
			c := dedupe.Claim{Op: op, Args: digest, Now: t0, Until: t0.Add(lease), Keep: window}
			for _, rk := range [][2]string{{n, "key"}, {"run", n}} {
				rec := mustClaim(t, e.a, rk[0], rk[1], c)
				if rec.Op != op || rec.Args != digest {
					t.Fatalf("name %d: %+v", i, rec)
				}
				if err := e.a.Finish(ctx, rk[0], rk[1], op, []byte(n), t0, window); err != nil {
					t.Fatalf("name %d: %v", i, err)
				}
			}
		}
		for i, n := range names {
			for _, rk := range [][2]string{{n, "key"}, {"run", n}} {
				rec := mustClaim(t, e.b, rk[0], rk[1], claim(opC, t0, true))
				if !rec.Done || string(rec.Outcome) != n || rec.Args != n[:min(len(n), sqlstore.MaxKeyBytes)] {
					t.Fatalf("name %d read back: %+v", i, rec)
				}
			}
		}
		if got := e.rows(t); got != 2*len(names) {
			t.Fatalf("%d rows for %d names", got, len(names))
		}
	})

	// Inputs over the bounds are refused with errors matching both
	// dedupe.ErrTooLarge and sqlstore.ErrTooLarge, before the database is
	// asked: the context is cancelled, and nothing is written.
	t.Run("Bounds", func(t *testing.T) {
		e := env(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		long := strings.Repeat("k", sqlstore.MaxKeyBytes+1)
		longKey := strings.Repeat("k", sqlstore.MaxCallKeyBytes+1)
		huge := make([]byte, dedupe.MaxOutcome+1)
		withArgs := claim(opA, t0, false)
		withArgs.Args = long
		for name, err := range map[string]error{
			"Claim run":    func() error { _, err := e.a.Claim(cctx, longKey, key1, claim(opA, t0, false)); return err }(),
			"Claim key":    func() error { _, err := e.a.Claim(cctx, run1, longKey, claim(opA, t0, false)); return err }(),
			"Claim op":     func() error { _, err := e.a.Claim(cctx, run1, key1, claim(long, t0, false)); return err }(),
			"Claim args":   func() error { _, err := e.a.Claim(cctx, run1, key1, withArgs); return err }(),
			"Renew run":    e.a.Renew(cctx, longKey, key1, opA, t0, t0, window),
			"Renew key":    e.a.Renew(cctx, run1, longKey, opA, t0, t0, window),
			"Renew op":     e.a.Renew(cctx, run1, key1, long, t0, t0, window),
			"Finish run":   e.a.Finish(cctx, longKey, key1, opA, nil, t0, window),
			"Finish key":   e.a.Finish(cctx, run1, longKey, opA, nil, t0, window),
			"Finish op":    e.a.Finish(cctx, run1, key1, long, nil, t0, window),
			"Finish bytes": e.a.Finish(cctx, run1, key1, opA, huge, t0, window),
			"Release run":  e.a.Release(cctx, longKey, key1, opA),
			"Release key":  e.a.Release(cctx, run1, longKey, opA),
			"Release op":   e.a.Release(cctx, run1, key1, long),
		} {
			if !errors.Is(err, dedupe.ErrTooLarge) || !errors.Is(err, sqlstore.ErrTooLarge) || errors.Is(err, context.Canceled) {
				t.Errorf("%s over the bound: %v, want ErrTooLarge, the database not asked", name, err)
			}
		}
		// Over the bound with a live context: refused, nothing written.
		mustClaim(t, e.a, run1, key1, claim(opA, t0, false))
		if err := e.a.Finish(ctx, run1, key1, opA, huge, t0, window); !errors.Is(err, dedupe.ErrTooLarge) {
			t.Fatalf("Finish of MaxOutcome+1 bytes: %v", err)
		}
		wantStarted(t, mustClaim(t, e.b, run1, key1, claim(opB, t0, false)), opA, t0.Add(lease))
		// Times before 1970, a negative keep and an empty op: refused.
		before := time.Unix(-1, 0)
		bad := []dedupe.Claim{
			{Op: opA, Now: before, Until: t0, Keep: window},
			{Op: opA, Now: t0, Until: before, Keep: window},
			{Op: opA, Now: t0, Until: t0, Keep: -time.Second},
			{Op: "", Now: t0, Until: t0, Keep: window},
		}
		for i, c := range bad {
			if _, err := e.a.Claim(ctx, run1, "bad", c); err == nil {
				t.Errorf("bad claim %d accepted", i)
			}
		}
		if err := e.a.Renew(ctx, run1, key1, opA, before, t0, window); err == nil {
			t.Error("Renew to before 1970 accepted")
		}
		if err := e.a.Finish(ctx, run1, key1, opA, nil, t0, -time.Second); err == nil {
			t.Error("Finish with a negative keep accepted")
		}
		if n := e.rows(t); n != 1 {
			t.Fatalf("%d rows, want 1", n)
		}
		// A keep past the largest time is capped, not wrapped around.
		c := claim(opA, t0, false)
		c.Keep = time.Duration(1<<63 - 1)
		mustClaim(t, e.a, run1, "forever", c)
		wantStarted(t, mustClaim(t, e.b, run1, "forever", claim(opB, t0.Add(100*365*24*time.Hour), false)), opA, t0.Add(lease))
	})

	// Rows no Store writes, written with raw SQL: a Claim returns an
	// error wrapping store.ErrCorrupt, quoting nothing of the row, and
	// does not replace the row, even with Takeover.
	t.Run("CorruptRows", func(t *testing.T) {
		e := env(t)
		secret := canary.Values()[0]
		ins := "INSERT INTO " + e.table + " (run_id, call_key, op, args, until_ms, expires_at, done, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
		far := t0.Add(window).UnixMilli()
		past := t0.Add(-time.Minute).UnixMilli()
		for name, row := range map[string][]any{
			"negative lease":       {[]byte(secret), []byte(secret), int64(-1), far, 0, nil},
			"negative expiry":      {[]byte(opA), []byte(secret), past, int64(-5), 0, nil},
			"negative both":        {[]byte(opA), []byte(secret), int64(-1), int64(-1), 1, []byte(secret)},
			"state 2":              {[]byte(opA), []byte(secret), past, far, 2, []byte(secret)},
			"state -1":             {[]byte(opA), []byte(secret), past, far, -1, nil},
			"empty op":             {[]byte{}, []byte(secret), far, far, 0, nil},
			"op over the bound":    {bytes.Repeat([]byte("o"), sqlstore.MaxKeyBytes+1), []byte(secret), far, far, 0, nil},
			"args over the bound":  {[]byte(opA), bytes.Repeat([]byte("a"), sqlstore.MaxKeyBytes+1), far, far, 0, nil},
			"done without outcome": {[]byte(opA), []byte(secret), past, far, 1, nil},
			"started with outcome": {[]byte(opA), []byte(secret), far, far, 0, []byte(secret)},
			"outcome over bound":   {[]byte(opA), []byte(secret), past, far, 1, append([]byte(secret), make([]byte, dedupe.MaxOutcome)...)},
		} {
			t.Run(name, func(t *testing.T) {
				k := "corrupt " + name
				e.raw(t, ins, append([]any{[]byte(run1), []byte(k)}, row...)...)
				for _, takeover := range []bool{false, true} {
					_, err := e.b.Claim(ctx, run1, k, claim(opB, t0, takeover))
					if !errors.Is(err, store.ErrCorrupt) {
						t.Fatalf("Claim (takeover %v): %v, want ErrCorrupt", takeover, err)
					}
					if fam := canary.Leaked(err.Error()); fam != "" {
						t.Fatalf("the error quotes the row's %s: %v", fam, err)
					}
				}
			})
		}
		if e.pg {
			return
		}
		// SQLite keeps any type in any column.
		for name, set := range map[string]string{
			"text lease":   "until_ms = 'soon'",
			"real expiry":  "expires_at = 1e300",
			"text op":      "op = 'aaaa'",
			"text args":    "args = 'x'",
			"text outcome": "done = 1, outcome = 'x'",
			"text state":   "done = 'yes'",
		} {
			t.Run(name, func(t *testing.T) {
				k := "typed " + name
				mustClaim(t, e.a, run1, k, claim(opA, t0, false))
				e.raw(t, "UPDATE "+e.table+" SET "+set+" WHERE call_key = ?", []byte(k))
				if _, err := e.b.Claim(ctx, run1, k, claim(opB, t0, false)); !errors.Is(err, store.ErrCorrupt) {
					t.Fatalf("Claim: %v, want ErrCorrupt", err)
				}
			})
		}
	})

	// An expired row is absent whatever it holds: a claim replaces it.
	t.Run("ExpiredGarbageReplaced", func(t *testing.T) {
		e := env(t)
		e.raw(t, "INSERT INTO "+e.table+" (run_id, call_key, op, args, until_ms, expires_at, done, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			[]byte(run1), []byte(key1), []byte{}, []byte{}, int64(-7), t0.UnixMilli(), 9, []byte("x"))
		wantStarted(t, mustClaim(t, e.b, run1, key1, claim(opB, t0, false)), opB, t0.Add(lease))
	})

	t.Run("CancelledContext", func(t *testing.T) {
		e := env(t)
		mustClaim(t, e.a, run1, key1, claim(opA, t0, false))
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		for name, err := range map[string]error{
			"Claim":   func() error { _, err := e.a.Claim(cctx, run1, "k2", claim(opA, t0, false)); return err }(),
			"Renew":   e.a.Renew(cctx, run1, key1, opA, t0.Add(lease), t0, window),
			"Finish":  e.a.Finish(cctx, run1, key1, opA, []byte("x"), t0, window),
			"Release": e.a.Release(cctx, run1, key1, opA),
		} {
			if err == nil || errors.Is(err, dedupe.ErrLost) || errors.Is(err, store.ErrCorrupt) {
				t.Errorf("%s with a cancelled context: %v, want a store failure", name, err)
			}
		}
		wantStarted(t, mustClaim(t, e.b, run1, key1, claim(opB, t0, false)), opA, t0.Add(lease))
		if n := e.rows(t); n != 1 {
			t.Fatalf("%d rows, want 1", n)
		}
	})

	// The errors never quote a run id, a key, an op or an outcome.
	t.Run("ErrorsQuoteNothing", func(t *testing.T) {
		e := env(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		pad := strings.Repeat("x", sqlstore.MaxCallKeyBytes)
		for _, secret := range canary.Values() {
			long := secret + pad
			out := []byte(secret + string(make([]byte, dedupe.MaxOutcome)))
			for _, err := range []error{
				func() error { _, err := e.a.Claim(ctx, long, key1, claim(opA, t0, false)); return err }(),
				func() error { _, err := e.a.Claim(ctx, run1, key1, claim(long, t0, false)); return err }(),
				func() error { _, err := e.a.Claim(cctx, secret, secret, claim(secret, t0, false)); return err }(),
				e.a.Renew(ctx, run1, long, opA, t0, t0, window),
				e.a.Renew(cctx, secret, secret, secret, t0, t0, window),
				e.a.Finish(ctx, run1, key1, opA, out, t0, window),
				e.a.Finish(cctx, secret, secret, secret, []byte(secret), t0, window),
				e.a.Finish(ctx, secret, secret, secret, []byte(secret), t0, window),
				e.a.Release(ctx, secret, long, secret),
				e.a.Release(cctx, secret, secret, secret),
			} {
				if err == nil {
					t.Fatal("no error")
				}
				if fam := canary.Leaked(err.Error()); fam != "" {
					t.Errorf("an error quotes the planted %s: %v", fam, err)
				}
			}
		}
	})

	// Two replicas, each with several goroutines, claim one record: one
	// op gets it, and every claim returns that op's record. Then they race
	// to take over its ended lease: one op takes it.
	t.Run("ClaimRace", func(t *testing.T) {
		e := env(t)
		const rounds, perReplica = 5, 8
		for round := range rounds {
			k := fmt.Sprintf("race-%d", round)
			race := func(now time.Time, takeover bool) (winners map[string]bool) {
				t.Helper()
				var wg sync.WaitGroup
				var mu sync.Mutex
				winners = map[string]bool{}
				var errs []error
				seen := map[string]bool{}
				start := make(chan struct{})
				for i := range 2 * perReplica {
					s := e.a
					if i%2 == 1 {
						s = e.b
					}
					op := fmt.Sprintf("%032x", round*1000+i+int(now.Sub(t0)))
					wg.Go(func() {
						<-start
						rec, err := s.Claim(ctx, run1, k, claim(op, now, takeover))
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err != nil:
							errs = append(errs, err)
						case rec.Op == op:
							winners[op] = true
						default:
							seen[rec.Op] = true
						}
					})
				}
				close(start)
				wg.Wait()
				if len(errs) != 0 || len(winners) != 1 {
					t.Fatalf("round %d: winners %v, errors %v; want one winner", round, winners, errs)
				}
				for op := range seen {
					if !winners[op] {
						t.Fatalf("round %d: a loser was shown %s, not the winner %v", round, op, winners)
					}
				}
				return winners
			}
			first := race(t0, false)
			second := race(t0.Add(lease), true)
			for op := range second {
				if first[op] {
					t.Fatalf("round %d: the takeover race was won by the holder", round)
				}
			}
		}
	})
}

// The conformance kit of dedupe.Store, on each database: each check gets
// a database (or tables) of its own, reached through two replicas, each
// with its own *sql.DB, taking the operations in turn.
func TestSQLiteCallRecordsConformance(t *testing.T) {
	dedupetest.TestStore(t, func(t *testing.T) dedupe.Store { return sqliteCalls(t).replicas() })
}

func TestPostgresCallRecordsConformance(t *testing.T) {
	postgres(t)
	dedupetest.TestStore(t, func(t *testing.T) dedupe.Store { return postgresCalls(t).replicas() })
}

// replicas returns a dedupe.Store that sends each operation to the env's
// replicas in turn.
func (e callEnv) replicas() dedupe.Store { return &inTurn{s: [2]dedupe.Store{e.a, e.b}} }

type inTurn struct {
	s [2]dedupe.Store
	n atomic.Uint64
}

func (r *inTurn) next() dedupe.Store { return r.s[r.n.Add(1)%2] }

func (r *inTurn) Claim(ctx context.Context, run, key string, c dedupe.Claim) (dedupe.Record, error) {
	return r.next().Claim(ctx, run, key, c)
}

func (r *inTurn) Renew(ctx context.Context, run, key, op string, until, now time.Time, keep time.Duration) error {
	return r.next().Renew(ctx, run, key, op, until, now, keep)
}

func (r *inTurn) Finish(ctx context.Context, run, key, op string, outcome []byte, now time.Time, keep time.Duration) error {
	return r.next().Finish(ctx, run, key, op, outcome, now, keep)
}

func (r *inTurn) Release(ctx context.Context, run, key, op string) error {
	return r.next().Release(ctx, run, key, op)
}
