package spend_test

import (
	"context"
	"encoding/json"
	"math"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/hedge"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/middleware/timeout"
	"github.com/toolmw/toolmw/taxonomy"
)

// TestCostsRoundUp: a cost is rounded up to the billionth the layer
// keeps, never down to nothing: Fixed(4e-10) under a limit of 0 runs no
// call (it used to cost nothing, and 1,000 of 1,000 calls ran), and under
// a limit of one billionth runs one. A limit is rounded down; a metered
// cost read from the result is rounded up as well; an amount written with
// nine decimals or fewer is exact.
func TestCostsRoundUp(t *testing.T) {
	cases := []struct {
		name        string
		limit, cost float64
		runs        int
	}{
		{"tiny cost, limit 0", 0, 4e-10, 0},
		{"tiny cost, limit one billionth", 1e-9, 4e-10, 1},
		{"a billionth and a bit", 1e-8, 1.0000000004, 0},
		{"a cost just above a billionth", 3e-9, 1.5e-9, 1},
		{"a limit below a billionth", 9e-10, 1e-9, 0},
		{"a limit of 1.5 billionths", 1.5e-9, 1e-9, 1},
		{"nine decimals are exact", 1, 0.000000001, 1000},
		{"0.1 ten times is 1", 1, 0.1, 10},
		{"smallest float", 1e-9, 5e-324, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var n atomic.Int64
			tool := wrap(t, "search", func(context.Context, json.RawMessage) (toolmw.Result, error) {
				n.Add(1)
				return toolmw.Text("ok"), nil
			}, spend.New(spend.Fixed("search", c.cost)))
			ctx := spend.ContextWithLimit(context.Background(), c.limit)
			for range 1000 {
				_, _ = tool(ctx, nil)
			}
			if n.Load() != int64(c.runs) {
				t.Fatalf("%d of 1000 calls ran, want %d", n.Load(), c.runs)
			}
		})
	}

	// A metered cost of 4e-10 is charged a billionth.
	tool := wrap(t, "search", ok, spend.New(spend.Metered("search", 1, func(toolmw.Result) float64 { return 4e-10 })))
	ctx := spend.ContextWithLimit(context.Background(), 2)
	for range 3 {
		if _, err := tool(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if acct, _ := spend.AccountFrom(ctx); math.Abs(acct.Spent()-3e-9) > 1e-18 {
		t.Fatalf("three metered calls of 4e-10 spent %v, want 3e-9", acct.Spent())
	}
}

// TestUnknownOutcomeIsSpent: a call whose outcome is unknown is charged,
// never refunded, in whatever order the layers sit: a retry layer inside
// the spend layer that stopped, its budget empty, after a timeout; one
// whose attempts timed out and then failed transiently (the last error
// speaks for the last attempt only); an abandoned execution.
func TestUnknownOutcomeIsSpent(t *testing.T) {
	const per = 10 * time.Millisecond
	slow := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		<-ctx.Done()
		return toolmw.Result{}, ctx.Err()
	}
	slowThenBusy := func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		if c, _ := toolmw.CallFrom(ctx); c.Attempt == 1 {
			return slow(ctx, args)
		}
		return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "busy")
	}
	emptyBudget := func() toolmw.Middleware {
		b := budget.NewRetry(budget.WithReserve(1))
		for b.TryRetry() {
		}
		return retry.New(retry.WithBackoff(time.Millisecond, time.Millisecond), retry.WithBudget(b))
	}
	cases := []struct {
		name string
		tool toolmw.Tool
		mws  func() []toolmw.Middleware
	}{
		{"retry budget empty after a timeout", slow, func() []toolmw.Middleware { return []toolmw.Middleware{emptyBudget(), timeout.New(per)} }},
		{"timeout then transient", slowThenBusy, func() []toolmw.Middleware {
			return []toolmw.Middleware{retry.New(retry.WithMaxAttempts(2), retry.WithBackoff(time.Millisecond, time.Millisecond), retry.WithoutBudget()), timeout.New(per)}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mws := append([]toolmw.Middleware{spend.New(spend.Fixed("pay", 0.5))}, c.mws()...)
				tool, err := toolmw.Wrap(toolmw.Spec{Name: "pay", HonoursKeys: true}, c.tool, mws...)
				if err != nil {
					t.Fatal(err)
				}
				ctx := spend.ContextWithLimit(context.Background(), 1)
				_, err = tool(ctx, nil)
				acct, _ := spend.AccountFrom(ctx)
				if acct.Spent() != 0.5 || acct.Held() != 0 {
					t.Fatalf("%v: spent %v held %v, want the call's cost spent", err, acct.Spent(), acct.Held())
				}
			})
		})
	}
}

// TestHedgeInsideSpendsOnce: retry, then spend, then hedge (what the docs
// once advised) with a limit of one call's cost: the call is one
// execution on its one reservation, however slow; it used to be hedged,
// two executions on one reservation.
func TestHedgeInsideSpendsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int64
		slow := func(context.Context, json.RawMessage) (toolmw.Result, error) {
			n.Add(1)
			time.Sleep(50 * time.Millisecond)
			return toolmw.Text("ok"), nil
		}
		tool, err := toolmw.Wrap(toolmw.Spec{Name: "search", Idempotent: true}, slow,
			retry.New(retry.WithoutBudget()), spend.New(spend.Fixed("search", 1)), hedge.New(hedge.WithDelay(time.Millisecond)))
		if err != nil {
			t.Fatal(err)
		}
		ctx := spend.ContextWithLimit(context.Background(), 1)
		for i := range 2 {
			_, err := tool(ctx, nil)
			if (i == 0) != (err == nil) {
				t.Fatalf("call %d: %v", i+1, err)
			}
		}
		synctest.Wait()
		if n.Load() != 1 {
			t.Fatalf("%d executions under a limit of one call's cost", n.Load())
		}
	})
}
