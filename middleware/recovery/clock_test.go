package recovery_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/recovery"
)

// TestClockStampsThePanic: PanicEvent.Time is the layer's clock's now, with
// the tool on the caller's goroutine and with WithGoexit; WithClock(nil)
// stamps with package time.
func TestClockStampsThePanic(t *testing.T) {
	now := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	for _, opts := range [][]recovery.Option{nil, {recovery.WithGoexit()}} {
		clk := clock.NewFake(now)
		var s seen
		tool := recovery.New(append(opts, recovery.WithOnPanic(s.handle), recovery.WithClock(clk))...)(panicking("boom"))
		_, _ = tool(context.Background(), nil)
		clk.Advance(time.Hour)
		_, _ = tool(context.Background(), nil)
		if len(s.events) != 2 || !s.events[0].Time.Equal(now) || !s.events[1].Time.Equal(now.Add(time.Hour)) {
			t.Fatalf("events %+v; want them stamped %v and an hour later", s.events, now)
		}
	}
	var s seen
	before := time.Now()
	_, _ = recovery.New(recovery.WithOnPanic(s.handle), recovery.WithClock(nil))(panicking("boom"))(context.Background(), nil)
	if len(s.events) != 1 || s.events[0].Time.Before(before) {
		t.Fatalf("events %+v; want one stamped by package time", s.events)
	}
}
