package spend_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/middleware/spend/spendtest"
)

// TestLateReserveHoldsNothing: with WithFailClosed, a call whose Reserve
// does not answer in time is refused, and the Reserve, applied by the
// Store after the caller gave up (before or after the layer settles it),
// leaves nothing held: no phantom hold stays until the run expires, and
// once the Store answers the run spends its whole limit. Before operation
// ids, each late Reserve stayed held for the run's TTL.
func TestLateReserveHoldsNothing(t *testing.T) {
	for _, delay := range []time.Duration{0, 10 * time.Millisecond, 2 * time.Second} {
		t.Run(delay.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := &spendtest.MemStore{}
				ct := &counted{res: toolmw.Text("ok")}
				tool := wrap(t, "pay", ct.tool, spend.New(spend.Fixed("pay", 0.4),
					spend.WithStore(st), spend.WithFailClosed()))
				st.Late("reserve", delay)
				for i := range 3 {
					if _, err := tool(inRun(context.Background(), "run-1", 1), nil); !isSpendLimit(err) {
						t.Fatalf("call %d while the store is late: %v, want refused", i, err)
					}
				}
				st.Late("", 0)
				time.Sleep(5 * time.Second)
				if spent, held := st.State("run-1"); spent != 0 || held != 0 {
					t.Fatalf("the store has spent %d and holds %d of a run that ran nothing", spent, held)
				}
				for range 3 {
					_, _ = tool(inRun(context.Background(), "run-1", 1), nil)
				}
				if n := ct.n.Load(); n != 2 {
					t.Fatalf("once the store answers: %d calls of 0.4 ran within a limit of 1, want 2", n)
				}
			})
		})
	}
}

// TestSpendOutageWrittenBack: calls that ran on a replica's own account
// while the Store was down — each with an Account and a Run of its own, as
// a server that builds them per request does — spend at most the limit on
// that replica, and what they cost is written back when the Store answers
// again, once, whether or not their late Reserves landed too: after the
// outage no replica spends past the limit. Before, the replica's account
// was the request's (every call of the outage ran) and nothing was written
// back.
func TestSpendOutageWrittenBack(t *testing.T) {
	for _, late := range []bool{false, true} {
		name := "store down"
		if late {
			name = "reserves land late"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := &spendtest.MemStore{}
				ct := &counted{res: toolmw.Text("ok")}
				mw := func() toolmw.Middleware { return spend.New(spend.Fixed("pay", 0.4), spend.WithStore(st)) }
				a, b := wrap(t, "pay", ct.tool, mw()), wrap(t, "pay", ct.tool, mw())
				if late {
					st.Late("reserve", time.Second)
				} else {
					st.Fail("reserve", errDown)
					st.Fail("settle", errDown)
				}
				for i := range 9 {
					_, _ = a(inRun(context.Background(), "run-1", 1), nil)
					if i == 4 {
						time.Sleep(time.Second) // past the rest: the store is asked again
					}
				}
				if n := ct.n.Load(); n != 2 {
					t.Fatalf("during the outage one replica ran %d calls of 0.4 within a limit of 1, want 2", n)
				}
				st.Late("", 0)
				st.Fail("reserve", nil)
				st.Fail("settle", nil)
				time.Sleep(5 * time.Second)
				if spent, held := st.State("run-1"); spent != units(0.8) || held != 0 {
					t.Fatalf("after the outage the store has spent %d and holds %d; want %d spent, nothing held", spent, held, units(0.8))
				}
				for _, tool := range []toolmw.Tool{a, b} {
					if _, err := tool(inRun(context.Background(), "run-1", 1), nil); !isSpendLimit(err) {
						t.Errorf("after the outage: %v, want refused", err)
					}
				}
				if n := ct.n.Load(); n != 2 {
					t.Errorf("%d calls ran, want 2", n)
				}
			})
		})
	}
}
