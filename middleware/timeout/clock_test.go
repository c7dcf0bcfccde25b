package timeout_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/timeout"
	"github.com/toolmw/toolmw/taxonomy"
)

// TestDeadlineOnTheFakeClock: with WithClock, the attempt's deadline passes
// when the fake clock reaches it, and not before, whether the tool waits on
// Done or asks Err; the fake time is far from package time, so only the
// fake clock can end the attempt.
func TestDeadlineOnTheFakeClock(t *testing.T) {
	epoch := time.Unix(0, 0)
	for _, opts := range [][]timeout.Option{nil, {timeout.WithAbandon(), timeout.WithOnLate(func(timeout.Late) {})}} {
		t.Run("done", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clk := clock.NewFake(epoch)
				errs := make(chan error, 1)
				tool := wrap(true, cooperative, timeout.New(limit, append(opts, timeout.WithClock(clk))...))
				go func() {
					_, err := tool(context.Background(), nil)
					errs <- err
				}()
				clk.WaitForTimers(1) // the tool waits on Done: the deadline is a fake timer
				clk.Advance(limit - time.Nanosecond)
				synctest.Wait()
				select {
				case err := <-errs:
					t.Fatalf("the attempt ended before the fake deadline: %v", err)
				default:
				}
				clk.Advance(time.Nanosecond)
				if info := taxonomy.InfoOf(<-errs); info.Kind != taxonomy.KindTimeout || info.Code != taxonomy.CodeTimeout {
					t.Fatalf("got %+v, want tool-timeout/timeout", info)
				}
				if n := clk.Timers(); n != 0 {
					t.Fatalf("%d fake timers left", n)
				}
			})
		})
	}
	t.Run("err", func(t *testing.T) {
		clk := clock.NewFake(epoch)
		var before, after error
		var deadline time.Time
		tool := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			deadline, _ = ctx.Deadline()
			clk.Advance(limit - time.Nanosecond)
			before = ctx.Err()
			clk.Advance(time.Nanosecond)
			after = ctx.Err()
			return toolmw.Result{}, after
		}
		_, err := wrap(true, tool, timeout.New(limit, timeout.WithClock(clk)))(context.Background(), nil)
		if !deadline.Equal(epoch.Add(limit)) || before != nil || after != context.DeadlineExceeded {
			t.Fatalf("deadline %v, Err %v then %v; want the fake now+limit, nil then the deadline", deadline, before, after)
		}
		if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeTimeout {
			t.Fatalf("got %+v, want tool-timeout/timeout", info)
		}
	})
	t.Run("returns before the deadline", func(t *testing.T) {
		clk := clock.NewFake(epoch)
		quick := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			_ = ctx.Done() // starts the fake timer
			return toolmw.Text("ok"), nil
		}
		if res, err := wrap(true, quick, timeout.New(limit, timeout.WithClock(clk)))(context.Background(), nil); err != nil || res.Content != "ok" {
			t.Fatalf("got %v, %v", res, err)
		}
		if n := clk.Timers(); n != 0 {
			t.Fatalf("%d fake timers left after the attempt returned, want its timer stopped", n)
		}
	})
}
