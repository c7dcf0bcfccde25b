package redisstate_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// outageFleet is, per replica, a tool declared Once (runlimit) and a tool
// costing 0.4 (spend), each on its replica's own Store, with the fault
// tests' store timeout.
type outageFleet struct {
	once, pay []toolmw.Tool
	onceRuns  *counted
	payRuns   *counted
}

func newOutageFleet(t *testing.T, replicas []*replica, failClosed bool) *outageFleet {
	t.Helper()
	f := &outageFleet{onceRuns: &counted{}, payRuns: &counted{}}
	for _, r := range replicas {
		lo := []runlimit.Option{runlimit.Once("cancel_booking"), runlimit.WithStore(r.Store.RunCalls(), store.WithTimeout(storeTimeout))}
		so := []spend.Option{spend.Fixed("pay", 0.4), spend.WithStore(r.Store.Spend(), store.WithTimeout(storeTimeout))}
		if failClosed {
			lo = append(lo, runlimit.WithFailClosed())
			so = append(so, spend.WithFailClosed())
		}
		f.once = append(f.once, mustWrap(t, "cancel_booking", f.onceRuns.tool, runlimit.New(lo...)))
		f.pay = append(f.pay, mustWrap(t, "pay", f.payRuns.tool, spend.New(so...)))
	}
	return f
}

// settled calls tool until its error is not a refusal for want of the
// Store, at most 20 times, a rest apart: on a loaded machine a store
// timeout may pass before an answer, and with WithFailClosed the call is
// then refused, and so are the calls of the rest that follows. The
// limits' own refusals are final (runlimit) or carry the run's spend
// (spend); a refusal for want of the Store is neither.
func settled(tool toolmw.Tool, ctx func() context.Context) error {
	var err error
	for range 20 {
		_, err = tool(ctx(), nil)
		var te *taxonomy.ToolError
		if !errors.As(err, &te) || te.Final() || te.Spend() != nil {
			return err
		}
		time.Sleep(300 * time.Millisecond) // the layer's rest, 250 ms
	}
	return err
}

// TestLateAnswersLoseNothing: with WithFailClosed, calls made while Redis
// is stalled are refused after the store timeout, and Redis runs their
// scripts when it resumes, after the callers gave up. Those late Takes and
// Reserves must not keep a slot or a hold that no execution used: once the
// layers have settled them, the run's Once tool runs once and the run
// spends its limit (two calls of 0.4 under 1). Before operation ids, every
// later call of the run was refused run_call_limit with 0 executions, and
// the late reservations stayed held for the run's TTL.
func TestLateAnswersLoseNothing(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	replicas := newReplicas(t, srv, 2)
	f := newOutageFleet(t, replicas, true)
	// Warm every replica's connections and load the scripts: a call made
	// while Redis is stalled then sends its script on an open connection,
	// and Redis runs it when it resumes (a new connection would wait for
	// its handshake, and a script not loaded would be refused).
	for i := range f.once {
		warm(t, func(try int) error {
			_, err := f.once[i](inRun(fmt.Sprintf("warm-%d-%d", i, try)), nil)
			return err
		})
		warm(t, func(try int) error {
			_, err := f.pay[i](spendRun(fmt.Sprintf("warm-%d-%d", i, try), 1), nil)
			return err
		})
	}
	warmRuns, warmPaid := f.onceRuns.runs(), f.payRuns.runs()
	resume := srv.Stall()
	// The Once calls on replica 0 and the costed ones on replica 1: the
	// first of each goes out on its replica's open connection (a call that
	// times out closes it, and a new one would wait for its handshake).
	for range 3 {
		if _, err := f.once[0](inRun("run-late"), nil); !callLimited(err) {
			t.Errorf("a Once call while Redis is stalled: %v, want refused", err)
		}
		if _, err := f.pay[1](spendRun("run-late", 1), nil); !spendLimited(err) {
			t.Errorf("a costed call while Redis is stalled: %v, want refused", err)
		}
	}
	if err := resume(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calls, sp := "toolmw:calls:"+hashed("run-late"), "toolmw:spend:"+hashed("run-late")
	// Redis ran the late scripts as it resumed; the layers settle them
	// after their rest. Wait for the count and the hold to come back.
	var count, held string
	for deadline := time.Now().Add(recoverWithin); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		count = replicas[0].Client.HGet(ctx, calls, hashed("cancel_booking")).Val()
		held = replicas[0].Client.HGet(ctx, sp, "held").Val()
		if (count == "" || count == "0") && (held == "" || held == "0") {
			break
		}
	}
	if count != "" && count != "0" || held != "" && held != "0" {
		t.Fatalf("after the stall the run's count is %q and its hold %q, with nothing run: want 0 and 0", count, held)
	}
	for i := range 4 {
		_ = settled(f.once[i%2], func() context.Context { return inRun("run-late") })
		_ = settled(f.pay[i%2], func() context.Context { return spendRun("run-late", 1) })
	}
	if n := f.onceRuns.runs() - warmRuns; n != 1 {
		t.Errorf("the Once tool ran %d times after the stall, want 1", n)
	}
	if n := f.payRuns.runs() - warmPaid; n != 2 {
		t.Errorf("%d calls of 0.4 ran under a limit of 1 after the stall, want 2", n)
	}
}

// TestOutageWrittenBackToRedis: while Redis is down, a replica serving a
// run's calls — each with its own Run and Account, as a server that makes
// them per request does — runs its Once tool once and spends at most the
// limit, on its own count of the run (keyed by run id). Redis then comes
// back empty (a restart without persistence): what ran meanwhile is
// written back, so no replica runs the Once tool of that run again and the
// run's spend in Redis holds what was spent. Before, every call of the
// outage ran (the count was per Run object), and after it the same run ran
// again on every replica.
func TestOutageWrittenBackToRedis(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	replicas := newReplicas(t, srv, 2)
	f := newOutageFleet(t, replicas, false)
	srv.Kill()
	for range 6 {
		_, _ = f.once[0](inRun("run-out"), nil)
		_, _ = f.pay[0](spendRun("run-out", 1), nil)
		time.Sleep(100 * time.Millisecond) // some calls find the store resting, some ask it
	}
	if n := f.onceRuns.runs(); n != 1 {
		t.Errorf("during the outage one replica ran the Once tool %d times, want 1", n)
	}
	if n := f.payRuns.runs(); n != 2 {
		t.Errorf("during the outage one replica ran %d calls of 0.4 under a limit of 1, want 2", n)
	}
	srv.Restart()
	ctx := context.Background()
	calls, sp := "toolmw:calls:"+hashed("run-out"), "toolmw:spend:"+hashed("run-out")
	var count, spent string
	for deadline := time.Now().Add(recoverWithin); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		count = replicas[1].Client.HGet(ctx, calls, hashed("cancel_booking")).Val()
		spent = replicas[1].Client.HGet(ctx, sp, "spent").Val()
		if count == "1" && spent == "800000000" {
			break
		}
	}
	if count != "1" || spent != "800000000" {
		t.Fatalf("after the outage Redis counts %q calls and %q spent, want the 1 call and the 0.8 that ran", count, spent)
	}
	for i := range 4 {
		_ = settled(f.once[i%2], func() context.Context { return inRun("run-out") })
		_ = settled(f.pay[i%2], func() context.Context { return spendRun("run-out", 1) })
	}
	if n := f.onceRuns.runs(); n != 1 {
		t.Errorf("the Once tool ran %d times in all, want 1", n)
	}
	if n := f.payRuns.runs(); n != 2 {
		t.Errorf("%d calls of 0.4 ran in all under a limit of 1, want 2", n)
	}
}
