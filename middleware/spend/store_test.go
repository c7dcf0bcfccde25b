package spend_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/middleware/spend/spendtest"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// units is amount in the layer's units, whole billionths.
func units(amount float64) int64 { return int64(math.Round(amount * 1e9)) }

// counted is a tool that counts its runs and answers res, err.
type counted struct {
	n   atomic.Int64
	res toolmw.Result
	err error
}

func (c *counted) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	c.n.Add(1)
	return c.res, c.err
}

// inRun returns ctx with a new Account of limit and a new Run named id:
// one replica's view of the run, as when each request of the run is
// served on its own.
func inRun(ctx context.Context, id string, limit float64) context.Context {
	return budget.WithRun(spend.ContextWithLimit(ctx, limit), budget.WithID(id))
}

var errDown = errors.New("store down at 10.0.0.7:6379")

// TestStoreAcrossReplicas: two replicas (two layers, each call with its own
// Account and its own Run of the same id) sharing a Store hold the run's
// limit in all. 100 concurrent calls of a fixed cost run exactly as many
// times as fit the limit once; 100 callers of a metered tool calling until
// refused never take the run past it: the Store's spent plus held,
// measured after every reservation, peaks at most at the limit, and what
// the tools measured begun at their maximum does too. Each execution takes
// 1 ms of a testing/synctest bubble's time, so every call admitted is in a
// tool before any returns. Without the Store every call would run.
func TestStoreAcrossReplicas(t *testing.T) {
	const limit = 1.0
	cases := []struct {
		name   string
		cost   spend.Option
		max    float64 // reserved per call
		read   float64 // what a call costs
		loop   bool    // callers call until refused
		runs   int64   // executions, when not looping
		refuse int64   // refusals
	}{
		{"fixed", spend.Fixed("search", 0.07), 0.07, 0.07, false, 14, 86},
		{"metered", spend.Metered("search", 0.1, func(res toolmw.Result) float64 {
			v, _ := strconv.ParseFloat(res.Content, 64)
			return v
		}), 0.1, 0.04, true, 0, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := &spendtest.MemStore{}
				var g gauge
				var runs atomic.Int64
				tool := func(context.Context, json.RawMessage) (toolmw.Result, error) {
					runs.Add(1)
					g.start(c.max)
					defer g.end(c.max, c.read)
					time.Sleep(time.Millisecond)
					return toolmw.Text(strconv.FormatFloat(c.read, 'f', -1, 64)), nil
				}
				var replicas []toolmw.Tool
				for range 2 {
					replicas = append(replicas, wrap(t, "search", tool, spend.New(c.cost,
						spend.WithStore(st, store.WithTimeout(time.Minute),
							store.WithOnError(func(e store.Error) { t.Errorf("store error: %s: %v", e.Op, e.Err) })))))
				}
				var refused atomic.Int64
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range 100 {
					wg.Go(func() {
						<-start
						for range 50 { // far more than fit the limit
							_, err := replicas[i%2](inRun(context.Background(), "run-1", limit), nil)
							switch {
							case isSpendLimit(err):
								refused.Add(1)
								return
							case err != nil:
								t.Errorf("call %d: %v", i, err)
								return
							}
							if !c.loop {
								return
							}
						}
						t.Errorf("caller %d: 50 calls and never refused", i)
					})
				}
				close(start)
				wg.Wait()
				spent, held := st.State("run-1")
				peak := st.Peak()
				if peak > units(limit) || g.peak > limit+1e-9 {
					t.Errorf("peak of spent+held in the store %v, at the tools %v: over the limit %v", float64(peak)/1e9, g.peak, limit)
				}
				if spent > units(limit) || held != 0 {
					t.Errorf("store spent %v held %v, want at most %v spent and nothing held", spent, held, units(limit))
				}
				if want := units(g.actual); spent != want {
					t.Errorf("store spent %d, the tools cost %d", spent, want)
				}
				if n := runs.Load(); !c.loop && n != c.runs {
					t.Errorf("%d executions across two replicas, want %d", n, c.runs)
				}
				if n := refused.Load(); n != c.refuse {
					t.Errorf("%d refusals, want %d", n, c.refuse)
				}
				if c.loop && spent < units(limit-c.max) {
					t.Errorf("store spent %v: the callers stopped before the limit was near", spent)
				}
				if n := st.Calls("settle"); n != runs.Load() {
					t.Errorf("%d Settles, want one per execution, %d", n, runs.Load())
				}
				t.Logf("%d executions, %d refusals; peak spent+held %.2f of %.2f, spent %.2f",
					runs.Load(), refused.Load(), float64(peak)/1e9, limit, float64(spent)/1e9)
			})
		})
	}
}

// TestStoreRefusal: a call the Store refuses does not run and ends as the
// local refusal would, with the Store's numbers: the limit, the run's
// spent and held as spent, what is left; the call's own Account, which saw
// none of the run's other calls, is left as it was.
func TestStoreRefusal(t *testing.T) {
	st := &spendtest.MemStore{}
	ct := &counted{res: toolmw.Text("ok")}
	other := wrap(t, "search", ct.tool, spend.New(spend.Fixed("search", 0.5), spend.WithStore(st)))
	for range 2 { // the other replica spends the whole limit
		if _, err := other(inRun(context.Background(), "run-1", 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	tool := wrap(t, "search", ct.tool, spend.New(spend.Fixed("search", 0.01), spend.WithStore(st)))
	ctx := inRun(context.Background(), "run-1", 1)
	_, err := tool(ctx, nil)
	if !isSpendLimit(err) {
		t.Fatalf("%v, want spend_limit", err)
	}
	info := taxonomy.InfoOf(err)
	if info.Spend == nil || *info.Spend != (taxonomy.SpendInfo{Limit: 1, Spent: 1, Left: 0}) || info.Retryable {
		t.Errorf("record %+v, spend %+v, want the store's: limit 1, spent 1, left 0", info, info.Spend)
	}
	if !strings.Contains(err.Error(), "may cost up to 0.01, and the run has 0 of its spend limit left; nothing ran") {
		t.Errorf("message %q, want the local refusal's", err)
	}
	if ct.n.Load() != 2 {
		t.Errorf("%d executions, want the other replica's 2", ct.n.Load())
	}
	acct, _ := spend.AccountFrom(ctx)
	if acct.Spent() != 0 || acct.Held() != 0 {
		t.Errorf("the refused call's account: spent %v held %v, want untouched", acct.Spent(), acct.Held())
	}
}

// TestStoreSettle: after the call, the reservation is settled in the Store
// and in the call's Account to what the call cost: a metered success to
// what it read, a call that ran nothing (circuit-open) to 0, a failure
// that may have acted and a panic to the maximum. A Settle that fails is
// reported; the reservation then stays held in the Store.
func TestStoreSettle(t *testing.T) {
	const max = 0.5
	cases := []struct {
		name      string
		err       error // the tool's error
		panics    bool
		settleErr error
		charge    float64 // what the call cost, in its account
		spent     float64 // the run's spent in the store after it
		held      float64 // the run's held in the store after it
	}{
		{"metered success", nil, false, nil, 0.123, 0.123, 0},
		{"ran nothing", taxonomy.New(taxonomy.KindCircuitOpen, "circuit_open", "open"), false, nil, 0, 0, 0},
		{"failed", taxonomy.Failure("booking_failed", "failed"), false, nil, max, max, 0},
		{"panic", nil, true, nil, max, max, 0},
		{"settle fails", nil, false, errDown, 0.123, 0, max},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &spendtest.MemStore{}
			st.Fail("settle", c.settleErr)
			var rep testutil.Reports
			tool := wrap(t, "summarise", func(context.Context, json.RawMessage) (toolmw.Result, error) {
				if c.panics {
					panic("tool broke")
				}
				return toolmw.Text("0.123"), c.err
			}, spend.New(spend.Metered("summarise", max, func(res toolmw.Result) float64 {
				v, _ := strconv.ParseFloat(res.Content, 64)
				return v
			}), spend.WithStore(st, store.WithOnError(rep.Add))))
			ctx := inRun(context.Background(), "run-1", 1)
			func() {
				defer func() {
					if r := recover(); (r != nil) != c.panics {
						t.Errorf("recovered %v, want a panic %v", r, c.panics)
					}
				}()
				_, _ = tool(ctx, nil)
			}()
			if spent, held := st.State("run-1"); spent != units(c.spent) || held != units(c.held) {
				t.Errorf("store spent %d held %d, want %d and %d", spent, held, units(c.spent), units(c.held))
			}
			acct, _ := spend.AccountFrom(ctx)
			if math.Abs(acct.Spent()-c.charge) > 1e-9 || acct.Held() != 0 {
				t.Errorf("account spent %v held %v, want %v and 0", acct.Spent(), acct.Held(), c.charge)
			}
			got := rep.Take()
			if reported := len(got) == 1 && got[0].Op == "settle" && errors.Is(got[0].Err, errDown); reported != (c.settleErr != nil) || len(got) > 1 {
				t.Errorf("reported %v, want a settle error: %v", got, c.settleErr != nil)
			}
		})
	}
}

// TestStoreNotAsked: a call of a run without an id, of no run, or without
// an Account never asks the Store and behaves as without one.
func TestStoreNotAsked(t *testing.T) {
	cases := []struct {
		name    string
		ctx     func() context.Context
		limited bool // the second call is refused by the context's Account
	}{
		{"run without id", func() context.Context {
			return budget.WithRun(spend.ContextWithLimit(context.Background(), 0.1))
		}, true},
		{"no run", func() context.Context { return spend.ContextWithLimit(context.Background(), 0.1) }, true},
		{"no account", func() context.Context {
			return budget.WithRun(context.Background(), budget.WithID("run-1"))
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &spendtest.MemStore{}
			ct := &counted{res: toolmw.Text("ok")}
			tool := wrap(t, "search", ct.tool, spend.New(spend.Fixed("search", 0.1), spend.WithStore(st)))
			ctx := c.ctx()
			if _, err := tool(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := tool(ctx, nil); isSpendLimit(err) != c.limited {
				t.Errorf("second call: %v, want refused %v", err, c.limited)
			}
			if n := st.Calls("reserve") + st.Calls("settle"); n != 0 {
				t.Errorf("the Store was asked %d times, want never", n)
			}
		})
	}
}

// TestStoreFailsOpen: when the Store fails, a call is reserved in its
// Account (which holds what the Store admitted there), reported with the
// Store's error and marked degraded; for a quarter of a second the Store
// is left alone and calls reserve locally, reported as resting; then it is
// asked again.
func TestStoreFailsOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &spendtest.MemStore{}
		var rep testutil.Reports
		ct := &counted{res: toolmw.Text("ok")}
		degraded, seen := testutil.Degraded()
		tool := wrap(t, "search", ct.tool, degraded,
			spend.New(spend.Fixed("search", 0.1), spend.WithStore(st, store.WithOnError(rep.Add))))
		ctx := inRun(context.Background(), "run-1", 0.5)
		testutil.FailsOpen{Layer: "spend", Op: "reserve",
			Call: func() (bool, error) {
				n := ct.n.Load()
				_, err := tool(ctx, nil)
				return ct.n.Load() > n, err
			},
			Asked: func() int64 { return st.Calls("reserve") }, Fail: func(err error) { st.Fail("reserve", err) },
			Refusal: isSpendLimit, Reports: &rep, Seen: seen}.Run(t)
		time.Sleep(time.Second)
		// What the calls decided locally cost was written back.
		if spent, held := st.State("run-1"); spent != units(0.5) || held != 0 {
			t.Errorf("after the outage the store has spent %d, held %d; want all five calls spent, %d, nothing held", spent, held, units(0.5))
		}
	})
}

// TestStoreHangs: a Store that does not answer holds a call for exactly the
// store timeout; the call then runs, reserved locally, reported. A call
// whose own context ends first does not run and is not reported, and its
// Account is not charged.
func TestStoreHangs(t *testing.T) {
	testutil.Hangs(t, func(t *testing.T, c testutil.Hang, rep *testutil.Reports) (func(context.Context) (bool, error), func()) {
		st := &spendtest.MemStore{}
		st.Hang("reserve")
		ct := &counted{res: toolmw.Text("ok")}
		tool := wrap(t, "search", ct.tool, spend.New(spend.Fixed("search", 0.1),
			spend.WithStore(st, store.WithTimeout(c.Timeout), store.WithOnError(rep.Add))))
		var acct *spend.Account
		call := func(ctx context.Context) (bool, error) {
			ctx = inRun(ctx, "run-1", 1)
			acct, _ = spend.AccountFrom(ctx)
			_, err := tool(ctx, nil)
			return ct.n.Load() == 1, err
		}
		return call, func() {
			if want := map[bool]float64{true: 0.1}[c.Runs]; acct.Spent() != want {
				t.Errorf("account spent %v, want %v", acct.Spent(), want)
			}
		}
	})
}

// TestStoreFailClosed: with WithFailClosed, a call whose spend the Store
// could not check does not run and is refused as
// budget-exceeded/spend_limit, not retryable and not final (a later call
// may succeed), with a message saying so; it is reported and marked
// degraded. Once the Store answers, the call runs.
func TestStoreFailClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &spendtest.MemStore{}
		st.Fail("reserve", errDown)
		var rep testutil.Reports
		ct := &counted{res: toolmw.Text("ok")}
		degraded, seen := testutil.Degraded()
		tool := wrap(t, "search", ct.tool, degraded, spend.New(spend.Fixed("search", 0.1),
			spend.WithFailClosed(), spend.WithStore(st, store.WithOnError(rep.Add))))
		ctx := inRun(context.Background(), "run-1", 1)
		_, err := tool(ctx, nil)
		if !isSpendLimit(err) || taxonomy.IsFinal(err) || !strings.Contains(err.Error(), "could not be checked") {
			t.Fatalf("store down, fail closed: %v (final %v), want spend_limit saying the spend could not be checked, not final", err, taxonomy.IsFinal(err))
		}
		if ok, _ := taxonomy.ShouldRetry(err, true); ok {
			t.Error("ShouldRetry says retry the fail-closed refusal")
		}
		if ct.n.Load() != 0 {
			t.Error("the tool ran")
		}
		if acct, _ := spend.AccountFrom(ctx); acct.Held() != 0 || acct.Spent() != 0 {
			t.Errorf("the refused call's account: spent %v held %v", acct.Spent(), acct.Held())
		}
		if got := rep.Take(); len(got) != 1 || got[0] != (store.Error{Layer: "spend", Op: "reserve", Err: errDown, Refused: true}) {
			t.Errorf("reported %v, want the store's error, refused", got)
		}
		if d := seen(); d[len(d)-1] != "spend" {
			t.Errorf("degraded %q, want spend", d)
		}
		time.Sleep(250 * time.Millisecond)
		st.Fail("reserve", nil)
		if _, err := tool(ctx, nil); err != nil || ct.n.Load() != 1 {
			t.Fatalf("store back: %v, ran %d times, want one run", err, ct.n.Load())
		}
	})
}

// TestStoreValidate: a store option that is invalid (a negative timeout)
// makes the layer invalid, refused at start-up; 0 is the default.
func TestStoreValidate(t *testing.T) {
	st := &spendtest.MemStore{}
	opts := func(o spend.Option) []spend.Option {
		return []spend.Option{spend.Fixed("search", 1), spend.WithStore(st), o}
	}
	testutil.Options(t, func(o spend.Option) error { return spend.Validate(opts(o)...) },
		func(o spend.Option) error {
			_, err := toolmw.Wrap(toolmw.Spec{Name: "search"}, ok, spend.New(opts(o)...))
			return err
		},
		[]spend.Option{
			spend.WithStore(st, store.WithTimeout(0)),
			spend.WithStore(st, store.WithTimeout(time.Second)),
			spend.WithStore(nil),
			spend.WithFailClosed(),
			spend.WithStore(st, nil, store.WithOnError(nil)),
		},
		[]spend.Option{
			spend.WithStore(st, store.WithTimeout(-1)),
			spend.WithStore(st, store.WithTimeout(time.Second), store.WithTimeout(-time.Nanosecond)),
		})
}

// TestStoreCorrupt: a Store that answers that the run's spend does not
// parse (store.ErrCorrupt) makes the call fail closed without
// WithFailClosed — budget-exceeded/spend_store_corrupt, the tool does not
// run, nothing is reserved in the Account — and is reported; since the
// Store answered it is not left alone: the next call asks it again. A
// Settle that finds the spend corrupt is reported and does not rest the
// Store either.
func TestStoreCorrupt(t *testing.T) {
	corrupt := errors.Join(errors.New("spent is \"garbage\""), store.ErrCorrupt)
	st := &spendtest.MemStore{}
	st.Fail("reserve", corrupt)
	var r testutil.Reports
	c := &counted{res: toolmw.Text("ok")}
	tool := wrap(t, "pay", c.tool, spend.New(spend.Fixed("pay", 1), spend.WithStore(st, store.WithOnError(r.Add))))
	for i := range 3 {
		ctx := inRun(context.Background(), "run-1", 10)
		_, err := tool(ctx, nil)
		if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeSpendCorrupt || info.Kind != taxonomy.KindBudgetExceeded || info.Retryable {
			t.Fatalf("call %d: %v, want spend_store_corrupt", i+1, err)
		}
		if acct, _ := spend.AccountFrom(ctx); acct.Held() != 0 || acct.Spent() != 0 {
			t.Fatalf("the account holds %v, spent %v", acct.Held(), acct.Spent())
		}
	}
	got := r.Take()
	if c.n.Load() != 0 || st.Calls("reserve") != 3 || len(got) != 3 || got[0].Op != "reserve" || !got[0].Refused || !errors.Is(got[0].Err, store.ErrCorrupt) {
		t.Fatalf("%d executions, %d reserves, reports %v", c.n.Load(), st.Calls("reserve"), got)
	}

	st.Fail("reserve", nil)
	st.Fail("settle", corrupt)
	reserves := st.Calls("reserve")
	for range 2 {
		if _, err := tool(inRun(context.Background(), "run-2", 10), nil); err != nil {
			t.Fatal(err)
		}
	}
	got = r.Take()
	if st.Calls("reserve")-reserves != 2 || len(got) != 2 || got[0].Op != "settle" || got[0].Refused || !errors.Is(got[0].Err, store.ErrCorrupt) {
		t.Fatalf("%d reserves, reports %v: want each call to ask the Store and each settle reported", st.Calls("reserve")-reserves, got)
	}
}
