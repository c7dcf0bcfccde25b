package storeguard_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/store"
)

var (
	errDown = errors.New("dial tcp 10.0.0.7:6379: connection refused")
)

type report struct {
	op  string
	err error
}

// newGuard returns a guard of layer with a 50 ms timeout that appends
// what it reports to reports.
func newGuard(layer string, mu *sync.Mutex, reports *[]report) *storeguard.Guard {
	return storeguard.New(layer, store.Config{Timeout: 50 * time.Millisecond, OnError: func(e store.Error) {
		mu.Lock()
		defer mu.Unlock()
		if e.Layer != layer {
			panic("reported for layer " + e.Layer)
		}
		*reports = append(*reports, report{e.Op, e.Err})
	}}, false, nil)
}

// ask runs one Ask with f as the store and returns what Ask returned and
// what the guard reported.
func ask(ctx context.Context, g *storeguard.Guard, mu *sync.Mutex, reports *[]report, f func(context.Context) error) (local bool, got []report, end error) {
	mu.Lock()
	*reports = (*reports)[:0]
	mu.Unlock()
	local, end = g.Ask(ctx, "take", "", f)
	mu.Lock()
	defer mu.Unlock()
	return local, append([]report(nil), *reports...), end
}

func TestAsk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var reports []report
		g := newGuard("runlimit", &mu, &reports)
		answers := func(context.Context) error { return nil }
		fails := func(context.Context) error { return errDown }
		hangs := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
		bg := context.Background()

		check := func(name string, ctx context.Context, f func(context.Context) error, wantLocal bool, wantEnd error, wantReport error, wantTook time.Duration) {
			t.Helper()
			start := time.Now()
			local, got, end := ask(ctx, g, &mu, &reports, f)
			if local != wantLocal || !errors.Is(end, wantEnd) || wantEnd == nil && end != nil {
				t.Errorf("%s: Ask = %v, %v; want %v, %v", name, local, end, wantLocal, wantEnd)
			}
			switch {
			case wantReport == nil && len(got) != 0:
				t.Errorf("%s: reported %v, want nothing", name, got)
			case wantReport != nil && (len(got) != 1 || got[0].op != "take" || !errors.Is(got[0].err, wantReport)):
				t.Errorf("%s: reported %v, want one take with %v", name, got, wantReport)
			}
			if took := time.Since(start); took != wantTook {
				t.Errorf("%s: took %v, want %v", name, took, wantTook)
			}
		}

		check("answered", bg, answers, false, nil, nil, 0)
		check("hangs: local after the timeout", bg, hangs, true, nil, context.DeadlineExceeded, 50*time.Millisecond)
		check("resting", bg, answers, true, nil, store.ErrResting, 0)
		time.Sleep(store.Rest - time.Nanosecond) // the rest began when the timeout ended
		check("still resting", bg, answers, true, nil, store.ErrResting, 0)
		time.Sleep(time.Nanosecond)
		check("rest over: fails", bg, fails, true, nil, errDown, 0)
		time.Sleep(store.Rest)

		short, cancel := context.WithTimeout(bg, 10*time.Millisecond)
		check("the caller's deadline first", short, hangs, false, storeguard.ErrDeadline, nil, 10*time.Millisecond)
		cancel()
		gone, cancel := context.WithCancel(bg)
		cancel()
		check("the caller gone", gone, hangs, false, context.Canceled, nil, 0)
		check("not rested by the caller's end", bg, answers, false, nil, nil, 0)
	})
}

// Eventually runs at once, even when the call's context has ended,
// bounded by the timeout; a failure is reported and rests the store, and
// the operation is tried again after each rest, on a timer, until it lands
// or GiveUp passes; past MaxPending the oldest is dropped. A failure of
// part of the store does not rest it.
func TestEventually(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var reports []report
		g := newGuard("spend", &mu, &reports)
		taken := func() []report { mu.Lock(); defer mu.Unlock(); r := reports; reports = nil; return r }
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ran := false
		g.Eventually(ctx, "settle", "", func(ctx context.Context) error {
			ran = ctx.Err() == nil
			return nil
		})
		if r := taken(); !ran || len(r) != 0 || g.Pending() != 0 {
			t.Fatalf("with an ended context: ran %v, reports %v; want it run, nothing reported", ran, r)
		}

		// A hanging store: the first try takes the timeout, and the
		// store rests; the operation lands after the store comes back.
		var down atomic.Bool
		down.Store(true)
		var landed atomic.Int64
		op := func(ctx context.Context) error {
			if down.Load() {
				<-ctx.Done()
				return ctx.Err()
			}
			landed.Add(1)
			return nil
		}
		start := time.Now()
		g.Eventually(ctx, "settle", "", op)
		if took := time.Since(start); took != 50*time.Millisecond {
			t.Errorf("a hanging settle took %v, want the timeout", took)
		}
		if r := taken(); len(r) != 1 || r[0].op != "settle" || !errors.Is(r[0].err, context.DeadlineExceeded) {
			t.Errorf("reports %v, want one settle with DeadlineExceeded", r)
		}
		var local bool
		if local, _, _ = ask(context.Background(), g, &mu, &[]report{}, func(context.Context) error { return nil }); !local {
			t.Error("the store was asked right after a failed settle; it should rest")
		}
		time.Sleep(3 * time.Second)
		if g.Pending() != 1 || landed.Load() != 0 {
			t.Fatalf("while the store is down: %d pending, %d landed; want 1, 0", g.Pending(), landed.Load())
		}
		down.Store(false)
		time.Sleep(time.Second)
		if g.Pending() != 0 || landed.Load() != 1 {
			t.Fatalf("once the store is back: %d pending, %d landed; want 0, 1", g.Pending(), landed.Load())
		}
		taken()

		// A store that never comes back: the operation is given up.
		g.Eventually(ctx, "settle", "", func(context.Context) error { return errDown })
		time.Sleep(store.GiveUp + time.Second)
		r := taken()
		if g.Pending() != 0 || len(r) == 0 || !errors.Is(r[len(r)-1].err, store.ErrDropped) {
			t.Fatalf("after GiveUp: %d pending, last report %v; want 0 and ErrDropped", g.Pending(), r[len(r)-1])
		}

		// A bounded queue: past MaxPending the oldest go.
		time.Sleep(time.Second)
		down.Store(true)
		landed.Store(0)
		failFast := func(context.Context) error {
			if down.Load() {
				return errDown
			}
			landed.Add(1)
			return nil
		}
		for range store.MaxPending + 3 {
			g.Eventually(ctx, "settle", "", failFast)
		}
		if n := g.Pending(); n != store.MaxPending {
			t.Errorf("%d pending, want MaxPending", n)
		}
		dropped := 0
		for _, r := range taken() {
			if errors.Is(r.err, store.ErrDropped) {
				dropped++
			}
		}
		if dropped != 3 {
			t.Errorf("%d reported dropped, want 3", dropped)
		}
		down.Store(false)
		time.Sleep(time.Second)
		if g.Pending() != 0 || landed.Load() != store.MaxPending {
			t.Errorf("once the store is back: %d pending, %d landed; want 0, MaxPending", g.Pending(), landed.Load())
		}
		taken()

		// A failure of part of the store does not rest it.
		if local, _, _ = ask(context.Background(), g, &mu, &[]report{}, func(context.Context) error { return partialErr{} }); !local {
			t.Error("a partial failure: not decided locally")
		}
		if local, _, _ = ask(context.Background(), g, &mu, &[]report{}, func(context.Context) error { return nil }); local {
			t.Error("after a partial failure the store rests; it should not")
		}
	})
}

// partialErr is a failure of one node of a store.
type partialErr struct{}

func (partialErr) Error() string       { return "node 10.0.0.8:6379 rests" }
func (partialErr) PartialOutage() bool { return true }

// A report names the layer, the operation and its key, and says whether
// the call was refused: a guard that fails closed sets Refused.
func TestReportFields(t *testing.T) {
	for _, closed := range []bool{false, true} {
		var got []store.Error
		g := storeguard.New("ratelimit", store.Config{OnError: func(e store.Error) { got = append(got, e) }}, closed, nil)
		if g.Timeout() != store.DefaultTimeout {
			t.Errorf("timeout %v, want the default", g.Timeout())
		}
		local, end := g.Ask(context.Background(), "admit", "search", func(context.Context) error { return errDown })
		want := store.Error{Layer: "ratelimit", Op: "admit", Key: "search", Err: errDown, Refused: closed}
		if !local || end != nil || len(got) != 1 || got[0] != want {
			t.Errorf("failClosed %v: Ask = %v, %v, reported %+v; want true, nil, %+v", closed, local, end, got, want)
		}
		if !errors.Is(got[0], errDown) || got[0].Error() != "ratelimit store admit: "+errDown.Error() {
			t.Errorf("store.Error %q does not unwrap to or name the store's error", got[0].Error())
		}
		// An operation after the call never reports the call refused; a
		// corrupt answer always does.
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			var got []store.Error
			g := storeguard.New("runlimit", store.Config{OnError: func(e store.Error) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, e)
			}}, closed, nil)
			var tries atomic.Int32
			g.Eventually(context.Background(), "release", "", func(context.Context) error {
				if tries.Add(1) == 1 {
					return errDown
				}
				return nil
			})
			g.Corrupt("take", "", store.ErrCorrupt)
			time.Sleep(time.Second) // the release lands after the rest
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 2 || got[0].Refused || !got[1].Refused || g.Pending() != 0 {
				t.Errorf("failClosed %v: Eventually and Corrupt reported %+v; want Refused false, then true", closed, got)
			}
		})
	}
}
