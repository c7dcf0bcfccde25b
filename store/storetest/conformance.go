package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolmw/toolmw/internal/testrig/kitrig"
	"github.com/toolmw/toolmw/store"
)

// TestResults runs the conformance checks against stores made by
// newStore, one fresh store per check; newStore may call t.Cleanup to
// close it.
//
// It checks the contract of store.Results: a key never set is
// store.ErrNotFound; a value comes back as it was set (empty, binary, of
// store.MaxResultBytes), with its time made to the millisecond, and a
// caller changing the bytes it gave or got changes nothing kept; a value
// made earlier than the one kept does not replace it, one made at the
// same millisecond or later does; a value is forgotten once its time to
// live passes and kept until then; a value over store.MaxResultBytes is
// refused, and what was kept stays; 50 goroutines setting one key with
// values made at different times leave the latest; and hostile keys (long,
// binary, look-alike) are kept apart. A corrupt value (store.ErrCorrupt)
// cannot be made through the Results' API: each store tests it on its
// own.
//
// The time-to-live check sleeps about 50 ms of real time: a store's
// clock is its own.
func TestResults(t *testing.T, newStore func(t *testing.T) store.Results) {
	t.Helper()
	kitrig.Run(t, newStore,
		check{Name: "NotFound", Run: testNotFound},
		check{Name: "RoundTrip", Run: testRoundTrip},
		check{Name: "Copies", Run: testCopies},
		check{Name: "NewerStays", Run: testNewerStays},
		check{Name: "TTL", Run: testTTL},
		check{Name: "TooLarge", Run: testTooLarge},
		check{Name: "SetRace", Run: testSetRace},
		check{Name: "HostileKeys", Run: testHostileKeys},
	)
}

// check is one conformance check.
type check = kitrig.Check[store.Results]

// base is the time values are made at, to the millisecond.
var base = time.UnixMilli(1_800_000_000_123)

func set(t *testing.T, s store.Results, key string, value []byte, made time.Time, ttl time.Duration) {
	t.Helper()
	if err := s.Set(context.Background(), key, value, made, ttl); err != nil {
		t.Fatalf("Set(%.20q, %d bytes, %v, %v): %v", key, len(value), made, ttl, err)
	}
}

// get returns the value kept under key and when it was made, or found
// false for store.ErrNotFound.
func get(t *testing.T, s store.Results, key string) (value []byte, made time.Time, found bool) {
	t.Helper()
	value, made, err := s.Get(context.Background(), key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, time.Time{}, false
	case err != nil:
		t.Fatalf("Get(%.20q): %v", key, err)
	}
	return value, made, true
}

// want checks that key holds value, made at made.
func want(t *testing.T, s store.Results, key string, value []byte, made time.Time) {
	t.Helper()
	got, at, found := get(t, s, key)
	switch {
	case !found:
		t.Errorf("Get(%.20q): not found, want %d bytes", key, len(value))
	case !bytes.Equal(got, value):
		t.Errorf("Get(%.20q): %d bytes %.20q, want %d bytes %.20q", key, len(got), got, len(value), value)
	case !at.Equal(made):
		t.Errorf("Get(%.20q): made %v, want %v", key, at, made)
	}
}

// A key never set is not found.
func testNotFound(t *testing.T, s store.Results) {
	if _, _, found := get(t, s, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"); found {
		t.Error("a key never set: found")
	}
}

// A value comes back as set, empty, binary or of the largest size, with
// its time made to the millisecond.
func testRoundTrip(t *testing.T, s store.Results) {
	large := bytes.Repeat([]byte{0, 0xff, 'x'}, store.MaxResultBytes/3+1)[:store.MaxResultBytes]
	for i, v := range [][]byte{{}, []byte("TMR1\x00\x01"), []byte("\x00\xff\r\n*1\r\n$4\r\nPING\r\n"), large} {
		key := fmt.Sprintf("key-%d", i)
		set(t, s, key, v, base.Add(456*time.Microsecond), time.Hour)
		want(t, s, key, v, base)
	}
	old := time.UnixMilli(-1_000) // before 1970
	set(t, s, "old", []byte("v"), old, time.Hour)
	want(t, s, "old", []byte("v"), old)
}

// The bytes a caller gave or got are its own.
func testCopies(t *testing.T, s store.Results) {
	v := []byte("value")
	set(t, s, "k", v, base, time.Hour)
	v[0] = 'X'
	got, _, _ := get(t, s, "k")
	if len(got) > 0 {
		got[0] = 'Y'
	}
	want(t, s, "k", []byte("value"), base)
}

// A value made earlier does not replace the one kept; one made at the
// same millisecond or later does.
func testNewerStays(t *testing.T, s store.Results) {
	set(t, s, "k", []byte("new"), base, time.Hour)
	set(t, s, "k", []byte("old"), base.Add(-time.Millisecond), time.Hour)
	want(t, s, "k", []byte("new"), base)
	set(t, s, "k", []byte("same"), base.Add(500*time.Microsecond), time.Hour)
	want(t, s, "k", []byte("same"), base)
	set(t, s, "k", []byte("newer"), base.Add(time.Second), time.Hour)
	want(t, s, "k", []byte("newer"), base.Add(time.Second))
}

// A value is forgotten once its time to live passes, and kept until then;
// a value set again lives its new time to live.
func testTTL(t *testing.T, s store.Results) {
	set(t, s, "short", []byte("v"), base, time.Millisecond)
	set(t, s, "sub", []byte("v"), base, time.Microsecond) // counts as a millisecond
	set(t, s, "long", []byte("v"), base, time.Hour)
	set(t, s, "renewed", []byte("v1"), base, time.Millisecond)
	set(t, s, "renewed", []byte("v2"), base, time.Hour)
	time.Sleep(50 * time.Millisecond)
	for _, k := range []string{"short", "sub"} {
		if _, _, found := get(t, s, k); found {
			t.Errorf("%s: found 50ms after its time to live passed", k)
		}
	}
	want(t, s, "long", []byte("v"), base)
	want(t, s, "renewed", []byte("v2"), base)
	// An expired value, however new, is replaced by an older one.
	set(t, s, "short", []byte("older"), base.Add(-time.Hour), time.Hour)
	want(t, s, "short", []byte("older"), base.Add(-time.Hour))
}

// A value over store.MaxResultBytes is refused, and what was kept stays.
func testTooLarge(t *testing.T, s store.Results) {
	set(t, s, "k", []byte("kept"), base, time.Hour)
	err := s.Set(context.Background(), "k", make([]byte, store.MaxResultBytes+1), base.Add(time.Second), time.Hour)
	if err == nil {
		t.Error("Set of a value over MaxResultBytes: nil error")
	}
	want(t, s, "k", []byte("kept"), base)
	if err := s.Set(context.Background(), "other", make([]byte, store.MaxResultBytes+1), base, time.Hour); err == nil {
		t.Error("Set of a value over MaxResultBytes under a new key: nil error")
	}
	if _, _, found := get(t, s, "other"); found {
		t.Error("a value over MaxResultBytes: kept")
	}
}

// 50 goroutines setting one key, each with a value made at its own time,
// leave the latest.
func testSetRace(t *testing.T, s store.Results) {
	kitrig.Race(t, func(i int) (bool, error) {
		return true, s.Set(context.Background(), "k", fmt.Appendf(nil, "v%d", i), base.Add(time.Duration(i)*time.Second), time.Hour)
	})
	last := kitrig.Racers - 1
	want(t, s, "k", fmt.Appendf(nil, "v%d", last), base.Add(time.Duration(last)*time.Second))
}

// Hostile keys — long, binary, look-alike — are kept apart.
func testHostileKeys(t *testing.T, s store.Results) {
	keys := kitrig.Hostile()
	for i, k := range keys {
		set(t, s, k, fmt.Appendf(nil, "%d", i), base, time.Hour)
	}
	for i, k := range keys {
		want(t, s, k, fmt.Appendf(nil, "%d", i), base)
	}
}
