package approval_test

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// published returns the value of instrument i for tool (and detail) in
// state.Default.
func published(i state.Instrument, tool, detail string) (float64, bool) {
	for _, s := range state.Default.Collect() {
		if s.Instrument == i && s.Name == tool && s.Detail == detail {
			return s.Value, true
		}
	}
	return 0, false
}

// TestStatePendingOutlivesTheDecidingDesk: a request filed through one
// Desk and decided by a Desk made for the decision alone, then collected,
// stays counted as decided: the Desks sharing a MemoryStore count in the
// store.
func TestStatePendingOutlivesTheDecidingDesk(t *testing.T) {
	const tool = "state_pending_outlives"
	clk := clock.NewFake(epoch)
	s := approval.NewMemoryStore()
	opts := []approval.Option{approval.WithStore(s, store.WithTimeout(time.Minute)), approval.WithSealKey(key), approval.WithClock(clk)}
	desk := approval.NewDesk(opts...)
	gated, err := toolmw.Wrap(toolmw.Spec{Name: tool}, new(counter).tool, desk.Middleware(nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = gated(runCtx("call_1"), json.RawMessage(booking))
	id := expect(t, err, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	if v, ok := published(state.ApprovalsPending, tool, ""); !ok || v != 1 {
		t.Fatalf("pending = %v, %v; want 1", v, ok)
	}
	clk.Advance(time.Minute)
	func() {
		reviewer := approval.NewDesk(opts...)
		req, err := reviewer.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if err := reviewer.Deny(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}()
	runtime.GC()
	runtime.GC()
	for _, c := range []struct {
		i      state.Instrument
		detail string
		want   float64
	}{
		{state.ApprovalsPending, "", 0},
		{state.ApprovalVerdicts, "denied", 1},
		{state.ApprovalWait, "denied", 60},
		{state.ApprovalVerdicts, "approved", 0},
	} {
		if v, ok := published(c.i, tool, c.detail); !ok || v != c.want {
			t.Errorf("%v %q = %v, %v; want %v", c.i, c.detail, v, ok, c.want)
		}
	}
	runtime.KeepAlive([]any{gated, desk, s})
}
