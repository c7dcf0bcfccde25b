package runlimit_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/hedge"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/timeout"
	"github.com/toolmw/toolmw/taxonomy"
)

// payments is a payment tool that honours idempotency keys: it records
// the key of every execution, then behaves as behave says.
type payments struct {
	mu     sync.Mutex
	keys   map[string]int // idempotency key → executions
	behave func(ctx context.Context, attempt int) (toolmw.Result, error)
}

func (p *payments) tool(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	call, _ := toolmw.CallFrom(ctx)
	p.mu.Lock()
	p.keys[call.Key()]++
	p.mu.Unlock()
	return p.behave(ctx, call.Attempt)
}

// payments returns how many distinct payments (keys) were executed.
func (p *payments) payments() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.keys)
}

// TestUnknownOutcomeKeepsTheSlot: runlimit.Once on a payment tool that
// honours idempotency keys, whose calls end in an unknown outcome — a
// timeout (the tool honours its context, or it is abandoned and goes on),
// a timeout followed by a transient failure on the retry, a retry budget
// that ran out after a timeout — keeps its slot: the model's next calls,
// with new call ids and so new keys, are refused, and one payment at most
// went out. (The slot used to be given back, because a timeout of a
// key-honouring call is retryable: three payments under three keys.)
func TestUnknownOutcomeKeepsTheSlot(t *testing.T) {
	const per = 10 * time.Millisecond
	slow := func(ctx context.Context, _ int) (toolmw.Result, error) {
		<-ctx.Done()
		return toolmw.Result{}, ctx.Err()
	}
	ignoring := func(ctx context.Context, _ int) (toolmw.Result, error) {
		time.Sleep(3 * per) // ignores its context: abandoned, lands later
		return toolmw.Text("paid"), nil
	}
	slowThenBusy := func(ctx context.Context, attempt int) (toolmw.Result, error) {
		if attempt == 1 {
			return slow(ctx, attempt)
		}
		return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "busy")
	}
	retries := func() toolmw.Middleware {
		return retry.New(retry.WithMaxAttempts(3), retry.WithBackoff(time.Millisecond, time.Millisecond), retry.WithoutBudget())
	}
	emptyBudget := func() toolmw.Middleware {
		b := budget.NewRetry(budget.WithReserve(1))
		for b.TryRetry() {
		}
		return retry.New(retry.WithMaxAttempts(3), retry.WithBackoff(time.Millisecond, time.Millisecond), retry.WithBudget(b))
	}
	cases := []struct {
		name   string
		behave func(context.Context, int) (toolmw.Result, error)
		mws    func() []toolmw.Middleware
	}{
		{"timeout", slow, func() []toolmw.Middleware { return []toolmw.Middleware{retries(), timeout.New(per)} }},
		{"timeout, no retry", slow, func() []toolmw.Middleware { return []toolmw.Middleware{timeout.New(per)} }},
		{"abandoned", ignoring, func() []toolmw.Middleware {
			return []toolmw.Middleware{retries(), timeout.New(per, timeout.WithAbandon(), timeout.WithOnLate(func(timeout.Late) {}))}
		}},
		{"timeout then transient", slowThenBusy, func() []toolmw.Middleware { return []toolmw.Middleware{retries(), timeout.New(per)} }},
		{"retry budget empty after a timeout", slow, func() []toolmw.Middleware { return []toolmw.Middleware{emptyBudget(), timeout.New(per)} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &payments{keys: map[string]int{}, behave: c.behave}
				mws := append([]toolmw.Middleware{runlimit.New(runlimit.Once("pay"))}, c.mws()...)
				tool, err := toolmw.Wrap(toolmw.Spec{Name: "pay", HonoursKeys: true}, p.tool, mws...)
				if err != nil {
					t.Fatal(err)
				}
				run := budget.WithRun(context.Background())
				for i, id := range []string{"call_1", "call_2", "call_3"} {
					_, err := tool(toolmw.WithCallID(run, id), nil)
					if i > 0 && !isCallLimit(err) {
						t.Errorf("call %d: %v, want run_call_limit: the first call's outcome is unknown", i+1, err)
					}
				}
				synctest.Wait()
				time.Sleep(5 * per) // abandoned executions end
				if n := p.payments(); n != 1 {
					t.Fatalf("%d payments (distinct keys) in one run of a tool declared Once", n)
				}
			})
		})
	}
}

// TestHedgeInsideDoesNotMultiply: with the hedge layer inside runlimit, a
// call of a limited tool is not hedged: the run's one call is one
// execution, however slow. (It was hedged: two executions.)
func TestHedgeInsideDoesNotMultiply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int64
		slow := func(context.Context, json.RawMessage) (toolmw.Result, error) {
			n.Add(1)
			time.Sleep(50 * time.Millisecond)
			return toolmw.Text("paid"), nil
		}
		tool, err := toolmw.Wrap(toolmw.Spec{Name: "pay", HonoursKeys: true}, slow,
			runlimit.New(runlimit.Once("pay")), hedge.New(hedge.WithDelay(time.Millisecond)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tool(toolmw.WithCallID(budget.WithRun(context.Background()), "call_1"), nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n.Load() != 1 {
			t.Fatalf("%d executions of the run's one call of a tool declared Once", n.Load())
		}
	})
}
