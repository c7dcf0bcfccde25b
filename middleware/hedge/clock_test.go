package hedge_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/hedge"
)

// TestClockFiresTheHedge: with WithClock, the hedge starts when the fake
// clock passes the delay, and not before; how late the loser came is read
// on the same clock.
func TestClockFiresTheHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0)) // far from package time: only the fake clock can fire
		release := make(chan struct{})
		lates := make(chan hedge.Late, 1)
		var n atomic.Int64
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			if n.Add(1) == 1 {
				<-release // a slow replica that ignores its context
				return toolmw.Text("answer 1"), nil
			}
			return toolmw.Text("answer 2"), nil
		}, hedge.New(hedge.WithDelay(time.Minute), hedge.WithClock(clk),
			hedge.WithOnLate(func(l hedge.Late) { lates <- l })))

		type answer struct {
			res toolmw.Result
			err error
		}
		answers := make(chan answer, 1)
		go func() {
			res, err := tool(context.Background(), nil)
			answers <- answer{res, err}
		}()
		clk.WaitForTimers(1)
		clk.Advance(time.Minute - time.Nanosecond)
		synctest.Wait()
		if n.Load() != 1 {
			t.Fatalf("%d executions before the fake delay passed, want 1", n.Load())
		}
		select {
		case a := <-answers:
			t.Fatalf("the call returned %v, %v before the hedge", a.res, a.err)
		default:
		}
		clk.Advance(time.Nanosecond)
		if a := <-answers; a.err != nil || a.res.Content != "answer 2" {
			t.Fatalf("got %v, %v; want the hedge's answer", a.res, a.err)
		}
		clk.Advance(3 * time.Second)
		close(release)
		if l := <-lates; l.Result.Content != "answer 1" || l.After != 3*time.Second {
			t.Fatalf("late %+v; want the first answer, 3s late by the fake clock", l)
		}
	})
}

// TestClockMeasuresLatency: the latency the layer learns its delay from is
// read on its clock.
func TestClockMeasuresLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		release := make(chan struct{})
		var n atomic.Int64
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			switch n.Add(1) {
			case 33: // the tail
				select {
				case <-release:
				case <-ctx.Done():
				}
				return toolmw.Result{}, context.Canceled
			case 34: // its hedge
				return toolmw.Text("hedged"), nil
			default: // 100ms by the fake clock
				clk.Advance(100 * time.Millisecond)
				return toolmw.Text("ok"), nil
			}
		}, hedge.New(hedge.WithClock(clk)))
		for range 32 { // learning: no hedge
			if _, err := tool(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan toolmw.Result, 1)
		go func() {
			res, _ := tool(context.Background(), nil)
			done <- res
		}()
		clk.WaitForTimers(1)
		clk.Advance(99 * time.Millisecond)
		synctest.Wait()
		if n.Load() != 33 {
			t.Fatalf("%d executions 99ms into the tail call, want 33: the learnt delay is 100ms", n.Load())
		}
		clk.Advance(time.Millisecond)
		if res := <-done; res.Content != "hedged" {
			t.Fatalf("got %v, want the hedge's answer", res)
		}
		close(release)
	})
}
