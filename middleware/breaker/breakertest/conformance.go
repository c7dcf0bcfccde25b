package breakertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw/middleware/breaker"
)

// racers is how many goroutines race for one probe lease.
const racers = 50

// openFor is the open period of the checks: long enough for an operation
// on a loaded machine to end well within it, short enough to wait out.
const openFor = 200 * time.Millisecond

// TestStore runs the conformance checks against stores made by newStore, one
// fresh store per check; newStore may call t.Cleanup to close it. advance
// lets the store's clock move by d: a fake clock's Advance, or time.Sleep
// for a store on a real clock (Redis's).
//
// It checks that a missing key is closed; that faults count up to the
// threshold and open the breaker only with Trip, and a success clears them;
// that an open breaker refuses the lease until its open period ends, then
// gives it to exactly one of 50 racing callers; that a probe's success
// closes the breaker (after Probes of them), its fault opens it again, its
// neutral outcome frees the lease; that a stale probe or a closed call's
// late report changes nothing; that a lease frees itself when its TTL
// passes; and that hostile keys (long, binary, look-alike) are kept apart.
// Stored state that does not parse (an error wrapping store.ErrCorrupt) is
// not checked: only a writer outside the Store API can leave it, so a
// Store's own tests plant it (as adapters/redisstate does).
func TestStore(t *testing.T, newStore func(t *testing.T) breaker.Store, advance func(d time.Duration)) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s breaker.Store, advance func(time.Duration))
	}{
		{"MissingIsClosed", testMissing},
		{"FaultsOpen", testFaultsOpen},
		{"NoTripNoOpen", testNoTrip},
		{"SuccessClears", testSuccessClears},
		{"OneProbe", testOneProbe},
		{"ProbeOutcomes", testProbeOutcomes},
		{"StaleReports", testStale},
		{"LeaseExpires", testLeaseExpires},
		{"HostileKeys", testHostileKeys},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore(t), advance) })
	}
}

func rule(out breaker.CallOutcome) breaker.Report {
	return breaker.Report{Outcome: out, Trip: true, Failures: 3, OpenFor: openFor, Probes: 1}
}

func report(t *testing.T, s breaker.Store, key string, r breaker.Report) breaker.Snapshot {
	t.Helper()
	snap, err := s.Report(context.Background(), key, r)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func load(t *testing.T, s breaker.Store, key string) breaker.Snapshot {
	t.Helper()
	snap, err := s.Load(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func want(t *testing.T, what string, got breaker.Snapshot, state breaker.State, failures uint32) {
	t.Helper()
	if got.State != state || got.Failures != failures {
		t.Fatalf("%s: got %v with %d failures, want %v with %d", what, got.State, got.Failures, state, failures)
	}
}

// trip opens key's breaker.
func trip(t *testing.T, s breaker.Store, key string) breaker.Snapshot {
	t.Helper()
	var snap breaker.Snapshot
	for range 3 {
		snap = report(t, s, key, rule(breaker.OutcomeFault))
	}
	want(t, "after 3 faults", snap, breaker.StateOpen, 0)
	return snap
}

func testMissing(t *testing.T, s breaker.Store, _ func(time.Duration)) {
	ctx := context.Background()
	want(t, "Load", load(t, s, "search"), breaker.StateClosed, 0)
	snap, ok, err := s.Acquire(ctx, "search", breaker.Lease{Token: "a", TTL: time.Second})
	if err != nil || ok {
		t.Fatalf("Acquire of a closed breaker: %v, %v; want no lease", ok, err)
	}
	want(t, "Acquire", snap, breaker.StateClosed, 0)
}

func testFaultsOpen(t *testing.T, s breaker.Store, _ func(time.Duration)) {
	ctx := context.Background()
	want(t, "1 fault", report(t, s, "k", rule(breaker.OutcomeFault)), breaker.StateClosed, 1)
	want(t, "2 faults", report(t, s, "k", rule(breaker.OutcomeFault)), breaker.StateClosed, 2)
	snap := report(t, s, "k", rule(breaker.OutcomeFault))
	want(t, "3 faults", snap, breaker.StateOpen, 0)
	if snap.OpenFor <= 0 || snap.OpenFor > openFor {
		t.Fatalf("OpenFor = %v, want in (0, %v]", snap.OpenFor, openFor)
	}
	want(t, "Load", load(t, s, "k"), breaker.StateOpen, 0)
	snap, ok, err := s.Acquire(ctx, "k", breaker.Lease{Token: "a", TTL: time.Second})
	if err != nil || ok || snap.State != breaker.StateOpen {
		t.Fatalf("Acquire within the open period: %+v, %v, %v; want open, no lease", snap, ok, err)
	}
}

func testNoTrip(t *testing.T, s breaker.Store, _ func(time.Duration)) {
	r := rule(breaker.OutcomeFault)
	r.Trip = false
	for i := range 5 {
		want(t, "faults without Trip", report(t, s, "k", r), breaker.StateClosed, uint32(i+1))
	}
	want(t, "a fault with Trip", report(t, s, "k", rule(breaker.OutcomeFault)), breaker.StateOpen, 0)
}

func testSuccessClears(t *testing.T, s breaker.Store, _ func(time.Duration)) {
	report(t, s, "k", rule(breaker.OutcomeFault))
	report(t, s, "k", rule(breaker.OutcomeFault))
	want(t, "a success", report(t, s, "k", rule(breaker.OutcomeSuccess)), breaker.StateClosed, 0)
	want(t, "a fault", report(t, s, "k", rule(breaker.OutcomeFault)), breaker.StateClosed, 1)
	want(t, "a neutral outcome", report(t, s, "k", rule(breaker.OutcomeNeutral)), breaker.StateClosed, 1)
}

func testOneProbe(t *testing.T, s breaker.Store, advance func(time.Duration)) {
	ctx := context.Background()
	trip(t, s, "k")
	advance(openFor + openFor/4)
	var granted atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, racers)
	for i := range racers {
		wg.Go(func() {
			_, ok, err := s.Acquire(ctx, "k", breaker.Lease{Token: fmt.Sprint("probe-", i), TTL: time.Minute})
			if err != nil {
				errs <- err
			}
			if ok {
				granted.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := granted.Load(); n != 1 {
		t.Fatalf("%d of %d racers got the probe lease, want exactly 1", n, racers)
	}
	snap := load(t, s, "k")
	if snap.State != breaker.StateHalfOpen || !snap.Probing {
		t.Fatalf("after the lease: %+v, want half-open, probing", snap)
	}
}

func testProbeOutcomes(t *testing.T, s breaker.Store, advance func(time.Duration)) {
	ctx := context.Background()
	acquire := func(token string) {
		t.Helper()
		snap, ok, err := s.Acquire(ctx, "k", breaker.Lease{Token: token, TTL: time.Minute})
		if err != nil || !ok || snap.State != breaker.StateHalfOpen {
			t.Fatalf("Acquire(%s): %+v, %v, %v; want the lease", token, snap, ok, err)
		}
	}
	probe := func(token string, out breaker.CallOutcome, probes uint32) breaker.Snapshot {
		t.Helper()
		r := rule(out)
		r.Probe, r.Probes = token, probes
		return report(t, s, "k", r)
	}
	trip(t, s, "k")
	advance(openFor + openFor/4)
	acquire("a")
	want(t, "a neutral probe", probe("a", breaker.OutcomeNeutral, 1), breaker.StateHalfOpen, 0)
	acquire("b") // the neutral probe freed the lease
	if snap := probe("b", breaker.OutcomeFault, 1); snap.State != breaker.StateOpen || snap.OpenFor <= 0 {
		t.Fatalf("a failed probe: %+v, want open again", snap)
	}
	advance(openFor + openFor/4)
	acquire("c")
	want(t, "1 of 2 probes", probe("c", breaker.OutcomeSuccess, 2), breaker.StateHalfOpen, 0)
	acquire("d")
	want(t, "2 of 2 probes", probe("d", breaker.OutcomeSuccess, 2), breaker.StateClosed, 0)
	want(t, "Load", load(t, s, "k"), breaker.StateClosed, 0)
}

func testStale(t *testing.T, s breaker.Store, advance func(time.Duration)) {
	ctx := context.Background()
	trip(t, s, "k")
	// A closed call's late report does not touch an open breaker.
	snap := report(t, s, "k", rule(breaker.OutcomeSuccess))
	want(t, "a late success", snap, breaker.StateOpen, 0)
	advance(openFor + openFor/4)
	if _, ok, err := s.Acquire(ctx, "k", breaker.Lease{Token: "mine", TTL: time.Minute}); err != nil || !ok {
		t.Fatalf("Acquire: %v, %v", ok, err)
	}
	r := rule(breaker.OutcomeSuccess)
	r.Probe = "not-mine"
	want(t, "a stale probe", report(t, s, "k", r), breaker.StateHalfOpen, 0)
	want(t, "a closed call's fault", report(t, s, "k", rule(breaker.OutcomeFault)), breaker.StateHalfOpen, 0)
}

func testLeaseExpires(t *testing.T, s breaker.Store, advance func(time.Duration)) {
	ctx := context.Background()
	trip(t, s, "k")
	advance(openFor + openFor/4)
	if _, ok, err := s.Acquire(ctx, "k", breaker.Lease{Token: "dead", TTL: openFor}); err != nil || !ok {
		t.Fatalf("Acquire: %v, %v", ok, err)
	}
	if _, ok, err := s.Acquire(ctx, "k", breaker.Lease{Token: "next", TTL: openFor}); err != nil || ok {
		t.Fatalf("Acquire while the lease is held: %v, %v; want no lease", ok, err)
	}
	advance(openFor + openFor/4) // the holder died: its lease ends
	if _, ok, err := s.Acquire(ctx, "k", breaker.Lease{Token: "next", TTL: openFor}); err != nil || !ok {
		t.Fatalf("Acquire after the lease's TTL: %v, %v; want the lease", ok, err)
	}
	r := rule(breaker.OutcomeSuccess)
	r.Probe = "dead"
	want(t, "the dead probe's late report", report(t, s, "k", r), breaker.StateHalfOpen, 0)
}

func testHostileKeys(t *testing.T, s breaker.Store, _ func(time.Duration)) {
	keys := []string{"", "k", "K", "k ", "k*", "k?", "{k}", "k\x00", "\xff\xfe", "k\r\nFLUSHALL\r\n",
		strings.Repeat("k", 1<<20)}
	for i, key := range keys {
		for range i % 3 {
			report(t, s, key, rule(breaker.OutcomeFault))
		}
	}
	for i, key := range keys {
		want(t, fmt.Sprintf("key %d", i), load(t, s, key), breaker.StateClosed, uint32(i%3))
	}
}
