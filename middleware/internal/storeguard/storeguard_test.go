package storeguard_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/storeguard"
)

var (
	errDown    = errors.New("dial tcp 10.0.0.7:6379: connection refused")
	errResting = errors.New("resting")
)

type report struct {
	op  string
	err error
}

// ask runs one Ask inside a wrapped call, with f as the store, and returns
// what Ask returned, what the guard reported and the call's degraded mark.
func ask(ctx context.Context, g *storeguard.Guard, reports *[]report, f func(context.Context) error) (local bool, got []report, degraded string, end error) {
	*reports = (*reports)[:0]
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		local, end = g.Ask(ctx, "take", f)
		return toolmw.Result{}, nil
	}, func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			res, err := next(ctx, args)
			c, _ := toolmw.CallFrom(ctx)
			degraded = c.Degraded
			return res, err
		}
	})
	_, _ = tool(ctx, nil)
	return local, append([]report(nil), *reports...), degraded, end
}

func TestAsk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reports []report
		g := &storeguard.Guard{Layer: "runlimit", Timeout: 50 * time.Millisecond, Resting: errResting,
			OnError: func(op string, err error) { reports = append(reports, report{op, err}) }}
		answers := func(context.Context) error { return nil }
		fails := func(context.Context) error { return errDown }
		hangs := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
		bg := context.Background()

		check := func(name string, ctx context.Context, f func(context.Context) error, wantLocal bool, wantEnd error, wantReport error, wantTook time.Duration) {
			t.Helper()
			start := time.Now()
			local, got, degraded, end := ask(ctx, g, &reports, f)
			if local != wantLocal || !errors.Is(end, wantEnd) || wantEnd == nil && end != nil {
				t.Errorf("%s: Ask = %v, %v; want %v, %v", name, local, end, wantLocal, wantEnd)
			}
			switch {
			case wantReport == nil && len(got) != 0:
				t.Errorf("%s: reported %v, want nothing", name, got)
			case wantReport != nil && (len(got) != 1 || got[0].op != "take" || !errors.Is(got[0].err, wantReport)):
				t.Errorf("%s: reported %v, want one take with %v", name, got, wantReport)
			}
			if want := map[bool]string{true: "runlimit"}[wantLocal]; degraded != want {
				t.Errorf("%s: degraded %q, want %q", name, degraded, want)
			}
			if took := time.Since(start); took != wantTook {
				t.Errorf("%s: took %v, want %v", name, took, wantTook)
			}
		}

		check("answered", bg, answers, false, nil, nil, 0)
		check("hangs: local after the timeout", bg, hangs, true, nil, context.DeadlineExceeded, 50*time.Millisecond)
		check("resting", bg, answers, true, nil, errResting, 0)
		time.Sleep(storeguard.Rest - time.Nanosecond) // the rest began when the timeout ended
		check("still resting", bg, answers, true, nil, errResting, 0)
		time.Sleep(time.Nanosecond)
		check("rest over: fails", bg, fails, true, nil, errDown, 0)
		time.Sleep(storeguard.Rest)

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
		g := &storeguard.Guard{Layer: "spend", Timeout: 50 * time.Millisecond, Resting: errResting,
			OnError: func(op string, err error) { mu.Lock(); reports = append(reports, report{op, err}); mu.Unlock() }}
		taken := func() []report { mu.Lock(); defer mu.Unlock(); r := reports; reports = nil; return r }
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ran := false
		g.Eventually(ctx, "settle", func(ctx context.Context) error {
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
		g.Eventually(ctx, "settle", op)
		if took := time.Since(start); took != 50*time.Millisecond {
			t.Errorf("a hanging settle took %v, want the timeout", took)
		}
		if r := taken(); len(r) != 1 || r[0].op != "settle" || !errors.Is(r[0].err, context.DeadlineExceeded) {
			t.Errorf("reports %v, want one settle with DeadlineExceeded", r)
		}
		var local bool
		if local, _, _, _ = ask(context.Background(), g, &[]report{}, func(context.Context) error { return nil }); !local {
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
		g.Eventually(ctx, "settle", func(context.Context) error { return errDown })
		time.Sleep(storeguard.GiveUp + time.Second)
		r := taken()
		if g.Pending() != 0 || len(r) == 0 || !errors.Is(r[len(r)-1].err, storeguard.ErrDropped) {
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
		for range storeguard.MaxPending + 3 {
			g.Eventually(ctx, "settle", failFast)
		}
		if n := g.Pending(); n != storeguard.MaxPending {
			t.Errorf("%d pending, want MaxPending", n)
		}
		dropped := 0
		for _, r := range taken() {
			if errors.Is(r.err, storeguard.ErrDropped) {
				dropped++
			}
		}
		if dropped != 3 {
			t.Errorf("%d reported dropped, want 3", dropped)
		}
		down.Store(false)
		time.Sleep(time.Second)
		if g.Pending() != 0 || landed.Load() != storeguard.MaxPending {
			t.Errorf("once the store is back: %d pending, %d landed; want 0, MaxPending", g.Pending(), landed.Load())
		}
		taken()

		// A failure of part of the store does not rest it.
		if local, _, _, _ = ask(context.Background(), g, &[]report{}, func(context.Context) error { return partialErr{} }); !local {
			t.Error("a partial failure: not decided locally")
		}
		if local, _, _, _ = ask(context.Background(), g, &[]report{}, func(context.Context) error { return nil }); local {
			t.Error("after a partial failure the store rests; it should not")
		}
	})
}

// partialErr is a failure of one node of a store.
type partialErr struct{}

func (partialErr) Error() string       { return "node 10.0.0.8:6379 rests" }
func (partialErr) PartialOutage() bool { return true }
