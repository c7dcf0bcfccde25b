package breaker_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/taxonomy"
)

// flakyThroughBreaker returns a tool that fails when fail() says so, and a breaker in
// front of it whose state the test can read.
func flakyThroughBreaker(t *testing.T, fail func() bool) (toolmw.Tool, *breaker.Breaker) {
	t.Helper()
	b := breaker.NewBreaker("dep")
	tool := toolmw.MustWrap(toolmw.Spec{Name: "dep"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		if fail() {
			return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down")
		}
		return toolmw.Text("ok"), nil
	}, breaker.New(breaker.WithShared(b)))
	return tool, b
}

func TestRunOfFailuresAmidHealthyCallsDoesNotTrip(t *testing.T) {
	i := 0
	tool, b := flakyThroughBreaker(t, func() bool { i++; return i > 15 && i <= 21 }) // 15 ok, then 6 failures
	for range 21 {
		_, _ = tool(context.Background(), nil)
	}
	if b.State() != breaker.StateClosed {
		t.Fatalf("6 failures after 15 successes opened the breaker (%+v)", b.Counts())
	}
}

func TestDeadDependencyTripsAfterHealthyCalls(t *testing.T) {
	i := 0
	tool, b := flakyThroughBreaker(t, func() bool { i++; return i > 20 }) // 20 ok, then down
	calls := 0
	for b.State() == breaker.StateClosed && calls < 100 {
		_, _ = tool(context.Background(), nil)
		calls++
	}
	// It opens once 15 of the last 20 counted calls failed.
	if b.State() != breaker.StateOpen || calls != 35 {
		t.Fatalf("state %v after %d calls, want open after 35", b.State(), calls)
	}
}

func TestIndependentFaultsDoNotTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 20))
	tool, b := flakyThroughBreaker(t, func() bool { return r.Float64() < 0.2 })
	for i := range 20_000 {
		_, _ = tool(context.Background(), nil)
		if b.State() != breaker.StateClosed {
			t.Fatalf("20%% independent faults opened the breaker after %d calls", i+1)
		}
	}
}
