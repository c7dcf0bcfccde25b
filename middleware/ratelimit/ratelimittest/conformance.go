package ratelimittest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw/middleware/ratelimit"
)

// racers is how many goroutines race on one key.
const racers = 50

// hour is the interval of most checks. A store on a real clock (Redis's)
// lets time pass between two operations; against an hour, what passes
// while a check runs on however loaded a machine is small, so each wait a
// check expects is known within the time the check measured, and no check
// waits for the store's clock.
const hour = time.Hour

// rounding is how much later than exact a store may put a slot: a store
// that keeps time in microseconds rounds a wait up.
const rounding = time.Millisecond

// TestStore runs the conformance checks against stores made by newStore, one
// fresh store per check; newStore may call t.Cleanup to close it.
//
// It checks that a fresh key admits its burst at once, then refuses with
// the time until a slot is free (one interval), and that a refusal takes
// nothing; that a call that may wait is admitted after the wait for the
// slot reserved for it, one interval after the one before, and refused
// when that wait is beyond its MaxWait (an admission never waits beyond
// it); that hostile keys (long, binary, look-alike) do not share a limit;
// and, with 50 goroutines racing on one key, that no two calls are given
// one slot and that no more than the burst plus the elapsed time over the
// interval are admitted. Stored state that does not parse (an error
// wrapping store.ErrCorrupt) is not checked: only a writer outside the
// Store API can leave it, so a Store's own tests plant it (as
// adapters/redisstate does).
//
// The checks do not wait for the store's clock: they measure the time that
// passes on the test's while they run and expect each wait within it. A
// store on a fake clock that never moves passes them as one on a real
// clock does.
func TestStore(t *testing.T, newStore func(t *testing.T) ratelimit.Store) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s ratelimit.Store)
	}{
		{"Burst", testBurst},
		{"RefusalTakesNothing", testRefusal},
		{"ReservedWaits", testReserved},
		{"NeverBeyondMaxWait", testMaxWait},
		{"HostileKeys", testHostileKeys},
		{"ConcurrentSlots", testConcurrentSlots},
		{"ConcurrentRate", testConcurrentRate},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore(t)) })
	}
}

// admit asks s for one call and fails the test on an error or on an
// admission beyond the request's MaxWait.
func admit(t *testing.T, s ratelimit.Store, r ratelimit.Request) ratelimit.Decision {
	t.Helper()
	d, err := s.Admit(context.Background(), r)
	if err != nil {
		t.Fatalf("Admit(%.40q): %v", r.Key, err)
	}
	if d.Wait < 0 || d.Allowed && d.Wait > r.MaxWait {
		t.Fatalf("Admit(%.40q, MaxWait %v) = %+v: a wait must be within [0, MaxWait]", r.Key, r.MaxWait, d)
	}
	return d
}

// within fails the test unless got is in [want-elapsed, want+rounding]:
// the wait a store on any clock gives when elapsed passed on the test's.
func within(t *testing.T, what string, got, want, elapsed time.Duration) {
	t.Helper()
	if got < want-elapsed || got > want+rounding {
		t.Fatalf("%s: wait %v, want %v (less at most the %v that passed)", what, got, want, elapsed)
	}
}

func testBurst(t *testing.T, s ratelimit.Store) {
	for _, burst := range []int{1, 3, 10} {
		key := fmt.Sprint("burst-", burst)
		r := ratelimit.Request{Key: key, Interval: hour, Burst: burst}
		start := time.Now()
		for i := range burst {
			if d := admit(t, s, r); !d.Allowed || d.Wait != 0 {
				t.Fatalf("burst %d, call %d: %+v, want admitted at once", burst, i+1, d)
			}
		}
		d := admit(t, s, r)
		if d.Allowed {
			t.Fatalf("burst %d, call %d: admitted past the burst", burst, burst+1)
		}
		within(t, fmt.Sprintf("burst %d, the refusal", burst), d.Wait, hour, time.Since(start))
	}
}

func testRefusal(t *testing.T, s ratelimit.Store) {
	r := ratelimit.Request{Key: "k", Interval: hour, Burst: 2}
	start := time.Now()
	admit(t, s, r)
	admit(t, s, r)
	for i := range 20 {
		d := admit(t, s, r)
		if d.Allowed {
			t.Fatalf("refusal %d: admitted", i+1)
		}
		within(t, fmt.Sprintf("refusal %d", i+1), d.Wait, hour, time.Since(start))
	}
	// The refusals reserved nothing: a call that may wait gets the first
	// slot after the burst.
	r.MaxWait = 10 * hour
	d := admit(t, s, r)
	if !d.Allowed {
		t.Fatalf("a call that may wait 10 intervals: %+v, want admitted", d)
	}
	within(t, "after the refusals", d.Wait, hour, time.Since(start))
}

func testReserved(t *testing.T, s ratelimit.Store) {
	r := ratelimit.Request{Key: "k", Interval: time.Minute, Burst: 1, MaxWait: 10 * time.Minute}
	start := time.Now()
	if d := admit(t, s, r); !d.Allowed || d.Wait != 0 {
		t.Fatalf("the first call: %+v, want admitted at once", d)
	}
	for k := 1; k <= 3; k++ {
		d := admit(t, s, r)
		if !d.Allowed {
			t.Fatalf("call %d, which may wait 10 intervals: refused", k+1)
		}
		within(t, fmt.Sprintf("call %d", k+1), d.Wait, time.Duration(k)*time.Minute, time.Since(start))
	}
	// The next slot is 4 intervals away: a call that may wait 2 is refused
	// with the wait, and takes nothing.
	short := r
	short.MaxWait = 2 * time.Minute
	d := admit(t, s, short)
	if d.Allowed {
		t.Fatalf("a call that may wait 2 intervals for a slot 4 away: %+v, want refused", d)
	}
	within(t, "the refusal", d.Wait, 4*time.Minute, time.Since(start))
	if d = admit(t, s, r); !d.Allowed {
		t.Fatalf("a call that may wait 10 intervals after the refusal: %+v, want admitted", d)
	}
	within(t, "after the refusal", d.Wait, 4*time.Minute, time.Since(start))
}

func testMaxWait(t *testing.T, s ratelimit.Store) {
	r := ratelimit.Request{Key: "k", Interval: hour, Burst: 1}
	admit(t, s, r)
	// The next slot is an hour away, less what passed: every MaxWait below
	// half an hour is refused (admit checks that an admission's wait is
	// within its MaxWait), and the refusals take nothing.
	for _, wait := range []time.Duration{0, time.Nanosecond, time.Millisecond, time.Second, time.Minute, hour / 2} {
		r.MaxWait = wait
		if d := admit(t, s, r); d.Allowed {
			t.Fatalf("MaxWait %v: admitted with %v for a slot about an hour away", wait, d.Wait)
		}
	}
}

func testHostileKeys(t *testing.T, s ratelimit.Store) {
	keys := []string{"", "k", "K", "k ", "k*", "k?", "{k}", "k\x00", "\xff\xfe", "k\r\nFLUSHALL\r\n",
		"rl:k", strings.Repeat("k", 1<<20)}
	for i, key := range keys {
		if d := admit(t, s, ratelimit.Request{Key: key, Interval: hour, Burst: 1}); !d.Allowed {
			t.Fatalf("key %d (%.20q): refused its first call: it shares a limit with another key", i, key)
		}
	}
	for i, key := range keys {
		if d := admit(t, s, ratelimit.Request{Key: key, Interval: hour, Burst: 1}); d.Allowed {
			t.Fatalf("key %d (%.20q): admitted a second call within the interval", i, key)
		}
	}
}

// race calls Admit on s from racers goroutines, each calls times, and
// returns the decisions and the time the race took on the test's clock.
func race(t *testing.T, s ratelimit.Store, r ratelimit.Request, calls int) ([]ratelimit.Decision, time.Duration) {
	t.Helper()
	var mu sync.Mutex
	var got []ratelimit.Decision
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range racers {
		wg.Go(func() {
			for range calls {
				d, err := s.Admit(context.Background(), r)
				if err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				mu.Lock()
				got = append(got, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := failed.Load(); err != nil {
		t.Fatalf("Admit during the race: %v", err)
	}
	return got, elapsed
}

func testConcurrentSlots(t *testing.T, s ratelimit.Store) {
	const burst = 3
	r := ratelimit.Request{Key: "k", Interval: hour, Burst: burst, MaxWait: 1000 * hour}
	got, elapsed := race(t, s, r, 1)
	waits := make([]time.Duration, 0, len(got))
	for _, d := range got {
		if !d.Allowed || d.Wait > r.MaxWait {
			t.Fatalf("a call that may wait %v: %+v, want admitted within it", r.MaxWait, d)
		}
		waits = append(waits, d.Wait)
	}
	// The racers were given the burst and then one slot an interval after
	// another: no two the same.
	slices.Sort(waits)
	for k, w := range waits {
		want := time.Duration(max(k+1-burst, 0)) * hour
		within(t, fmt.Sprintf("the %d-th slot of %d racers", k+1, racers), w, want, elapsed)
	}
}

func testConcurrentRate(t *testing.T, s ratelimit.Store) {
	const burst, calls = 5, 20
	for _, interval := range []time.Duration{hour, time.Millisecond} {
		r := ratelimit.Request{Key: fmt.Sprint("rate-", interval), Interval: interval, Burst: burst}
		got, elapsed := race(t, s, r, calls)
		admitted := 0
		for _, d := range got {
			switch {
			case d.Allowed:
				admitted++
			case d.Wait <= 0 || d.Wait > interval+rounding:
				t.Fatalf("interval %v: a refusal with %v until a slot is free, want within (0, %v]", interval, d.Wait, interval)
			}
		}
		// The store's clock may not pass faster than the test's: at most
		// the burst and a slot per interval elapsed (less the rounding of a
		// store in microseconds) are admitted.
		bound := burst + int((elapsed+rounding)/interval)
		if admitted < burst || admitted > bound {
			t.Fatalf("interval %v: %d of %d racing calls admitted in %v, want the burst, %d, and at most %d",
				interval, admitted, racers*calls, elapsed, burst, bound)
		}
	}
}
