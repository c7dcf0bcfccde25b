package redisstate_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/dedupe/dedupetest"
	"github.com/toolmw/toolmw/store"
)

// recordEpoch is the layer's clock in the call-record tests: a time of
// its own, far from Redis's, so that a record Redis kept by its own clock
// would be caught.
var recordEpoch = time.UnixMilli(1_900_000_000_000)

// at returns the layer's time d after recordEpoch.
func at(d time.Duration) time.Time { return recordEpoch.Add(d) }

// ops and args of the tests: as the layer makes them, 32 and 64 hex digits.
func testOp(n int) string   { return fmt.Sprintf("%032x", n) }
func testArgs(n int) string { return fmt.Sprintf("%064x", n) }

// recordKey returns the Redis key of the record of key in run, by the
// rule doc.go gives.
func recordKey(run, key string) string {
	return "toolmw:dd:" + hashed(run) + hashed(key)
}

func claim(op, args int, now, until time.Duration, takeover bool) dedupe.Claim {
	return dedupe.Claim{Op: testOp(op), Args: testArgs(args), Now: at(now), Until: at(until), Keep: time.Hour, Takeover: takeover}
}

// TestCallRecordsConformance: the Store keeps dedupe.Store's contract
// (dedupetest), each check on a prefix of its own.
func TestCallRecordsConformance(t *testing.T) {
	newStore := kitStores(t)
	dedupetest.TestStore(t, func(t *testing.T) dedupe.Store { return newStore(t).CallRecords() })
}

// TestCallRecordsContract: the dedupe.Store contract, step by step, on one
// record: the first claim makes it, another op's claim gets it unchanged,
// the same op's claim gets it again; renew and finish by the holder only;
// a finish sent twice; a done record handed to every later claim; release
// of what op does not hold changes nothing.
func TestCallRecordsContract(t *testing.T) {
	noLeaks(t)
	r := newReplica(t, startRedis(t))
	st := r.Store.CallRecords()
	ctx := context.Background()
	const run, key = "run-1", "call-1"

	rec, err := st.Claim(ctx, run, key, claim(1, 1, 0, 10*time.Second, false))
	if err != nil {
		t.Fatal(err)
	}
	want := dedupe.Record{Op: testOp(1), Args: testArgs(1), Until: at(10 * time.Second)}
	if !sameRecord(rec, want) {
		t.Fatalf("the first claim: %+v, want %+v", rec, want)
	}
	for _, c := range []dedupe.Claim{claim(2, 1, time.Second, 20*time.Second, false), claim(2, 1, time.Second, 20*time.Second, true),
		claim(2, 2, time.Second, 20*time.Second, true), claim(1, 1, 2*time.Second, 30*time.Second, false)} {
		if rec, err := st.Claim(ctx, run, key, c); err != nil || !sameRecord(rec, want) {
			t.Fatalf("claim %+v of a live record: %+v, %v; want it unchanged, %+v", c, rec, err, want)
		}
	}
	if err := st.Renew(ctx, run, key, testOp(2), at(40*time.Second), at(3*time.Second), time.Hour); !errors.Is(err, dedupe.ErrLost) {
		t.Fatalf("renew by another op: %v, want ErrLost", err)
	}
	if err := st.Renew(ctx, run, key, testOp(1), at(40*time.Second), at(3*time.Second), time.Hour); err != nil {
		t.Fatalf("renew by the holder: %v", err)
	}
	want.Until = at(40 * time.Second)
	if rec, err := st.Claim(ctx, run, key, claim(2, 1, 4*time.Second, 50*time.Second, true)); err != nil || !sameRecord(rec, want) {
		t.Fatalf("after renew: %+v, %v; want %+v", rec, err, want)
	}
	if err := st.Finish(ctx, run, key, testOp(2), []byte("x"), at(5*time.Second), time.Hour); !errors.Is(err, dedupe.ErrLost) {
		t.Fatalf("finish by another op: %v, want ErrLost", err)
	}
	if err := st.Release(ctx, run, key, testOp(2)); err != nil {
		t.Fatalf("release by another op: %v, want nil", err)
	}
	outcome := []byte("result \x00\xff")
	for range 2 { // the same Finish, sent twice
		if err := st.Finish(ctx, run, key, testOp(1), outcome, at(5*time.Second), time.Hour); err != nil {
			t.Fatalf("finish by the holder: %v", err)
		}
	}
	if err := st.Finish(ctx, run, key, testOp(1), []byte("other"), at(5*time.Second), time.Hour); !errors.Is(err, dedupe.ErrLost) {
		t.Fatalf("finish with another outcome: %v, want ErrLost", err)
	}
	if err := st.Renew(ctx, run, key, testOp(1), at(60*time.Second), at(6*time.Second), time.Hour); !errors.Is(err, dedupe.ErrLost) {
		t.Fatalf("renew of a done record: %v, want ErrLost", err)
	}
	if err := st.Release(ctx, run, key, testOp(1)); err != nil {
		t.Fatalf("release of a done record: %v", err)
	}
	done := dedupe.Record{Op: testOp(1), Args: testArgs(1), Done: true, Outcome: outcome}
	for _, c := range []dedupe.Claim{claim(3, 1, 6*time.Second, time.Minute, true), claim(1, 1, 10*time.Minute, time.Hour, false)} {
		if rec, err := st.Claim(ctx, run, key, c); err != nil || !sameRecord(rec, done) {
			t.Fatalf("claim %+v of a done record: %+v, %v; want %+v", c, rec, err, done)
		}
	}
	// Another key, another run: records of their own.
	for _, rk := range [][2]string{{run, "call-2"}, {"run-2", key}} {
		if rec, err := st.Claim(ctx, rk[0], rk[1], claim(4, 4, 0, time.Second, false)); err != nil || rec.Op != testOp(4) || rec.Done {
			t.Fatalf("claim of %q in %q: %+v, %v; want a new record", rk[1], rk[0], rec, err)
		}
	}
	if n := r.Client.Exists(ctx, recordKey(run, key)).Val(); n != 1 {
		t.Fatalf("the record's key %s: %d, want it there", recordKey(run, key), n)
	}
}

// sameRecord compares records: times to the millisecond, outcomes as bytes.
func sameRecord(a, b dedupe.Record) bool {
	return a.Op == b.Op && a.Args == b.Args && a.Done == b.Done && bytes.Equal(a.Outcome, b.Outcome) &&
		a.Until.UnixMilli() == b.Until.UnixMilli() && a.Until.IsZero() == b.Until.IsZero()
}

// TestCallRecordsLease: a started record whose lease ended is taken over
// only by a claim with Takeover and the same arguments, at or after the
// lease's end by the layer's clock; the op that lost it can renew and
// finish it no more, and its release deletes nothing.
func TestCallRecordsLease(t *testing.T) {
	noLeaks(t)
	r := newReplica(t, startRedis(t))
	st := r.Store.CallRecords()
	ctx := context.Background()
	const run, key = "run-lease", "call"
	if _, err := st.Claim(ctx, run, key, claim(1, 1, 0, 10*time.Second, false)); err != nil {
		t.Fatal(err)
	}
	held := dedupe.Record{Op: testOp(1), Args: testArgs(1), Until: at(10 * time.Second)}
	for name, c := range map[string]dedupe.Claim{
		"before the lease's end":   claim(2, 1, 10*time.Second-time.Millisecond, time.Minute, true),
		"without Takeover":         claim(2, 1, 10*time.Second, time.Minute, false),
		"with other arguments":     claim(2, 2, 10*time.Second, time.Minute, true),
		"with Takeover, too early": claim(2, 1, 9*time.Second, time.Minute, true),
	} {
		if rec, err := st.Claim(ctx, run, key, c); err != nil || !sameRecord(rec, held) {
			t.Fatalf("claim %s: %+v, %v; want the record unchanged, %+v", name, rec, err, held)
		}
	}
	// At the lease's end, to the millisecond.
	rec, err := st.Claim(ctx, run, key, claim(2, 1, 10*time.Second, time.Minute, true))
	taken := dedupe.Record{Op: testOp(2), Args: testArgs(1), Until: at(time.Minute)}
	if err != nil || !sameRecord(rec, taken) {
		t.Fatalf("takeover: %+v, %v; want %+v", rec, err, taken)
	}
	if err := st.Renew(ctx, run, key, testOp(1), at(2*time.Minute), at(11*time.Second), time.Hour); !errors.Is(err, dedupe.ErrLost) {
		t.Fatalf("renew by the op taken over: %v, want ErrLost", err)
	}
	if err := st.Finish(ctx, run, key, testOp(1), nil, at(11*time.Second), time.Hour); !errors.Is(err, dedupe.ErrLost) {
		t.Fatalf("finish by the op taken over: %v, want ErrLost", err)
	}
	if err := st.Release(ctx, run, key, testOp(1)); err != nil {
		t.Fatal(err)
	}
	if rec, err := st.Claim(ctx, run, key, claim(3, 1, 12*time.Second, time.Minute, false)); err != nil || !sameRecord(rec, taken) {
		t.Fatalf("after the old holder's release: %+v, %v; want %+v", rec, err, taken)
	}
	// The holder's release deletes it: the next claim makes a new record.
	if err := st.Release(ctx, run, key, testOp(2)); err != nil {
		t.Fatal(err)
	}
	if n := r.Client.Exists(ctx, recordKey(run, key)).Val(); n != 0 {
		t.Fatal("the released record is still on Redis")
	}
	if rec, err := st.Claim(ctx, run, key, claim(3, 3, 13*time.Second, time.Minute, false)); err != nil || rec.Op != testOp(3) {
		t.Fatalf("claim after release: %+v, %v; want op 3's", rec, err)
	}
	// An empty outcome is an outcome.
	if err := st.Finish(ctx, run, key, testOp(3), nil, at(14*time.Second), time.Hour); err != nil {
		t.Fatal(err)
	}
	if rec, err := st.Claim(ctx, run, key, claim(4, 3, 15*time.Second, time.Minute, true)); err != nil || !rec.Done || len(rec.Outcome) != 0 {
		t.Fatalf("claim of a record done with an empty outcome: %+v, %v", rec, err)
	}
}

// TestCallRecordsKeep: a record is kept keep after its last write, and
// never less than its lease: by the layer's clock (a claim past its keep
// makes a new record, a renew or finish past it finds it gone) and on
// Redis (the key's TTL, by Redis's clock).
func TestCallRecordsKeep(t *testing.T) {
	noLeaks(t)
	r := newReplica(t, startRedis(t))
	st := r.Store.CallRecords()
	ctx := context.Background()
	pttl := func(run, key string) time.Duration { return r.Client.PTTL(ctx, recordKey(run, key)).Val() }
	near := func(got, want time.Duration) bool { return got <= want && got > want-loadSlack }

	// A lease longer than keep: kept to the lease's end.
	c := dedupe.Claim{Op: testOp(1), Args: testArgs(1), Now: at(0), Until: at(time.Hour), Keep: time.Minute}
	if _, err := st.Claim(ctx, "run", "long-lease", c); err != nil {
		t.Fatal(err)
	}
	if got := pttl("run", "long-lease"); !near(got, time.Hour) {
		t.Fatalf("a record leased for an hour, kept a minute: TTL %v, want an hour", got)
	}
	// Still there by the layer's clock just before the lease ends, gone
	// after it.
	if rec, _ := st.Claim(ctx, "run", "long-lease", dedupe.Claim{Op: testOp(2), Args: testArgs(1), Now: at(time.Hour - time.Millisecond),
		Until: at(2 * time.Hour), Keep: time.Minute}); rec.Op != testOp(1) {
		t.Fatalf("the record before its lease's end: %+v, want op 1's", rec)
	}
	if rec, _ := st.Claim(ctx, "run", "long-lease", dedupe.Claim{Op: testOp(2), Args: testArgs(2), Now: at(time.Hour),
		Until: at(2 * time.Hour), Keep: time.Minute}); rec.Op != testOp(2) || rec.Args != testArgs(2) {
		t.Fatalf("the record past its lease and keep: %+v, want a new one of op 2", rec)
	}

	// Keep longer than the lease; a renew keeps it keep from its now.
	c = dedupe.Claim{Op: testOp(1), Args: testArgs(1), Now: at(0), Until: at(time.Second), Keep: time.Hour}
	if _, err := st.Claim(ctx, "run", "k", c); err != nil {
		t.Fatal(err)
	}
	if got := pttl("run", "k"); !near(got, time.Hour) {
		t.Fatalf("a record kept an hour: TTL %v", got)
	}
	if err := st.Renew(ctx, "run", "k", testOp(1), at(2*time.Second), at(time.Second), 3*time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := pttl("run", "k"); !near(got, 3*time.Hour) {
		t.Fatalf("renewed for 3 hours: TTL %v", got)
	}
	if err := st.Finish(ctx, "run", "k", testOp(1), []byte("ok"), at(time.Hour), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := pttl("run", "k"); !near(got, 24*time.Hour) {
		t.Fatalf("finished, kept a day: TTL %v", got)
	}
	if rec, _ := st.Claim(ctx, "run", "k", claim(5, 1, 25*time.Hour-time.Millisecond, 26*time.Hour, false)); !rec.Done {
		t.Fatalf("a done record within its keep: %+v", rec)
	}
	if err := st.Finish(ctx, "run", "k", testOp(1), []byte("ok"), at(25*time.Hour), time.Hour); !errors.Is(err, dedupe.ErrLost) {
		t.Fatalf("finish again past the keep: %v, want ErrLost", err)
	}
	if rec, _ := st.Claim(ctx, "run", "k", claim(5, 1, 25*time.Hour, 26*time.Hour, false)); rec.Done || rec.Op != testOp(5) {
		t.Fatalf("a done record past its keep: %+v, want a new one", rec)
	}
	if err := st.Renew(ctx, "run", "k", testOp(5), at(27*time.Hour), at(27*time.Hour), 0); !errors.Is(err, dedupe.ErrLost) {
		t.Fatalf("renew past the keep: %v, want ErrLost", err)
	}

	// Redis forgets a record by itself.
	c = dedupe.Claim{Op: testOp(1), Args: testArgs(1), Now: at(0), Until: at(50 * time.Millisecond), Keep: 50 * time.Millisecond}
	if _, err := st.Claim(ctx, "run", "short", c); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); r.Client.Exists(ctx, recordKey("run", "short")).Val() == 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a record kept 50 ms is on Redis 5 s later")
		}
	}
}

// TestCallRecordsBounds: an outcome over dedupe.MaxOutcome, an op or an
// arguments digest over MaxCallRecordOpLen, and a time the records cannot
// keep are refused before Redis is asked; an outcome of MaxOutcome is
// kept whole. Run ids and keys of any bytes and length name keys of the
// prefix, "dd:" and 64 hex digits.
func TestCallRecordsBounds(t *testing.T) {
	noLeaks(t)
	r := newReplica(t, startRedis(t))
	st := r.Store.CallRecords()
	ctx := context.Background()
	// The first claim opens the connection and loads the script.
	if _, err := st.Claim(ctx, "warm", "k", claim(1, 1, 0, time.Second, false)); err != nil {
		t.Fatal(err)
	}
	r.Client.Del(ctx, recordKey("warm", "k"))
	before := r.RoundTrips.n.Load()
	if _, err := st.Claim(ctx, "run", "k", claim(1, 1, 0, time.Second, false)); err != nil {
		t.Fatal(err)
	}
	if n := r.RoundTrips.n.Load() - before; n != 1 {
		t.Fatalf("a claim took %d round trips, want 1", n)
	}
	before = r.RoundTrips.n.Load()
	big := bytes.Repeat([]byte{0xff}, dedupe.MaxOutcome+1)
	if err := st.Finish(ctx, "run", "k", testOp(1), big, at(0), time.Hour); !errors.Is(err, dedupe.ErrTooLarge) {
		t.Fatalf("finish with %d bytes: %v, want ErrTooLarge", len(big), err)
	}
	long := strings.Repeat("f", 129)
	refused := map[string]func() error{
		"claim, long op": func() error {
			_, err := st.Claim(ctx, "run", "k", dedupe.Claim{Op: long, Args: testArgs(1), Now: at(0), Until: at(time.Second)})
			return err
		},
		"claim, long args": func() error {
			_, err := st.Claim(ctx, "run", "k", dedupe.Claim{Op: testOp(1), Args: long, Now: at(0), Until: at(time.Second)})
			return err
		},
		"renew, long op":   func() error { return st.Renew(ctx, "run", "k", long, at(0), at(0), time.Hour) },
		"finish, long op":  func() error { return st.Finish(ctx, "run", "k", long, nil, at(0), time.Hour) },
		"release, long op": func() error { return st.Release(ctx, "run", "k", long) },
	}
	for name, f := range refused {
		if err := f(); !errors.Is(err, dedupe.ErrTooLarge) {
			t.Errorf("%s: %v, want ErrTooLarge", name, err)
		}
	}
	invalid := map[string]func() error{
		"claim, empty op": func() error {
			_, err := st.Claim(ctx, "run", "k", dedupe.Claim{Args: testArgs(1), Now: at(0), Until: at(time.Second)})
			return err
		},
		"claim, zero time": func() error {
			_, err := st.Claim(ctx, "run", "k", dedupe.Claim{Op: testOp(1), Args: testArgs(1), Until: at(time.Second)})
			return err
		},
		"claim, before 1970": func() error {
			_, err := st.Claim(ctx, "run", "k", dedupe.Claim{Op: testOp(1), Args: testArgs(1), Now: time.UnixMilli(-1), Until: at(0)})
			return err
		},
		"renew, past 2^53 ms": func() error {
			return st.Renew(ctx, "run", "k", testOp(1), time.UnixMilli(1<<53), at(0), time.Hour)
		},
		"finish, zero time": func() error { return st.Finish(ctx, "run", "k", testOp(1), nil, time.Time{}, time.Hour) },
		"release, empty op": func() error { return st.Release(ctx, "run", "k", "") },
	}
	for name, f := range invalid {
		if err := f(); err == nil || errors.Is(err, dedupe.ErrLost) || errors.Is(err, store.ErrCorrupt) {
			t.Errorf("%s: %v, want it refused", name, err)
		}
	}
	if n := r.RoundTrips.n.Load() - before; n != 0 {
		t.Fatalf("refused operations took %d round trips, want none", n)
	}
	whole := bytes.Repeat([]byte{0, 0xff, 'a'}, dedupe.MaxOutcome/3+1)[:dedupe.MaxOutcome]
	if err := st.Finish(ctx, "run", "k", testOp(1), whole, at(0), time.Hour); err != nil {
		t.Fatal(err)
	}
	if rec, err := st.Claim(ctx, "run", "k", claim(2, 1, 0, time.Second, false)); err != nil || !bytes.Equal(rec.Outcome, whole) {
		t.Fatalf("an outcome of MaxOutcome bytes: %d bytes back, %v", len(rec.Outcome), err)
	}

	// Hostile run ids and keys.
	hostile := []string{"", "{slot}", "a\x00b", "\r\nFLUSHALL\r\n", "toolmw:dd:", strings.Repeat("x", 1<<20), "\xff\xfe"}
	for i, run := range hostile {
		for j, key := range hostile {
			if _, err := st.Claim(ctx, run, key, claim(10+i, j, 0, time.Second, false)); err != nil {
				t.Fatalf("claim of a hostile key: %v", err)
			}
		}
	}
	keys := r.Client.Keys(ctx, "*").Val()
	if len(keys) != len(hostile)*len(hostile)+1 {
		t.Fatalf("%d keys for %d records", len(keys), len(hostile)*len(hostile)+1)
	}
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, "toolmw:dd:")
		if _, err := hex.DecodeString(rest); !ok || err != nil || len(rest) != 64 {
			t.Fatalf("key %q: want toolmw:dd: and 64 hex digits", k)
		}
	}
	// Each record is its own.
	for i, run := range hostile {
		for j, key := range hostile {
			rec, err := st.Claim(ctx, run, key, claim(99, 99, 0, time.Second, false))
			if err != nil || rec.Op != testOp(10+i) || rec.Args != testArgs(j) {
				t.Fatalf("record %d,%d: %+v, %v", i, j, rec, err)
			}
		}
	}
}

// TestCallRecordsRace: 24 claims of one record at once, from 8 replicas
// each with its own client: one op gets it, and every claim returns that
// op's record.
func TestCallRecordsRace(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	replicas := newReplicas(t, srv, 8)
	ctx := context.Background()
	for round := range 5 {
		key := fmt.Sprintf("race-%d", round)
		recs := make([]dedupe.Record, 24)
		errs := make([]error, 24)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range recs {
			wg.Go(func() {
				<-start
				recs[i], errs[i] = replicas[i%len(replicas)].Store.CallRecords().Claim(ctx, "run", key, claim(i, 1, 0, time.Minute, false))
			})
		}
		close(start)
		wg.Wait()
		winners := map[string]bool{}
		for i, rec := range recs {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			winners[rec.Op] = true
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: claims returned the records of %d ops, want one", round, len(winners))
		}
	}
}

// TestCallRecordsCorrupt: a record on Redis that does not parse — a key of
// another type, a field missing, unknown or too long, a time that is not a
// decimal integer below 2^53, a state other than started and done, an
// outcome over MaxOutcome, an outcome on a started record — makes every
// method return an error wrapping store.ErrCorrupt, and is left as it was.
func TestCallRecordsCorrupt(t *testing.T) {
	noLeaks(t)
	r := newReplica(t, startRedis(t))
	st := r.Store.CallRecords()
	ctx := context.Background()
	const run, key = "run", "call"
	k := recordKey(run, key)
	started := func() error {
		return r.Client.HSet(ctx, k, "s", "s", "op", testOp(1), "a", testArgs(1), "u", "1", "k", "9000000000000000").Err()
	}
	done := func() error {
		return r.Client.HSet(ctx, k, "s", "d", "op", testOp(1), "a", testArgs(1), "u", "1", "k", "9000000000000000", "o", "x").Err()
	}
	corrupt := map[string]func() error{
		"a string":            func() error { return r.Client.Set(ctx, k, "s", 0).Err() },
		"a list":              func() error { return r.Client.RPush(ctx, k, "s").Err() },
		"an empty op":         func() error { _ = started(); return r.Client.HSet(ctx, k, "op", "").Err() },
		"a long op":           func() error { _ = started(); return r.Client.HSet(ctx, k, "op", strings.Repeat("o", 129)).Err() },
		"long args":           func() error { _ = started(); return r.Client.HSet(ctx, k, "a", strings.Repeat("a", 129)).Err() },
		"state x":             func() error { _ = started(); return r.Client.HSet(ctx, k, "s", "x").Err() },
		"state long":          func() error { _ = started(); return r.Client.HSet(ctx, k, "s", "ss").Err() },
		"started, an outcome": func() error { _ = started(); return r.Client.HSet(ctx, k, "o", "x").Err() },
		"started, an extra":   func() error { _ = started(); return r.Client.HSet(ctx, k, "zz", "x").Err() },
		"done, no outcome":    func() error { _ = done(); return r.Client.HDel(ctx, k, "o").Err() },
		"done, an extra":      func() error { _ = done(); return r.Client.HSet(ctx, k, "zz", "x").Err() },
		"done, outcome too big": func() error {
			_ = done()
			return r.Client.HSet(ctx, k, "o", strings.Repeat("o", dedupe.MaxOutcome+1)).Err()
		},
		"no state": func() error { _ = started(); return r.Client.HDel(ctx, k, "s").Err() },
	}
	for _, field := range []string{"op", "a", "u", "k"} {
		corrupt["no "+field] = func() error { _ = started(); return r.Client.HDel(ctx, k, field).Err() }
	}
	for _, field := range []string{"u", "k"} {
		for _, v := range corruptions {
			corrupt[fmt.Sprintf("%s=%q", field, v)] = func() error { _ = started(); return r.Client.HSet(ctx, k, field, v).Err() }
		}
	}
	for name, write := range corrupt {
		t.Run(name, func(t *testing.T) {
			r.Client.Del(ctx, k)
			if err := write(); err != nil {
				t.Fatal(err)
			}
			dump := r.Client.Dump(ctx, k).Val()
			ops := map[string]func() error{
				"claim": func() error {
					_, err := st.Claim(ctx, run, key, claim(1, 1, 0, time.Second, true))
					return err
				},
				"renew":   func() error { return st.Renew(ctx, run, key, testOp(1), at(time.Second), at(0), time.Hour) },
				"finish":  func() error { return st.Finish(ctx, run, key, testOp(1), []byte("y"), at(0), time.Hour) },
				"release": func() error { return st.Release(ctx, run, key, testOp(1)) },
			}
			for op, f := range ops {
				if err := f(); !errors.Is(err, store.ErrCorrupt) {
					t.Errorf("%s of a corrupt record: %v, want store.ErrCorrupt", op, err)
				}
			}
			if got := r.Client.Dump(ctx, k).Val(); got != dump {
				t.Error("the corrupt record was changed")
			}
		})
	}
	// And the record well formed, for contrast: it parses.
	r.Client.Del(ctx, k)
	if err := done(); err != nil {
		t.Fatal(err)
	}
	if rec, err := st.Claim(ctx, run, key, claim(2, 1, 0, time.Second, false)); err != nil || !rec.Done || string(rec.Outcome) != "x" {
		t.Fatalf("a well-formed record written by hand: %+v, %v", rec, err)
	}
}
