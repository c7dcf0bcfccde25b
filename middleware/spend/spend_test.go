package spend_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func wrap(t testing.TB, name string, tool toolmw.Tool, mws ...toolmw.Middleware) toolmw.Tool {
	t.Helper()
	w, err := toolmw.Wrap(toolmw.Spec{Name: name}, tool, mws...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func ok(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }

func isSpendLimit(err error) bool {
	info := taxonomy.InfoOf(err)
	return info.Kind == taxonomy.KindBudgetExceeded && info.Code == taxonomy.CodeSpendLimit
}

// TestFixedCost: calls run while their cost fits what is left; the one that
// does not fit is refused, not retryable, with the limit, the spent and
// what is left in its record; sums are exact.
func TestFixedCost(t *testing.T) {
	cases := []struct {
		limit, cost float64
		runs        int
	}{
		{1, 0.3, 3},
		{1, 0.1, 10}, // 0.1 ten times is exactly 1
		{0.3, 0.1, 3},
		{1, 0, 50}, // free: never refused
		{0, 0.5, 0},
		{spend.MaxAmount, spend.MaxAmount / 2, 2},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v/%v", c.limit, c.cost), func(t *testing.T) {
			var n atomic.Int64
			tool := wrap(t, "search", func(context.Context, json.RawMessage) (toolmw.Result, error) {
				n.Add(1)
				return toolmw.Text("ok"), nil
			}, spend.New(spend.Fixed("search", c.cost)))
			ctx := spend.ContextWithLimit(context.Background(), c.limit)
			for i := range 50 {
				_, err := tool(ctx, nil)
				if i < c.runs && err != nil {
					t.Fatalf("call %d: %v", i+1, err)
				}
				if i >= c.runs {
					if !isSpendLimit(err) {
						t.Fatalf("call %d: %v, want spend_limit", i+1, err)
					}
					info := taxonomy.InfoOf(err)
					want := &taxonomy.SpendInfo{Limit: c.limit, Spent: c.cost * float64(c.runs), Left: c.limit - c.cost*float64(c.runs)}
					if info.Retryable || info.Spend == nil || math.Abs(info.Spend.Spent-want.Spent) > 1e-9 || math.Abs(info.Spend.Left-want.Left) > 1e-9 || info.Spend.Limit != want.Limit {
						t.Fatalf("record %+v (spend %+v), want spend %+v, not retryable", info, info.Spend, want)
					}
					break
				}
			}
			if n.Load() != int64(c.runs) {
				t.Fatalf("%d executions, want %d", n.Load(), c.runs)
			}
			acct, _ := spend.AccountFrom(ctx)
			if acct.Held() != 0 || math.Abs(acct.Spent()-c.cost*float64(c.runs)) > 1e-9 {
				t.Fatalf("account: spent %v, held %v", acct.Spent(), acct.Held())
			}
		})
	}
}

// gauge measures, at the tool, what the executions begun so far may cost
// (each adds its maximum as it starts) and what they did cost.
type gauge struct {
	mu            sync.Mutex
	begun, peak   float64
	actual        float64
	inFlight, top int
}

func (g *gauge) start(max float64) {
	g.mu.Lock()
	g.begun += max
	g.peak = math.Max(g.peak, g.begun)
	g.inFlight++
	g.top = int(math.Max(float64(g.top), float64(g.inFlight)))
	g.mu.Unlock()
}

func (g *gauge) end(max, actual float64) {
	g.mu.Lock()
	g.begun += actual - max
	g.actual += actual
	g.inFlight--
	g.mu.Unlock()
}

// TestLimitNeverExceededUnderConcurrency: 100 goroutines call as fast as
// they can until refused, against a fixed and a metered tool sharing one
// run's limit. Measured at the tools, what the executions begun may cost
// never exceeds the limit (the peak is logged), and what the account says
// was spent is what the tools cost.
//
// The test runs in a testing/synctest bubble and each execution takes 1 ms
// of the bubble's time, so every caller the limit admits is in a tool at
// once before any returns: the reservations are tested at their fullest.
func TestLimitNeverExceededUnderConcurrency(t *testing.T) {
	synctest.Test(t, limitNeverExceeded)
}

func limitNeverExceeded(t *testing.T) {
	const limit, callers = 5.0, 100
	const fixed, meteredMax = 0.07, 0.1
	var g gauge
	costOf := func(res toolmw.Result) float64 { v, _ := strconv.ParseFloat(res.Content, 64); return v }
	mw := spend.New(spend.Fixed("search", fixed), spend.Metered("summarise", meteredMax, costOf))
	search := wrap(t, "search", func(context.Context, json.RawMessage) (toolmw.Result, error) {
		g.start(fixed)
		defer g.end(fixed, fixed)
		time.Sleep(time.Millisecond)
		return toolmw.Text("found"), nil
	}, mw)
	var seed atomic.Uint64
	summarise := wrap(t, "summarise", func(context.Context, json.RawMessage) (toolmw.Result, error) {
		g.start(meteredMax)
		// A whole number of thousandths, so the sum checked below is exact.
		used := float64(rand.New(rand.NewPCG(seed.Add(1), 7)).IntN(101)) / 1000
		defer g.end(meteredMax, used)
		time.Sleep(time.Millisecond)
		return toolmw.Text(strconv.FormatFloat(used, 'f', -1, 64)), nil
	}, mw)
	ctx := spend.ContextWithLimit(context.Background(), limit)
	var calls, refused atomic.Int64
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range callers {
		tool := search
		if i%2 == 1 {
			tool = summarise
		}
		wg.Go(func() {
			<-start
			for {
				calls.Add(1)
				_, err := tool(ctx, nil)
				if err == nil {
					continue
				}
				if !isSpendLimit(err) {
					t.Errorf("unexpected outcome %v", err)
				}
				refused.Add(1)
				return
			}
		})
	}
	close(start)
	wg.Wait()
	acct, _ := spend.AccountFrom(ctx)
	if g.peak > limit+1e-9 {
		t.Fatalf("peak spend %v over the limit %v", g.peak, limit)
	}
	if math.Abs(acct.Spent()-g.actual) > 1e-6 || acct.Held() != 0 {
		t.Fatalf("account spent %v held %v; the tools cost %v", acct.Spent(), acct.Held(), g.actual)
	}
	if refused.Load() != callers {
		t.Fatalf("%d callers refused of %d", refused.Load(), callers)
	}
	t.Logf("%d calls by %d goroutines (%d in the tools at once at most): peak spend at the tools %.4f of %.2f (in flight at their maximum); spent %.4f; left %.4f",
		calls.Load(), callers, g.top, g.peak, limit, acct.Spent(), acct.Left())
}

// TestMeteredHostileCosts: a metered cost that is NaN, infinite, negative,
// above the maximum, or whose function panics is charged the maximum and
// reported; a cost within the maximum is charged as read.
func TestMeteredHostileCosts(t *testing.T) {
	const max = 2.0
	cases := []struct {
		name    string
		read    func(toolmw.Result) float64
		charged float64
		bad     bool
	}{
		{"within", func(toolmw.Result) float64 { return 0.5 }, 0.5, false},
		{"zero", func(toolmw.Result) float64 { return 0 }, 0, false},
		{"the maximum", func(toolmw.Result) float64 { return max }, max, false},
		{"above", func(toolmw.Result) float64 { return max + 0.01 }, max, true},
		{"NaN", func(toolmw.Result) float64 { return math.NaN() }, max, true},
		{"+Inf", func(toolmw.Result) float64 { return math.Inf(1) }, max, true},
		{"-Inf", func(toolmw.Result) float64 { return math.Inf(-1) }, max, true},
		{"negative", func(toolmw.Result) float64 { return -1 }, max, true},
		{"huge", func(toolmw.Result) float64 { return math.MaxFloat64 }, max, true},
		{"panics", func(toolmw.Result) float64 { panic("no usage in the result") }, max, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var reports []spend.BadCost
			tool := wrap(t, "summarise", ok, spend.New(spend.Metered("summarise", max, c.read),
				spend.WithOnBadCost(func(b spend.BadCost) { reports = append(reports, b) })))
			ctx := toolmw.WithCallID(spend.ContextWithLimit(context.Background(), 10), "call_1")
			if _, err := tool(ctx, nil); err != nil {
				t.Fatal(err)
			}
			acct, _ := spend.AccountFrom(ctx)
			if acct.Spent() != c.charged || acct.Held() != 0 {
				t.Fatalf("spent %v held %v, want %v", acct.Spent(), acct.Held(), c.charged)
			}
			if c.bad != (len(reports) == 1) {
				t.Fatalf("reports %+v", reports)
			}
			if c.bad {
				r := reports[0]
				if r.Tool != "summarise" || r.CallID != "call_1" || r.Max != max || r.Charged != max {
					t.Fatalf("report %+v", r)
				}
			}
		})
	}
}

// TestReportPanicIsDropped: a panic in the bad-cost report is dropped.
func TestReportPanicIsDropped(t *testing.T) {
	tool := wrap(t, "summarise", ok, spend.New(spend.Metered("summarise", 1, func(toolmw.Result) float64 { return -1 }),
		spend.WithOnBadCost(func(spend.BadCost) { panic("sink broke") })))
	if _, err := tool(spend.ContextWithLimit(context.Background(), 10), nil); err != nil {
		t.Fatal(err)
	}
}

// TestWhatCosts: a call that never ran the tool costs nothing; any other
// failure, a cancellation and a panic cost the fixed cost (or the metered
// maximum, whose function is not called on a failure).
func TestWhatCosts(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		panic bool
		free  bool
	}{
		{"rate limited", taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeRateLimited, "slow down"), false, true},
		{"circuit open", taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "open"), false, true},
		{"not permitted", taxonomy.NotPermitted(taxonomy.CodeNotPermitted, "no"), false, true},
		{"args invalid", taxonomy.ArgsInvalid(), false, true},
		{"approval pending", taxonomy.New(taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending, "wait"), false, true},
		{"run call limit", taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunCallLimit, "once"), false, true},
		{"guardrail on arguments", taxonomy.New(taxonomy.KindGuardrailBlocked, taxonomy.CodeGuardrailArgs, "blocked"), false, true},
		{"too many abandoned", taxonomy.Transient(taxonomy.CodeTooManyAbandoned, "stuck"), false, true},
		{"guardrail on the result", taxonomy.New(taxonomy.KindGuardrailBlocked, taxonomy.CodeGuardrailResult, "blocked"), false, false},
		{"transient", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down"), false, false},
		{"permanent", taxonomy.Failure("ledger_rejected", "no"), false, false},
		{"refusal", taxonomy.Refusal("booking_not_cancellable", "no"), false, false},
		{"timeout", taxonomy.Timeout(taxonomy.CodeTimeout, "slow", true), false, false},
		{"retry budget empty after a timeout", taxonomy.New(taxonomy.KindRetryBudgetExhausted, taxonomy.CodeRetryBudgetExhausted, "empty").
			WithCause(taxonomy.Timeout(taxonomy.CodeTimeout, "slow", true)), false, false},
		{"retry budget empty, no attempt", taxonomy.New(taxonomy.KindRetryBudgetExhausted, taxonomy.CodeRetryBudgetExhausted, "empty"), false, true},
		{"the supplier's 429", taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeUpstreamRateLimited, "slow down"), false, false},
		{"untyped", errors.New("boom"), false, false},
		{"cancelled", context.Canceled, false, false},
		{"panic", nil, true, false},
	}
	for _, c := range cases {
		for _, metered := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/metered=%v", c.name, metered), func(t *testing.T) {
				const cost = 0.25
				opt := spend.Fixed("pay", cost)
				read := false
				if metered {
					opt = spend.Metered("pay", cost, func(toolmw.Result) float64 { read = true; return 0 })
				}
				tool := wrap(t, "pay", func(context.Context, json.RawMessage) (toolmw.Result, error) {
					if c.panic {
						panic("boom")
					}
					return toolmw.Result{}, c.err
				}, spend.New(opt))
				ctx := spend.ContextWithLimit(context.Background(), 1)
				func() {
					defer func() {
						if r := recover(); (r != nil) != c.panic {
							t.Fatalf("recovered %v", r)
						}
					}()
					_, _ = tool(ctx, nil)
				}()
				acct, _ := spend.AccountFrom(ctx)
				want := cost
				if c.free {
					want = 0
				}
				if acct.Spent() != want || acct.Held() != 0 || read {
					t.Fatalf("spent %v held %v (cost function called: %v), want %v", acct.Spent(), acct.Held(), read, want)
				}
			})
		}
	}
}

// TestEachAttemptIsCharged: inside the real retry layer, every attempt
// that reaches the tool is charged, and the refusal of an attempt for its
// cost ends the call without another attempt.
func TestEachAttemptIsCharged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int64
		flaky := func(context.Context, json.RawMessage) (toolmw.Result, error) {
			n.Add(1)
			return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier busy")
		}
		tool := wrap(t, "search", flaky,
			retry.New(retry.WithMaxAttempts(5), retry.WithBackoff(time.Millisecond, time.Millisecond), retry.WithoutBudget()),
			spend.New(spend.Fixed("search", 0.4)))
		ctx := spend.ContextWithLimit(context.Background(), 1)
		_, err := tool(ctx, nil)
		if !isSpendLimit(err) {
			t.Fatalf("%v, want spend_limit after two attempts", err)
		}
		acct, _ := spend.AccountFrom(ctx)
		if n.Load() != 2 || math.Abs(acct.Spent()-0.8) > 1e-9 {
			t.Fatalf("%d attempts, spent %v; want 2 and 0.8", n.Load(), acct.Spent())
		}
	})
}

// TestPassThrough: a call without a limit in its context, and a tool
// without a cost, run without being counted.
func TestPassThrough(t *testing.T) {
	mw := spend.New(spend.Fixed("search", 1))
	search, free := wrap(t, "search", ok, mw), wrap(t, "weather", ok, mw)
	ctx := spend.ContextWithLimit(context.Background(), 1)
	for range 3 {
		if _, err := search(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := free(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if acct, _ := spend.AccountFrom(ctx); acct.Spent() != 0 {
		t.Fatalf("spent %v", acct.Spent())
	}
}

// TestInvalidLimit: a limit that is not an amount fails closed and says
// why; ValidateLimit reports it.
func TestInvalidLimit(t *testing.T) {
	for _, limit := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, spend.MaxAmount * 2} {
		if err := spend.ValidateLimit(limit); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
			t.Fatalf("ValidateLimit(%v): %v", limit, err)
		}
		tool := wrap(t, "search", ok, spend.New(spend.Fixed("search", 0.01), spend.Fixed("weather", 0)))
		_, err := tool(spend.ContextWithLimit(context.Background(), limit), nil)
		if !isSpendLimit(err) || taxonomy.InfoOf(err).Message != "the run's spend limit is not a valid amount, so no call that costs may run; nothing ran" {
			t.Fatalf("limit %v: %v", limit, err)
		}
		if _, err := json.Marshal(taxonomy.InfoOf(err)); err != nil {
			t.Fatalf("the record does not encode: %v", err)
		}
	}
	for _, limit := range []float64{0, 1, spend.MaxAmount} {
		if err := spend.ValidateLimit(limit); err != nil {
			t.Fatal(err)
		}
	}
}

func TestValidate(t *testing.T) {
	read := func(toolmw.Result) float64 { return 0 }
	cases := []struct {
		name string
		opts []spend.Option
		bad  bool
	}{
		{"none", nil, false},
		{"nil option", []spend.Option{nil, spend.WithOnBadCost(nil)}, false},
		{"fixed", []spend.Option{spend.Fixed("search", 0.01), spend.Metered("summarise", 1, read)}, false},
		{"free", []spend.Option{spend.Fixed("search", 0)}, false},
		{"the most", []spend.Option{spend.Fixed("search", spend.MaxAmount)}, false},
		{"NaN", []spend.Option{spend.Fixed("search", math.NaN())}, true},
		{"+Inf", []spend.Option{spend.Fixed("search", math.Inf(1))}, true},
		{"-Inf", []spend.Option{spend.Fixed("search", math.Inf(-1))}, true},
		{"negative", []spend.Option{spend.Fixed("search", -0.01)}, true},
		{"too much", []spend.Option{spend.Fixed("search", spend.MaxAmount*1.5)}, true},
		{"metered NaN", []spend.Option{spend.Metered("search", math.NaN(), read)}, true},
		{"metered negative", []spend.Option{spend.Metered("search", -1, read)}, true},
		{"metered nil", []spend.Option{spend.Metered("search", 1, nil)}, true},
		{"not a tool name", []spend.Option{spend.Fixed("web search", 1)}, true},
		{"two costs", []spend.Option{spend.Fixed("search", 1), spend.Metered("search", 1, read)}, true},
		{"currency", []spend.Option{spend.Fixed("search", 1), spend.WithCurrency("EUR")}, false},
		{"own currency", []spend.Option{spend.Fixed("search", 1), spend.WithCurrency("gpt-4o.tokens_1")}, false},
		{"no currency", []spend.Option{spend.WithCurrency("")}, true},
		{"currency with a space", []spend.Option{spend.WithCurrency("US D")}, true},
		{"currency too long", []spend.Option{spend.WithCurrency("abcdefghijklmnopq")}, true},
		{"currency not ASCII", []spend.Option{spend.WithCurrency("€")}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := spend.Validate(c.opts...)
			_, werr := toolmw.Wrap(toolmw.Spec{Name: "search"}, ok, spend.New(c.opts...))
			for how, err := range map[string]error{"Validate": err, "Wrap": werr} {
				info := taxonomy.InfoOf(err)
				if c.bad != (err != nil) || c.bad && (info.Kind != taxonomy.KindDefinitionInvalid || info.Code != taxonomy.CodeOptionInvalid) {
					t.Fatalf("%s: %v (bad: %v)", how, err, c.bad)
				}
			}
		})
	}
}

// TestOffWithoutCosts: New without costs returns the tool unchanged.
func TestOffWithoutCosts(t *testing.T) {
	var tool toolmw.Tool = ok
	if got := spend.New(spend.WithOnBadCost(func(spend.BadCost) {}))(tool); reflect.ValueOf(got).Pointer() != reflect.ValueOf(tool).Pointer() {
		t.Fatal("New() wrapped the tool")
	}
}
