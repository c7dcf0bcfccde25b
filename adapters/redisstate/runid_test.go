package redisstate_test

import (
	"context"
	"testing"

	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/store"
)

// TestRunIDNotStorableIsShared: a run id a Redis key could not hold as it is
// ("tenant/42/run-7") is hashed by budget.WithID into one it can, never
// dropped: three replicas, each call with its own Run of that id, run a
// tool declared Once once (two refusals), and the run budget's attempts
// are counted in Redis too.
func TestRunIDNotStorableIsShared(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	replicas := newReplicas(t, srv, 3)
	tool := &counted{}
	fleet := runCallsFleet(t, replicas, tool.tool, runlimit.Once("cancel_booking"), calm, func(e store.Error) {
		t.Errorf("store error: %s: %v", e.Op, e.Err)
	})
	const id = "tenant/42/run-7"
	refused := 0
	for _, replica := range fleet {
		_, err := replica(inRun(id), nil)
		switch {
		case callLimited(err):
			refused++
		case err != nil:
			t.Fatal(err)
		}
	}
	if n := tool.runs(); n != 1 || refused != 2 {
		t.Fatalf("%d executions and %d refusals across three replicas for run id %q, want 1 and 2", n, refused, id)
	}

	taken := 0
	for _, r := range replicas {
		run := budget.NewRun(budget.WithID(id), budget.WithToolMaxAttempts("pay", 1), budget.WithRunStore(r.Store.Runs(), store.WithTimeout(calm),
			store.WithOnError(func(e store.Error) { t.Errorf("run store error: %s: %v", e.Op, e.Err) })))
		if ok, _ := run.TakeContext(context.Background(), "pay"); ok {
			taken++
		}
	}
	if taken != 1 {
		t.Fatalf("%d attempts of a tool capped at one taken across three replicas", taken)
	}
}
