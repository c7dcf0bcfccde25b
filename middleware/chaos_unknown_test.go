package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/hedge"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/middleware/timeout"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/taxonomy"
)

// unknownBehaviour is what one execution of the unknown-outcome soak's
// tools does. Most of them leave the outcome unknown to the caller.
type unknownBehaviour int

const (
	unknownOK        unknownBehaviour = iota
	unknownSlow                       // latency past the timeout, honouring the context: a timeout
	unknownAbandoned                  // latency past the timeout, ignoring the context: abandoned, lands later
	unknownReset                      // a connection reset after sending (possibly landed)
	unknownTransient                  // typed transient: its author vouches nothing landed
	unknownRefusal                    // an answer: the tool ran
)

// landed reports whether an execution that behaved so may have had its
// effect: every behaviour but a typed transient failure.
func (b unknownBehaviour) landed() bool { return b != unknownTransient }

// pickUnknown chooses a behaviour: a quarter succeed, more than half leave
// the outcome unknown.
func pickUnknown(r *rand.Rand) unknownBehaviour {
	switch n := r.IntN(100); {
	case n < 25:
		return unknownOK
	case n < 50:
		return unknownSlow
	case n < 70:
		return unknownAbandoned
	case n < 82:
		return unknownReset
	case n < 95:
		return unknownTransient
	default:
		return unknownRefusal
	}
}

// unknownTool records every execution at the tool itself — its run, its
// call, its idempotency key and its behaviour — as it starts, so that an
// abandoned execution that lands after its call returned is counted too.
type unknownTool struct {
	perAttempt time.Duration
	cost       float64

	mu    sync.Mutex
	plan  map[string]*rand.Rand                         // call id → its seeded plan
	execs map[*budget.Run]map[string][]unknownBehaviour // run → call id → each execution's behaviour
	keys  map[*budget.Run]map[string]bool               // run → idempotency keys of executions that may have landed
	spent map[*spend.Account]float64                    // what the executions of each run's account cost
	n     int
}

func newUnknownTool(name string, cost float64, perAttempt time.Duration, calls int) *unknownTool {
	u := &unknownTool{perAttempt: perAttempt, cost: cost, plan: map[string]*rand.Rand{},
		execs: map[*budget.Run]map[string][]unknownBehaviour{}, keys: map[*budget.Run]map[string]bool{},
		spent: map[*spend.Account]float64{}}
	for i := range calls {
		u.plan[callID(i)] = rand.New(rand.NewPCG(uint64(i), uint64(len(name))+26))
	}
	return u
}

func (u *unknownTool) tool(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	call, _ := toolmw.CallFrom(ctx)
	run, _ := budget.RunFrom(ctx)
	acct, _ := spend.AccountFrom(ctx)
	u.mu.Lock()
	b := pickUnknown(u.plan[call.ID])
	if u.execs[run] == nil {
		u.execs[run], u.keys[run] = map[string][]unknownBehaviour{}, map[string]bool{}
	}
	u.execs[run][call.ID] = append(u.execs[run][call.ID], b)
	if b.landed() {
		u.keys[run][call.Key()] = true
	}
	u.spent[acct] += u.cost // a supplier bills every request it is sent
	u.n++
	u.mu.Unlock()

	switch b {
	case unknownSlow:
		<-ctx.Done()
		return toolmw.Result{}, ctx.Err()
	case unknownAbandoned:
		time.Sleep(3 * u.perAttempt)
		return toolmw.Text("late"), nil
	case unknownReset:
		return toolmw.Result{}, fmt.Errorf("read from supplier: %w", syscall.ECONNRESET)
	case unknownTransient:
		return toolmw.Result{}, taxonomy.Transient("supplier_busy", "busy")
	case unknownRefusal:
		return toolmw.Result{}, taxonomy.Refusal("card_declined", "declined")
	}
	return toolmw.Text("ok"), nil
}

// TestChaosUnknownOutcomes drives a payment tool that honours idempotency
// keys, declared Once per run and costing 0.4, and an idempotent search
// declared Max 3 per run and costing 0.1, under a spend limit of 1.0 per
// run, through the default stack with runlimit outside retry, spend just
// inside it and hedge inside spend (the order the docs once advised, which
// started two executions on one reservation) — against tools whose
// executions mostly end in an unknown outcome: timeouts, executions the
// timeout layer abandons and that land later, connection resets after
// sending, besides successes, typed transient failures and refusals; many
// concurrent calls in runs of about ten, some cancelled by their caller. A
// third tool, idempotent and unlimited, shows the hedge layer at work.
//
// Counted at the tools, once every abandoned execution has ended: in each
// run at most one payment (idempotency key) whose execution may have
// landed, at most three searches that may have, and executions costing at
// most the run's limit: 0 executions beyond the limits. Every call ends in
// exactly one outcome, and no goroutine outlives the soak.
func TestChaosUnknownOutcomes(t *testing.T) {
	bound := newTimeBound(t)
	synctest.Test(t, func(t *testing.T) {
		baseline := testutil.Goroutines()
		const perAttempt = 2 * time.Millisecond
		const limit, payCost, searchCost = 1.0, 0.4, 0.1
		calls, floor := soakSize(5, 2_000)
		workers := *chaosWorkers
		bound.floor = floor

		var abandoned atomic.Int64
		stack := middleware.Default(
			middleware.WithTracing(tracing.WithTracerProvider(sdktrace.NewTracerProvider()), tracing.WithMeterProvider(metricnoop.NewMeterProvider())),
			middleware.WithRetry(retry.WithBackoff(50*time.Microsecond, time.Millisecond), retry.WithoutBudget()),
			middleware.WithTimeout(perAttempt, timeout.WithAbandon(), timeout.WithOnLate(func(timeout.Late) { abandoned.Add(1) })),
		)
		// No breaker: with most executions failing it would be open most of
		// the time, and the calls would not reach the tools.
		stack, err := stack.Remove(middleware.Breaker)
		var hedged atomic.Int64
		if err == nil {
			stack, err = stack.InsertBefore(middleware.Retry, middleware.Layer{Name: middleware.RunLimit,
				Middleware: runlimit.New(runlimit.Once("pay"), runlimit.Max("search", 3))})
		}
		if err == nil {
			stack, err = stack.InsertAfter(middleware.Retry, middleware.Layer{Name: middleware.Spend,
				Middleware: spend.New(spend.Fixed("pay", payCost), spend.Fixed("search", searchCost))})
		}
		if err == nil {
			stack, err = stack.InsertAfter("spend", middleware.Layer{Name: middleware.Hedge,
				Middleware: hedge.New(hedge.WithDelay(perAttempt/2), hedge.WithOnLate(func(hedge.Late) { hedged.Add(1) }))})
		}
		if err != nil {
			t.Fatal(err)
		}

		specs := []toolmw.Spec{{Name: "pay", HonoursKeys: true}, {Name: "search", Idempotent: true}, {Name: "lookup", Idempotent: true}}
		costs := map[string]float64{"pay": payCost, "search": searchCost}
		limits := map[string]int{"pay": 1, "search": 3}
		tools := map[string]*unknownTool{}
		wrapped := map[string]toolmw.Tool{}
		for _, spec := range specs {
			tools[spec.Name] = newUnknownTool(spec.Name, costs[spec.Name], perAttempt, calls)
			if wrapped[spec.Name], err = stack.Wrap(spec, tools[spec.Name].tool); err != nil {
				t.Fatal(err)
			}
		}

		runs := make([]context.Context, calls/10+1)
		for i := range runs {
			runs[i] = spend.ContextWithLimit(budget.WithRun(context.Background()), limit)
		}
		outcomes := make([]error, calls)
		made := make([]bool, calls)
		started := drive(workers, calls, bound, func(i int) {
			name := specs[i%3].Name
			ctx, cancel := context.WithCancel(toolmw.WithCallID(runs[i/10], callID(i)))
			if i%20 == 7 { // the caller gives up mid-call
				timer := time.AfterFunc(time.Duration(i%3)*time.Millisecond, cancel)
				defer timer.Stop()
			}
			_, outcomes[i] = wrapped[name](ctx, nil)
			made[i] = true
			cancel()
		})
		after := settled(t, baseline)
		for _, u := range tools {
			u.mu.Lock() // every execution has ended: the records are complete
			defer u.mu.Unlock()
		}
		if started < floor {
			t.Errorf("only %d calls, fewer than the floor %d", started, floor)
		}

		byCode := map[string]int{}
		for i, err := range outcomes {
			if !made[i] {
				continue
			}
			switch _, typed := taxonomy.From(err); {
			case err == nil:
				byCode["ok"]++
			case typed:
				byCode[taxonomy.InfoOf(err).Code]++
			case errors.Is(err, context.Canceled):
				byCode["(cancelled)"]++
			default:
				t.Fatalf("call %d ended with an untyped error: %v", i, err)
			}
		}

		// 0 executions beyond the limits, counted at the tools.
		beyond := 0
		for name, n := range limits {
			u := tools[name]
			for run, keys := range u.keys {
				if len(keys) > n {
					beyond += len(keys) - n
					t.Errorf("%s: a run made %d calls that may have landed (limit %d): %v", name, len(keys), n, u.execs[run])
				}
			}
		}
		peak := 0.0
		for i, ctx := range runs {
			acct, _ := spend.AccountFrom(ctx)
			cost := tools["pay"].spent[acct] + tools["search"].spent[acct]
			peak = max(peak, cost)
			if cost > limit+1e-9 {
				beyond++
				t.Errorf("run %d: the executions cost %.2f, limit %.2f", i, cost, limit)
			}
			if acct.Held() != 0 || acct.Spent() < cost-1e-9 {
				t.Errorf("run %d: account spent %.2f held %.2f; the executions cost %.2f", i, acct.Spent(), acct.Held(), cost)
			}
		}

		// The soak reached what it is about.
		if abandoned.Load() == 0 || byCode[taxonomy.CodeTimeout] == 0 || byCode[taxonomy.CodeRunCallLimit] == 0 ||
			byCode[taxonomy.CodeSpendLimit] == 0 || hedged.Load() == 0 {
			t.Errorf("the soak missed a case: %d abandoned, %d hedge losers, outcomes %v", abandoned.Load(), hedged.Load(), byCode)
		}
		t.Logf("chaos unknown outcomes: %d calls in %d runs; executions pay %d, search %d, lookup %d (%d hedge losers); %d abandoned; "+
			"executions beyond the limits %d; most a run's executions cost %.2f of %.2f; goroutines before %d after %d; outcomes %v",
			started, len(runs), tools["pay"].n, tools["search"].n, tools["lookup"].n, hedged.Load(), abandoned.Load(),
			beyond, peak, limit, baseline, after, byCode)
	})
}
