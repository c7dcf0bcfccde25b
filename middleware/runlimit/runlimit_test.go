package runlimit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counted is a tool that counts its executions and returns err (nil: "ok").
type counted struct {
	n   atomic.Int64
	err error
}

func (c *counted) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	c.n.Add(1)
	if c.err != nil {
		return toolmw.Result{}, c.err
	}
	return toolmw.Text("ok"), nil
}

func wrap(t *testing.T, name string, tool toolmw.Tool, mws ...toolmw.Middleware) toolmw.Tool {
	t.Helper()
	w, err := toolmw.Wrap(toolmw.Spec{Name: name}, tool, mws...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func isCallLimit(err error) bool {
	info := taxonomy.InfoOf(err)
	return info.Kind == taxonomy.KindRunLimitExceeded && info.Code == taxonomy.CodeRunCallLimit
}

// TestLimits: a tool declared Once runs once per run, one declared Max n
// runs n times, a tool without a limit runs every time, and each run has
// its own counts. A refusal is final and not retryable.
func TestLimits(t *testing.T) {
	mw := runlimit.New(runlimit.Once("cancel_booking"), runlimit.Max("search", 3))
	cases := []struct {
		tool  string
		calls int
		want  int // executions per run
	}{
		{"cancel_booking", 4, 1},
		{"search", 5, 3},
		{"weather", 20, 20},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			ct := &counted{}
			tool := wrap(t, c.tool, ct.tool, mw)
			for range 2 { // two runs
				ctx := budget.WithRun(context.Background())
				before := ct.n.Load()
				for i := range c.calls {
					_, err := tool(ctx, nil)
					switch {
					case i < c.want && err != nil:
						t.Fatalf("call %d: %v", i+1, err)
					case i >= c.want && !isCallLimit(err):
						t.Fatalf("call %d: %v, want run_call_limit", i+1, err)
					case i >= c.want:
						if retry, _ := taxonomy.ShouldRetry(err, true); retry || taxonomy.InfoOf(err).Retryable || !taxonomy.InfoOf(err).Final {
							t.Fatalf("a refusal must be final and not retryable: %+v", taxonomy.InfoOf(err))
						}
					}
				}
				if got := ct.n.Load() - before; got != int64(c.want) {
					t.Fatalf("%d executions in a run, want %d", got, c.want)
				}
			}
		})
	}
}

// TestConcurrentCallsHoldTheLimit: 100 goroutines racing a tool declared
// Once (and Max 5) in one run: exactly one (five) execute, every other
// call is refused, and every call ends in exactly one outcome.
func TestConcurrentCallsHoldTheLimit(t *testing.T) {
	for _, n := range []int{1, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			const callers = 100
			ct := &counted{}
			tool := wrap(t, "cancel_booking", ct.tool, runlimit.New(runlimit.Max("cancel_booking", n)))
			ctx := budget.WithRun(context.Background())
			var ok, refused atomic.Int64
			start := make(chan struct{})
			var wg sync.WaitGroup
			for range callers {
				wg.Go(func() {
					<-start
					switch _, err := tool(ctx, nil); {
					case err == nil:
						ok.Add(1)
					case isCallLimit(err):
						refused.Add(1)
					default:
						t.Errorf("unexpected outcome %v", err)
					}
				})
			}
			close(start)
			wg.Wait()
			if ct.n.Load() != int64(n) || ok.Load() != int64(n) || refused.Load() != callers-int64(n) {
				t.Fatalf("%d executions, %d ok, %d refused; want %d, %d, %d", ct.n.Load(), ok.Load(), refused.Load(), n, n, callers-n)
			}
		})
	}
}

// TestCallsNotAttempts: through the real retry layer inside it, a call
// that takes three attempts is one call: the tool runs three times, and
// the next call of a tool declared Once is refused.
func TestCallsNotAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int64
		flaky := func(context.Context, json.RawMessage) (toolmw.Result, error) {
			if n.Add(1) < 3 {
				return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier busy")
			}
			return toolmw.Text("cancelled"), nil
		}
		tool := wrap(t, "cancel_booking", flaky,
			runlimit.New(runlimit.Once("cancel_booking")),
			retry.New(retry.WithMaxAttempts(3), retry.WithBackoff(time.Millisecond, time.Millisecond), retry.WithoutBudget()))
		ctx := budget.WithRun(context.Background())
		if _, err := tool(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if n.Load() != 3 {
			t.Fatalf("%d attempts, want 3", n.Load())
		}
		if _, err := tool(ctx, nil); !isCallLimit(err) {
			t.Fatalf("second call: %v, want run_call_limit", err)
		}
		if n.Load() != 3 {
			t.Fatal("the refused call ran the tool")
		}
	})
}

// TestWhatCounts: a call that ended in an error saying it had no effect
// gives its slot back, so the next call runs; any other outcome keeps it.
func TestWhatCounts(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		panic bool
		back  bool
	}{
		{"success", nil, false, false},
		{"rate limited", taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeRateLimited, "slow down"), false, true},
		{"bulkhead full", taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeBulkheadFull, "full"), false, true},
		{"circuit open", taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "open"), false, true},
		{"not permitted", taxonomy.NotPermitted(taxonomy.CodeNotPermitted, "no"), false, true},
		{"args invalid", taxonomy.ArgsInvalid(), false, true},
		{"budget exceeded", taxonomy.New(taxonomy.KindBudgetExceeded, taxonomy.CodeSpendLimit, "spent"), false, true},
		{"approval pending", taxonomy.New(taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending, "wait"), false, true},
		{"approval denied", taxonomy.New(taxonomy.KindApprovalDenied, taxonomy.CodeApprovalDenied, "no"), false, true},
		{"guardrail on arguments", taxonomy.New(taxonomy.KindGuardrailBlocked, taxonomy.CodeGuardrailArgs, "blocked"), false, true},
		{"too many abandoned", taxonomy.Transient(taxonomy.CodeTooManyAbandoned, "stuck"), false, true},
		{"transient, wrapped", fmt.Errorf("outer: %w", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down")), false, true},
		{"transient, final", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down").WithFinal(), false, true},
		{"guardrail on the result", taxonomy.New(taxonomy.KindGuardrailBlocked, taxonomy.CodeGuardrailResult, "blocked"), false, false},
		{"permanent failure", taxonomy.Failure("ledger_rejected", "no"), false, false},
		{"refusal", taxonomy.Refusal("booking_not_cancellable", "non-refundable"), false, false},
		{"timeout", taxonomy.Timeout(taxonomy.CodeTimeout, "slow", false), false, false},
		{"untyped", errors.New("boom"), false, false},
		{"cancelled", context.Canceled, false, false},
		{"transient wrapping a cancel", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down").WithCause(context.Canceled), false, false},
		// Unknown outcomes keep the slot however retryable they say they are.
		{"timeout of an idempotent call", taxonomy.Timeout(taxonomy.CodeTimeout, "slow", true), false, false},
		{"upstream timeout, retryable", taxonomy.Timeout(taxonomy.CodeUpstreamTimeout, "slow", true), false, false},
		{"reset, retryable", taxonomy.New(taxonomy.KindFailed, taxonomy.CodeConnectionReset, "reset").WithRetryable(true), false, false},
		{"unmapped, retryable", taxonomy.New(taxonomy.KindFailed, taxonomy.CodeUnmappedFailure, "?").WithRetryable(true), false, false},
		{"retry budget empty after a timeout", taxonomy.New(taxonomy.KindRetryBudgetExhausted, taxonomy.CodeRetryBudgetExhausted, "empty").
			WithCause(taxonomy.Timeout(taxonomy.CodeTimeout, "slow", true)), false, false},
		{"retry budget empty after a transient", taxonomy.New(taxonomy.KindRetryBudgetExhausted, taxonomy.CodeRetryBudgetExhausted, "empty").
			WithCause(taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down")), false, true},
		{"a tool's failure with circuit_open's code", taxonomy.Failure(taxonomy.CodeCircuitOpen, "not a breaker"), false, false},
		{"panic", nil, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var n atomic.Int64
			tool := wrap(t, "book", func(context.Context, json.RawMessage) (toolmw.Result, error) {
				if n.Add(1) == 1 {
					if c.panic {
						panic("boom")
					}
					return toolmw.Result{}, c.err
				}
				return toolmw.Text("ok"), nil
			}, runlimit.New(runlimit.Once("book")))
			ctx := budget.WithRun(context.Background())
			func() {
				defer func() {
					if r := recover(); (r != nil) != c.panic {
						t.Fatalf("recovered %v", r)
					}
				}()
				_, _ = tool(ctx, nil)
			}()
			_, err := tool(ctx, nil)
			if c.back && err != nil {
				t.Fatalf("the slot was not given back: %v", err)
			}
			if !c.back && !isCallLimit(err) {
				t.Fatalf("the slot was given back: second call %v", err)
			}
		})
	}
}

// TestWithoutRun: a limited tool called without a run is refused and does
// not run; a tool without a limit runs.
func TestWithoutRun(t *testing.T) {
	mw := runlimit.New(runlimit.Once("cancel_booking"))
	limited, free := &counted{}, &counted{}
	a := wrap(t, "cancel_booking", limited.tool, mw)
	b := wrap(t, "weather", free.tool, mw)
	for range 3 {
		if _, err := a(context.Background(), nil); !isCallLimit(err) {
			t.Fatalf("no run: %v, want run_call_limit", err)
		}
		if _, err := b(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if limited.n.Load() != 0 || free.n.Load() != 3 {
		t.Fatalf("executions: limited %d, free %d", limited.n.Load(), free.n.Load())
	}
}

// TestNotUnderWrap: a Tool applied by hand (no toolmw.Call, tool name "")
// is never limited: "" is not a tool name a limit can name.
func TestNotUnderWrap(t *testing.T) {
	ct := &counted{}
	tool := runlimit.New(runlimit.Once("book"))(ct.tool)
	ctx := budget.WithRun(context.Background())
	for range 3 {
		if _, err := tool(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		opts []runlimit.Option
		bad  bool
	}{
		{"none", nil, false},
		{"nil option", []runlimit.Option{nil}, false},
		{"once", []runlimit.Option{runlimit.Once("cancel_booking")}, false},
		{"the same limit twice", []runlimit.Option{runlimit.Max("search", 2), runlimit.Max("search", 2)}, false},
		{"largest", []runlimit.Option{runlimit.Max("search", runlimit.MaxCalls)}, false},
		{"not a tool name", []runlimit.Option{runlimit.Once("cancel booking")}, true},
		{"empty name", []runlimit.Option{runlimit.Once("")}, true},
		{"zero", []runlimit.Option{runlimit.Max("search", 0)}, true},
		{"negative", []runlimit.Option{runlimit.Max("search", -1)}, true},
		{"too many", []runlimit.Option{runlimit.Max("search", runlimit.MaxCalls+1)}, true},
		{"two limits for one tool", []runlimit.Option{runlimit.Once("search"), runlimit.Max("search", 2)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := runlimit.Validate(c.opts...)
			_, werr := toolmw.Wrap(toolmw.Spec{Name: "search"}, (&counted{}).tool, runlimit.New(c.opts...))
			for how, err := range map[string]error{"Validate": err, "Wrap": werr} {
				info := taxonomy.InfoOf(err)
				if c.bad != (err != nil) || c.bad && (info.Kind != taxonomy.KindDefinitionInvalid || info.Code != taxonomy.CodeOptionInvalid) {
					t.Fatalf("%s: %v (bad: %v)", how, err, c.bad)
				}
			}
		})
	}
}

// TestOffWithoutLimits: New without limits returns the tool unchanged.
func TestOffWithoutLimits(t *testing.T) {
	ct := &counted{}
	var tool toolmw.Tool = ct.tool
	if got := runlimit.New()(tool); reflect.ValueOf(got).Pointer() != reflect.ValueOf(tool).Pointer() {
		t.Fatal("New() wrapped the tool")
	}
}
