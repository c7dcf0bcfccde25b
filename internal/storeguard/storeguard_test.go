package storeguard_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/storeguard"
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

// After runs even when the call's context has ended, bounded by the
// timeout, and a failure is reported and rests the store.
func TestAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reports []report
		g := &storeguard.Guard{Layer: "spend", Timeout: 50 * time.Millisecond, Resting: errResting,
			OnError: func(op string, err error) { reports = append(reports, report{op, err}) }}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ran := false
		g.After(ctx, "settle", func(ctx context.Context) error {
			ran = ctx.Err() == nil
			return nil
		})
		if !ran || len(reports) != 0 {
			t.Fatalf("After with an ended context: ran %v, reports %v; want it run, nothing reported", ran, reports)
		}
		start := time.Now()
		g.After(ctx, "settle", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		if took := time.Since(start); took != 50*time.Millisecond {
			t.Errorf("a hanging settle took %v, want the timeout", took)
		}
		if len(reports) != 1 || reports[0].op != "settle" || !errors.Is(reports[0].err, context.DeadlineExceeded) {
			t.Errorf("reports %v, want one settle with DeadlineExceeded", reports)
		}
		reports = nil
		if local, _, _, _ := ask(context.Background(), g, &reports, func(context.Context) error { return nil }); !local {
			t.Error("the store was asked right after a failed settle; it should rest")
		}
	})
}
