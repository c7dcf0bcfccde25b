package runlimit_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/runlimit/runlimittest"
)

// TestLateTakeLosesNoSlot: with WithFailClosed, a call whose Take does not
// answer in time is refused, and the Take, applied by the Store after the
// caller gave up (before or after the layer cancels it), takes no slot:
// once the Store answers again the run's one call runs. Before operation
// ids, every later call was refused run_call_limit with nothing run.
func TestLateTakeLosesNoSlot(t *testing.T) {
	for _, delay := range []time.Duration{0, 10 * time.Millisecond, 2 * time.Second} {
		t.Run(delay.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := &runlimittest.MemStore{}
				ct := &counted{}
				tool := wrap(t, "pay", ct.tool, runlimit.New(runlimit.Once("pay"),
					runlimit.WithStore(st), runlimit.WithFailClosed()))
				st.Late("take", delay)
				for i := range 3 {
					if _, err := tool(named("run-1"), nil); !isCallLimit(err) {
						t.Fatalf("call %d while the store is late: %v, want refused", i, err)
					}
				}
				st.Late("", 0)
				time.Sleep(5 * time.Second)
				if n := st.Count("run-1", "pay"); n != 0 {
					t.Fatalf("the store counts %d calls of a run that ran none", n)
				}
				if _, err := tool(named("run-1"), nil); err != nil || ct.n.Load() != 1 {
					t.Fatalf("once the store answers: ran %d (%v), want the run's one call", ct.n.Load(), err)
				}
				if _, err := tool(named("run-1"), nil); !isCallLimit(err) || ct.n.Load() != 1 {
					t.Fatalf("a second call: ran %d (%v), want refused", ct.n.Load(), err)
				}
			})
		})
	}
}

// TestOutageWrittenBack: calls that ran on a replica's own count while the
// Store was down — each made with a Run of its own, as a server that
// builds one per request does — are written back when it answers again:
// the run's count in the Store holds them once, whether or not the late
// Takes landed too, and no replica runs the Once tool of that run again.
// Before, the replica's count was per Run object (every call of the
// outage ran) and nothing was written back (after the outage, the same
// run ran again on every replica).
func TestOutageWrittenBack(t *testing.T) {
	for _, late := range []bool{false, true} {
		name := "store down"
		if late {
			name = "takes land late"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := &runlimittest.MemStore{}
				ct := &counted{}
				mw := func() runlimit.Option { return runlimit.WithStore(st) }
				a := wrap(t, "pay", ct.tool, runlimit.New(runlimit.Once("pay"), mw()))
				b := wrap(t, "pay", ct.tool, runlimit.New(runlimit.Once("pay"), mw()))
				if late {
					st.Late("take", time.Second)
				} else {
					st.Fail("take", errDown)
					st.Fail("release", errDown)
				}
				for i := range 9 {
					_, _ = a(named("run-1"), nil)
					if i == 4 {
						time.Sleep(time.Second) // past the rest: the store is asked again
					}
				}
				if n := ct.n.Load(); n != 1 {
					t.Fatalf("during the outage one replica ran the Once tool %d times, want 1", n)
				}
				st.Late("", 0)
				st.Fail("take", nil)
				st.Fail("release", nil)
				time.Sleep(5 * time.Second)
				if n := st.Count("run-1", "pay"); n != 1 {
					t.Fatalf("after the outage the store counts %d calls, want the 1 that ran", n)
				}
				for _, tool := range []func() error{
					func() error { _, err := a(named("run-1"), nil); return err },
					func() error { _, err := b(named("run-1"), nil); return err },
				} {
					if err := tool(); !isCallLimit(err) {
						t.Errorf("after the outage: %v, want refused", err)
					}
				}
				if n := ct.n.Load(); n != 1 {
					t.Errorf("%d executions of the run's Once tool, want 1", n)
				}
			})
		})
	}
}
