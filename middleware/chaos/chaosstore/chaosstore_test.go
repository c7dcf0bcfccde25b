package chaosstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/budget/budgettest"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/breaker/breakertest"
	"github.com/toolmw/toolmw/middleware/chaos"
	"github.com/toolmw/toolmw/middleware/chaos/chaosstore"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/runlimit/runlimittest"
	"github.com/toolmw/toolmw/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ok(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }

// seen runs tool with ctx and returns the Call as it was after the call.
func seen(t *testing.T, ctx context.Context, tool toolmw.Tool, mws ...toolmw.Middleware) (toolmw.Call, error) {
	t.Helper()
	var c toolmw.Call
	probe := func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			res, err := next(ctx, args)
			c, _ = toolmw.CallFrom(ctx)
			return res, err
		}
	}
	_, err := toolmw.MustWrap(toolmw.Spec{Name: "book"}, tool, append([]toolmw.Middleware{probe}, mws...)...)(ctx, nil)
	return c, err
}

// TestStoreFailure: a store failure injected through the runlimit port
// meets the layer as a real outage does: the call is decided locally and
// marked degraded, the failure is reported with the injected error, and
// the call record names the fault.
func TestStoreFailure(t *testing.T) {
	faults, err := chaos.NewStoreFaults(chaos.WithSeed(1),
		chaos.WithStoreFault(chaos.StoreFailure(nil), 1, "runlimit"))
	if err != nil {
		t.Fatal(err)
	}
	var reported []store.Error
	mem := &runlimittest.MemStore{}
	limit := runlimit.New(runlimit.Once("book"),
		runlimit.WithStore(chaosstore.RunLimit(faults, mem), store.WithOnError(func(e store.Error) { reported = append(reported, e) })))
	ctx := budget.WithRun(context.Background(), budget.WithID("run-1"))

	// Not enabled: the store is used.
	c, err := seen(t, ctx, ok, limit)
	if err != nil || c.Degraded != "" || c.Chaos != "" || mem.Count("run-1", "book") != 1 {
		t.Fatalf("not enabled: err %v, degraded %q, chaos %q, count %d", err, c.Degraded, c.Chaos, mem.Count("run-1", "book"))
	}

	// Enabled for another run: its take fails, as in an outage.
	ctx = chaos.Enable(budget.WithRun(context.Background(), budget.WithID("run-2")))
	c, err = seen(t, ctx, ok, limit)
	if err != nil || c.Degraded != "runlimit" || c.Chaos != "store_failure" {
		t.Errorf("enabled: err %v, degraded %q, chaos %q; want decided locally, runlimit degraded, store_failure", err, c.Degraded, c.Chaos)
	}
	if len(reported) == 0 || !errors.Is(reported[0].Err, syscall.ECONNREFUSED) || reported[0].Layer != "runlimit" {
		t.Errorf("reported %v, want the refused connection of the runlimit store", reported)
	}
	if mem.Count("run-2", "book") != 0 {
		t.Errorf("the failed take changed the store")
	}
}

// TestStoreLatency: a latency past the store's timeout is a store that
// does not answer; the call goes on locally when the timeout passes (fake
// time, testing/synctest).
func TestStoreLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		faults, err := chaos.NewStoreFaults(chaos.WithEnabled(true),
			chaos.WithStoreFault(chaos.Latency(time.Hour), 1, "breaker"))
		if err != nil {
			t.Fatal(err)
		}
		mem := breakertest.NewMemStore(nil)
		br := breaker.New(breaker.WithStore(chaosstore.Breaker(faults, mem), store.WithTimeout(100*time.Millisecond)))
		start := time.Now()
		c, err := seen(t, context.Background(), ok, br)
		if err != nil || c.Degraded != "breaker" || c.Chaos != "store_latency" || time.Since(start) < 100*time.Millisecond || time.Since(start) > time.Second {
			t.Errorf("err %v, degraded %q, chaos %q after %v; want decided locally after the store's timeout", err, c.Degraded, c.Chaos, time.Since(start))
		}
	})
}

// TestStoreRate: the engines' ports, a fault at a rate, and the conformance
// kits through wrappers that inject nothing.
func TestStoreRate(t *testing.T) {
	var injected atomic.Int64
	faults, err := chaos.NewStoreFaults(chaos.WithEnabled(true), chaos.WithSeed(9),
		chaos.WithStoreFault(chaos.StoreFailure(nil), 0.25, "run_budget"),
		chaos.WithOnInject(func(i chaos.Injection) {
			if i.Layer != "run_budget" || i.Op != "take" || i.Fault != "store_failure" {
				t.Errorf("injection %+v", i)
			}
			injected.Add(1)
		}))
	if err != nil {
		t.Fatal(err)
	}
	rs := faults.RunStore(&budgettest.MemRunStore{})
	const ops = 10_000
	for range ops {
		rs.Take(context.Background(), "run", "tool", ops+1)
	}
	if got := float64(injected.Load()) / ops; got < 0.23 || got > 0.27 {
		t.Errorf("%.4f of the operations failed, want 0.25 ± 0.02", got)
	}

	none, err := chaos.NewStoreFaults(chaos.WithEnabled(true), chaos.WithStoreFault(chaos.StoreFailure(nil), 1, "elsewhere"))
	if err != nil {
		t.Fatal(err)
	}
	runlimittest.TestStore(t, func(*testing.T) runlimit.Store { return chaosstore.RunLimit(none, &runlimittest.MemStore{}) })
	budgettest.TestTokenStore(t, func(*testing.T) budget.TokenStore { return none.TokenStore(&budgettest.MemTokenStore{}) })
}
