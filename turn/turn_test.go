package turn_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// box is a turn.Caller whose tools are functions by name.
type box map[string]func(ctx context.Context, args json.RawMessage) (toolmw.Result, error)

func (b box) Call(ctx context.Context, name string, args json.RawMessage) (toolmw.Result, error) {
	f, ok := b[name]
	if !ok {
		return toolmw.Result{}, turn.NotOffered(name)
	}
	return f(ctx, args)
}

// TestRunOrderAndBound: answers come in the calls' order whatever order the
// calls end in; at most MaxParallel run at a time (DefaultMaxParallel for
// 0).
func TestRunOrderAndBound(t *testing.T) {
	for _, c := range []struct{ max, want int }{{0, turn.DefaultMaxParallel}, {1, 1}, {3, 3}, {100, 20}} {
		t.Run(strconv.Itoa(c.max), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var running, peak atomic.Int64
				b := box{"echo": func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
					n := running.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					defer running.Add(-1)
					var d int
					_ = json.Unmarshal(args, &d)
					time.Sleep(time.Duration(d) * time.Millisecond) // later calls end first
					return toolmw.Text(string(args)), nil
				}}
				var cs []turn.Call
				for i := range 20 {
					cs = append(cs, turn.Call{ID: "call_" + strconv.Itoa(i), Name: "echo", Args: json.RawMessage(strconv.Itoa(100 - i))})
				}
				answers := turn.Run(context.Background(), b, cs, turn.Options{MaxParallel: c.max})
				for i, a := range answers {
					if a.Err != nil || a.Text != toolmw.ForModel(toolmw.Text(string(cs[i].Args)), nil) {
						t.Errorf("answer %d = %q, %v; want %q", i, a.Text, a.Err, cs[i].Args)
					}
				}
				if p := peak.Load(); p != int64(c.want) {
					t.Errorf("peak %d calls at a time, want %d", p, c.want)
				}
			})
		})
	}
}

// TestRunContains: a refused call is answered without reaching the box; a
// tool's runtime.Goexit ends its call as tool_exited and the other calls
// still run; a panic is re-raised to Run's caller once the other calls are
// done; once the context is done, the calls not started are answered with
// its error.
func TestRunContains(t *testing.T) {
	var reached atomic.Int64
	b := box{
		"ok": func(context.Context, json.RawMessage) (toolmw.Result, error) {
			reached.Add(1)
			return toolmw.Text("ok"), nil
		},
		"exit": func(context.Context, json.RawMessage) (toolmw.Result, error) {
			runtime.Goexit()
			return toolmw.Result{}, nil
		},
		"panics": func(context.Context, json.RawMessage) (toolmw.Result, error) { panic("boom") },
	}
	refusal := turn.NotOffered("secret_tool")
	answers := turn.Run(context.Background(), b, []turn.Call{
		{ID: "1", Name: "secret_tool", Refused: refusal}, {ID: "2", Name: "exit"}, {ID: "3", Name: "ok"}, {ID: "4", Name: "exit"}, {ID: "5", Name: "ok"},
	}, turn.Options{MaxParallel: 1})
	if !errors.Is(answers[0].Err, refusal) || taxonomy.InfoOf(answers[0].Err).Code != taxonomy.CodeToolNotFound {
		t.Errorf("a refused call: %v", answers[0].Err)
	}
	for _, i := range []int{1, 3} {
		if taxonomy.InfoOf(answers[i].Err).Code != taxonomy.CodeToolExited {
			t.Errorf("answer %d of a tool that called Goexit: %v, want tool_exited", i, answers[i].Err)
		}
	}
	if okText := toolmw.ForModel(toolmw.Text("ok"), nil); reached.Load() != 2 || answers[2].Text != okText || answers[4].Text != okText {
		t.Errorf("the other calls: %d ran; %q, %q", reached.Load(), answers[2].Text, answers[4].Text)
	}

	reached.Store(0)
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the tool's panic", p)
			}
			if reached.Load() != 3 {
				t.Errorf("%d other calls ran before the panic was re-raised, want 3", reached.Load())
			}
		}()
		turn.Run(context.Background(), b, []turn.Call{{Name: "ok"}, {Name: "panics"}, {Name: "ok"}, {Name: "ok"}}, turn.Options{MaxParallel: 2})
		t.Error("Run returned; want the panic re-raised")
	}()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reached.Store(0)
	answers = turn.Run(ctx, b, []turn.Call{{Name: "ok"}, {Name: "ok"}}, turn.Options{})
	if reached.Load() != 0 || !errors.Is(answers[0].Err, context.Canceled) || !errors.Is(answers[1].Err, context.Canceled) {
		t.Errorf("with the context done: %d ran; %v, %v", reached.Load(), answers[0].Err, answers[1].Err)
	}
	if err := turn.StopOf(ctx, answers); !isStop(err, taxonomy.KindCancelled) || !errors.Is(err, context.Canceled) {
		t.Errorf("StopOf with the context done: %v", err)
	}
}

// TestRunCountsCalls: with CountCalls, each call takes an attempt from the
// run budget, and a call past the cap is refused without running.
func TestRunCountsCalls(t *testing.T) {
	var ran atomic.Int64
	b := box{"search": func(context.Context, json.RawMessage) (toolmw.Result, error) {
		ran.Add(1)
		return toolmw.Text("ok"), nil
	}}
	ctx := budget.WithRun(context.Background(), budget.WithMaxAttempts(2))
	cs := []turn.Call{{Name: "search"}, {Name: "search"}, {Name: "search"}}
	answers := turn.Run(ctx, b, cs, turn.Options{CountCalls: true, MaxParallel: 1})
	if ran.Load() != 2 || taxonomy.InfoOf(answers[2].Err).Code != taxonomy.CodeRunAttemptsExhausted {
		t.Errorf("%d ran, the third %v; want 2 and run_attempts_exhausted", ran.Load(), answers[2].Err)
	}
	if ran.Store(0); turn.Run(ctx, b, cs, turn.Options{})[2].Err != nil || ran.Load() != 3 {
		t.Errorf("without CountCalls the budget is not asked: %d ran", ran.Load())
	}
}

func isStop(err error, kind taxonomy.Kind) bool {
	var s *turn.Stop
	return errors.As(err, &s) && s.Kind == kind && taxonomy.InfoOf(err).Kind == kind
}

// TestStopOf: the loop stops when every call found its circuit open (with
// the shortest wait), when every call was refused by the run budget or
// open circuits, and pauses when a call waits for approval (with the
// approval ids in order); any other answer lets it go on.
func TestStopOf(t *testing.T) {
	open := func(d time.Duration) turn.Answer {
		return turn.Answer{Err: taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "open").WithRetryAfter(d)}
	}
	spent := turn.Answer{Err: taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunAttemptsExhausted, "spent")}
	pending := func(id string) turn.Answer {
		return turn.Answer{Err: taxonomy.New(taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending, "wait").
			WithApproval(id, "a payment")}
	}
	ok := turn.Answer{Text: "ok"}
	failed := turn.Answer{Err: taxonomy.Failure("booking_failed", "no")}
	bg := context.Background()

	err := turn.StopOf(bg, []turn.Answer{open(3 * time.Second), open(time.Second)})
	var s *turn.Stop
	if !isStop(err, taxonomy.KindCircuitOpen) || !errors.As(err, &s) || s.RetryAfter != time.Second || !errors.Is(err, taxonomy.ErrCircuitOpen) {
		t.Errorf("all circuits open: %v", err)
	}
	if err := turn.StopOf(bg, []turn.Answer{open(time.Second), spent}); !isStop(err, taxonomy.KindRunLimitExceeded) {
		t.Errorf("open and spent: %v", err)
	}
	err = turn.StopOf(bg, []turn.Answer{ok, pending("apr_1"), pending("apr_2")})
	if !isStop(err, taxonomy.KindApprovalPending) || !errors.As(err, &s) || len(s.Approvals) != 2 || s.Approvals[0] != "apr_1" {
		t.Errorf("pending approvals: %v", err)
	}
	for _, as := range [][]turn.Answer{nil, {ok}, {open(time.Second), ok}, {spent, failed}} {
		if err := turn.StopOf(bg, as); err != nil {
			t.Errorf("StopOf(%v) = %v, want nil", as, err)
		}
	}
}

// TestRunConcurrentTurns: turns run at once on one Toolbox are
// independent, and each call's context carries its own call id.
func TestRunConcurrentTurns(t *testing.T) {
	b := toolmw.NewToolbox()
	if err := b.Register(toolmw.Spec{Name: "echo"}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		call, _ := toolmw.CallFrom(ctx)
		return toolmw.Text(call.ID), nil
	}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			cs := []turn.Call{{ID: strconv.Itoa(g) + "a", Name: "echo"}, {ID: strconv.Itoa(g) + "b", Name: "echo"}}
			for i, a := range turn.Run(context.Background(), b, cs, turn.Options{}) {
				if a.Text != toolmw.ForModel(toolmw.Text(cs[i].ID), nil) {
					t.Errorf("turn %d answer %d = %q", g, i, a.Text)
				}
			}
		})
	}
	wg.Wait()
}
