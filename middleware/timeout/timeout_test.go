package timeout_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/timeout"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// limit is the per-attempt timeout of the tests. They wait for it in a
// testing/synctest bubble, whose fake time moves at once when every
// goroutine in it is blocked: a deadline costs no real time.
const limit = 2 * time.Second

// cooperative waits for its context and returns its error.
func cooperative(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	<-ctx.Done()
	return toolmw.Result{}, ctx.Err()
}

func wrap(idempotent bool, tool toolmw.Tool, mw toolmw.Middleware) toolmw.Tool {
	return toolmw.MustWrap(toolmw.Spec{Name: "lookup", Idempotent: idempotent}, tool, mw)
}

func TestCooperativeTimeout(t *testing.T) {
	for _, idempotent := range []bool{true, false} {
		var err error
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			_, err = wrap(idempotent, cooperative, timeout.New(limit))(context.Background(), nil)
			if waited := time.Since(start); waited != limit {
				t.Fatalf("the attempt ended after %v, want %v", waited, limit)
			}
		})
		var te taxonomy.Error
		if !errors.As(err, &te) || te.Kind() != taxonomy.KindTimeout || te.Code() != taxonomy.CodeTimeout {
			t.Fatalf("idempotent=%v: got %v, want tool-timeout/timeout", idempotent, err)
		}
		if te.Retryable() != idempotent {
			t.Errorf("idempotent=%v: retryable = %v", idempotent, te.Retryable())
		}
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, taxonomy.ErrTimeout) {
			t.Errorf("the timeout does not match context.DeadlineExceeded and ErrTimeout: %v", err)
		}
		if te.Tool() != "lookup" {
			t.Errorf("tool = %q", te.Tool())
		}
		if retry, _ := taxonomy.ShouldRetry(err, idempotent); retry != idempotent {
			t.Errorf("idempotent=%v: ShouldRetry = %v", idempotent, retry)
		}
	}
}

func TestSuccessAfterTheDeadlineIsKept(t *testing.T) {
	tool := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		<-ctx.Done() // the work finished anyway
		return toolmw.Text("booked"), nil
	}
	synctest.Test(t, func(t *testing.T) {
		res, err := wrap(false, tool, timeout.New(limit))(context.Background(), nil)
		if err != nil || res.Content != "booked" {
			t.Fatalf("got %v, %v; want the late success", res, err)
		}
	})
}

func TestToolErrorBeforeTheDeadlineIsUnchanged(t *testing.T) {
	refusal := taxonomy.Refusal("booking_not_cancellable", "no")
	untyped := errors.New("boom")
	for _, want := range []error{refusal, untyped} {
		tool := func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Result{}, want }
		_, err := timeout.New(time.Hour)(tool)(context.Background(), nil)
		if err != want {
			t.Fatalf("got %v, want %v unchanged", err, want)
		}
	}
}

func TestAttemptDeadline(t *testing.T) {
	var got context.Context
	tool := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		got = ctx
		return toolmw.Text("ok"), nil
	}
	now := time.Now()
	clk := clock.NewFake(now)

	t.Run("no parent deadline", func(t *testing.T) {
		timeout.New(time.Minute, timeout.WithClock(clk))(tool)(context.Background(), nil)
		if dl, ok := got.Deadline(); !ok || !dl.Equal(now.Add(time.Minute)) {
			t.Fatalf("deadline %v, %v; want now+1m", dl, ok)
		}
		if got.Err() == nil {
			t.Fatal("the attempt's context was not cancelled on return")
		}
	})
	t.Run("parent later", func(t *testing.T) {
		parent, cancel := context.WithDeadline(context.Background(), now.Add(time.Hour))
		defer cancel()
		timeout.New(time.Minute, timeout.WithClock(clk))(tool)(parent, nil)
		if dl, _ := got.Deadline(); !dl.Equal(now.Add(time.Minute)) {
			t.Fatalf("deadline %v, want now+1m", dl)
		}
	})
	for _, tc := range []struct {
		name   string
		parent time.Duration
	}{{"parent sooner", 30 * time.Second}, {"parent at the same time", time.Minute}} {
		t.Run(tc.name, func(t *testing.T) {
			parent, cancel := context.WithDeadline(context.Background(), now.Add(tc.parent))
			defer cancel()
			for _, opts := range [][]timeout.Option{nil, {timeout.WithAbandon(), timeout.WithOnLate(func(timeout.Late) {})}} {
				timeout.New(time.Minute, append(opts, timeout.WithClock(clk))...)(tool)(parent, nil)
				if got != parent {
					t.Fatalf("the tool got a new context %v; want the parent's, no timer", got)
				}
			}
		})
	}
}

func TestParentCancelled(t *testing.T) {
	for _, opts := range [][]timeout.Option{nil, {timeout.WithAbandon(), timeout.WithOnLate(func(timeout.Late) {})}} {
		ctx, cancel := context.WithCancel(context.Background())
		tool := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			cancel()
			<-ctx.Done()
			return toolmw.Result{}, ctx.Err()
		}
		_, err := wrap(true, tool, timeout.New(time.Hour, opts...))(ctx, nil)
		if err != context.Canceled {
			t.Fatalf("abandon=%v: got %v, want context.Canceled as is", opts != nil, err)
		}
	}
}

func TestParentDeadlinePassed(t *testing.T) {
	var err error
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		_, err = wrap(true, cooperative, timeout.New(time.Hour))(ctx, nil)
	})
	var te taxonomy.Error
	if !errors.As(err, &te) || te.Code() != taxonomy.CodeDeadlineExceeded || te.Kind() != taxonomy.KindTimeout {
		t.Fatalf("got %v, want tool-timeout/deadline_exceeded", err)
	}
	if te.Retryable() {
		t.Fatal("a passed caller deadline is retryable")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("does not match context.DeadlineExceeded")
	}
}

func TestOff(t *testing.T) {
	tool := toolmw.Tool(cooperative)
	if got := timeout.New(0)(tool); reflect.ValueOf(got).Pointer() != reflect.ValueOf(tool).Pointer() {
		t.Fatal("New(0) did not return the tool unchanged")
	}
}

// A negative timeout makes a toolmw.Reject middleware: Wrap reports it at
// start-up.
func TestNegativeIsReported(t *testing.T) {
	_, err := toolmw.Wrap(toolmw.Spec{Name: "lookup"}, cooperative, timeout.New(-time.Second))
	if err == nil || err.Error() != "lookup: "+timeout.Validate(-time.Second).Error() {
		t.Fatalf("Wrap = %v, want %v", err, timeout.Validate(-time.Second))
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    time.Duration
		opts []timeout.Option
		ok   bool
	}{
		{"off", 0, nil, true},
		{"good", time.Second, []timeout.Option{timeout.WithAbandon(), timeout.WithOnLate(func(timeout.Late) {}), timeout.WithClock(clock.System)}, true},
		{"nil means the default", time.Second, []timeout.Option{timeout.WithOnLate(nil), timeout.WithClock(nil), nil}, true},
		{"WithAbandon without WithOnLate", time.Second, []timeout.Option{timeout.WithAbandon()}, false},
		{"negative", -time.Second, nil, false},
	} {
		err := timeout.Validate(tc.d, tc.opts...)
		if (err == nil) != tc.ok {
			t.Errorf("%s: Validate = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
			t.Errorf("%s: code %s", tc.name, taxonomy.InfoOf(err).Code)
		}
	}
}

// WithOnLate(nil) and WithClock(nil) are the defaults: a cooperative
// layer on package time.
func TestNilOptionsAreDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := wrap(true, cooperative, timeout.New(limit, timeout.WithOnLate(nil), timeout.WithClock(nil)))(context.Background(), nil)
		if taxonomy.InfoOf(err).Code != taxonomy.CodeTimeout {
			t.Fatalf("got %v, want tool-timeout/timeout", err)
		}
	})
}

// An abandoned call returns at its deadline; what the tool returns later
// is reported with the call and how late it came.
func TestAbandonReportsLateResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		lates := make(chan timeout.Late, 1)
		stubborn := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			<-release // ignores ctx
			return toolmw.Text("booked"), errors.New("late failure")
		}
		tool := wrap(false, stubborn, timeout.New(limit, timeout.WithAbandon(), timeout.WithOnLate(func(l timeout.Late) { lates <- l })))
		ctx := toolmw.WithCallID(context.Background(), "call_1")

		start := time.Now()
		_, err := tool(ctx, nil)
		if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeTimeout || info.Retryable || time.Since(start) != limit {
			t.Fatalf("got %v after %v, want a non-retryable tool-timeout/timeout after %v", err, time.Since(start), limit)
		}
		time.Sleep(5 * time.Second)
		close(release)
		l := <-lates
		if l.Call.Tool != "lookup" || l.Call.ID != "call_1" || l.Result.Content != "booked" || l.Err == nil || l.Err.Error() != "late failure" {
			t.Fatalf("late = %+v", l)
		}
		if l.After != 5*time.Second {
			t.Fatalf("late by %v, want 5s", l.After)
		}
		// synctest.Test waits for the tool's goroutine to end.
	})
}

// WithClock's clock measures how late an abandoned call came.
func TestAbandonLateByTheClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(time.Now())
		release := make(chan struct{})
		lates := make(chan timeout.Late, 1)
		stubborn := func(context.Context, json.RawMessage) (toolmw.Result, error) {
			<-release
			return toolmw.Text("booked"), nil
		}
		tool := wrap(false, stubborn, timeout.New(limit, timeout.WithClock(clk), timeout.WithAbandon(), timeout.WithOnLate(func(l timeout.Late) { lates <- l })))
		abandoned := make(chan struct{})
		go func() {
			tool(context.Background(), nil)
			close(abandoned)
		}()
		clk.WaitForTimers(1)
		clk.Advance(limit) // the deadline, on the fake clock
		<-abandoned
		clk.Advance(time.Minute)
		close(release)
		if l := <-lates; l.After != time.Minute {
			t.Fatalf("late by %v, want the fake clock's minute", l.After)
		}
	})
}

func TestAbandonPromptTool(t *testing.T) {
	tool := func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }
	failing := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Refusal("no_seats", "full")
	}
	onLate := func(l timeout.Late) { t.Errorf("a prompt call was reported late: %+v", l) }
	mw := timeout.New(time.Hour, timeout.WithAbandon(), timeout.WithOnLate(onLate))
	if res, err := mw(tool)(context.Background(), nil); err != nil || res.Content != "ok" {
		t.Fatalf("got %v, %v", res, err)
	}
	if _, err := mw(failing)(context.Background(), nil); taxonomy.InfoOf(err).Code != "no_seats" {
		t.Fatalf("got %v, want the refusal unchanged", err)
	}
}

func TestAbandonPanic(t *testing.T) {
	t.Run("caller waiting", func(t *testing.T) {
		tool := func(context.Context, json.RawMessage) (toolmw.Result, error) { panic("boom") }
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v, want the tool's panic re-raised", p)
			}
		}()
		timeout.New(time.Hour, timeout.WithAbandon(), timeout.WithOnLate(func(timeout.Late) {}))(tool)(context.Background(), nil)
	})
	t.Run("abandoned", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			lates := make(chan timeout.Late, 1)
			tool := func(context.Context, json.RawMessage) (toolmw.Result, error) {
				<-release
				panic("boom")
			}
			_, err := timeout.New(limit, timeout.WithAbandon(), timeout.WithOnLate(func(l timeout.Late) { lates <- l }))(tool)(context.Background(), nil)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v, want the timeout", err)
			}
			close(release)
			l := <-lates
			if l.Panic != "boom" || taxonomy.InfoOf(l.Err).Code != taxonomy.CodeToolPanicked {
				t.Fatalf("late = %+v, want the panic reported", l)
			}
		})
	})
}

func okTool(context.Context, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Result{Content: "ok"}, nil
}

func benchmark(b *testing.B, ctx context.Context, mws ...toolmw.Middleware) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "lookup"}, okTool, mws...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrapOnly is the baseline: Wrap with no layer.
func BenchmarkWrapOnly(b *testing.B) { benchmark(b, context.Background()) }

// BenchmarkTimeout is the success path of the cooperative layer alone.
func BenchmarkTimeout(b *testing.B) { benchmark(b, context.Background(), timeout.New(time.Second)) }

// BenchmarkTimeoutParentSooner: the caller's deadline comes first, no timer.
func BenchmarkTimeoutParentSooner(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	benchmark(b, ctx, timeout.New(time.Hour))
}

// BenchmarkTimeoutAbandon is the success path in abandon mode.
func BenchmarkTimeoutAbandon(b *testing.B) {
	benchmark(b, context.Background(), timeout.New(time.Second, timeout.WithAbandon(), timeout.WithOnLate(func(timeout.Late) {})))
}

// TestMaxAbandoned: a tool that ignores its context and never returns until
// released. With the default bound, 1000 calls leave at most
// DefaultMaxAbandoned goroutines behind (not 1000): the others are refused
// at once as too_many_abandoned, retryable. Once the abandoned executions
// return (each reported late), calls are accepted again.
func TestMaxAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var late atomic.Int32
		tool := toolmw.MustWrap(toolmw.Spec{Name: "stuck", Idempotent: true}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			<-release
			return toolmw.Text("late"), nil
		}, timeout.New(time.Second, timeout.WithAbandon(), timeout.WithOnLate(func(timeout.Late) { late.Add(1) })))

		before := testutil.Goroutines()
		refused := 0
		for range 1000 {
			_, err := tool(context.Background(), nil)
			switch info := taxonomy.InfoOf(err); info.Code {
			case taxonomy.CodeTimeout:
			case taxonomy.CodeTooManyAbandoned:
				if !info.Retryable {
					t.Fatal("too_many_abandoned is not retryable")
				}
				refused++
			default:
				t.Fatalf("unexpected %v", err)
			}
		}
		grew := testutil.Goroutines() - before
		t.Logf("1000 calls to a stuck tool: %d goroutines left behind, %d calls refused", grew, refused)
		if grew > timeout.DefaultMaxAbandoned || refused != 1000-timeout.DefaultMaxAbandoned {
			t.Fatalf("%d goroutines left, %d refused; want at most %d left", grew, refused, timeout.DefaultMaxAbandoned)
		}
		close(release)
		synctest.Wait()
		if late.Load() != timeout.DefaultMaxAbandoned {
			t.Fatalf("%d late reports, want %d", late.Load(), timeout.DefaultMaxAbandoned)
		}
		if res, err := tool(context.Background(), nil); err != nil || res.Content != "late" {
			t.Fatalf("after the abandoned executions returned, a call is accepted again; got %v %v", res, err)
		}
		synctest.Wait()
	})
}

// TestGoexitWhenAbandonable: in abandon mode the tool runs on a goroutine of
// its own, so a runtime.Goexit ends the call as tool_exited.
func TestGoexitWhenAbandonable(t *testing.T) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "exits"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		runtime.Goexit()
		return toolmw.Result{}, nil
	}, timeout.New(time.Second, timeout.WithAbandon(), timeout.WithOnLate(func(timeout.Late) {})))
	if _, err := tool(context.Background(), nil); taxonomy.InfoOf(err).Code != taxonomy.CodeToolExited {
		t.Fatalf("got %v, want tool_exited", err)
	}
}

// TestMaxAbandonedConcurrent: 400 callers at once of a tool that ignores its
// context. The bound is held exactly whatever the concurrency: at most
// DefaultMaxAbandoned executions are ever running on the layer's
// goroutines, so at most that many are abandoned, and every other call is
// refused at once as too_many_abandoned, without starting the tool.
func TestMaxAbandonedConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const callers = 400
		release := make(chan struct{})
		var started, running, peak, late atomic.Int64
		tool := toolmw.MustWrap(toolmw.Spec{Name: "stuck", Idempotent: true}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			started.Add(1)
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			<-release
			running.Add(-1)
			return toolmw.Text("late"), nil
		}, timeout.New(time.Second, timeout.WithAbandon(), timeout.WithOnLate(func(timeout.Late) { late.Add(1) })))

		var timedOut, refused atomic.Int64
		gate := make(chan struct{})
		done := make(chan struct{})
		for range callers {
			go func() {
				defer func() { done <- struct{}{} }()
				<-gate
				_, err := tool(context.Background(), nil)
				switch info := taxonomy.InfoOf(err); info.Code {
				case taxonomy.CodeTimeout:
					timedOut.Add(1)
				case taxonomy.CodeTooManyAbandoned:
					if !info.Retryable {
						t.Error("too_many_abandoned is not retryable")
					}
					refused.Add(1)
				default:
					t.Errorf("unexpected %v", err)
				}
			}()
		}
		synctest.Wait() // every caller waits at the gate
		close(gate)
		for range callers {
			<-done
		}
		t.Logf("%d concurrent callers of a stuck tool: %d abandoned, %d refused, %d started, peak %d running",
			callers, timedOut.Load(), refused.Load(), started.Load(), peak.Load())
		if timedOut.Load() != timeout.DefaultMaxAbandoned || refused.Load() != callers-timeout.DefaultMaxAbandoned {
			t.Errorf("%d abandoned, %d refused; want exactly %d abandoned and %d refused",
				timedOut.Load(), refused.Load(), timeout.DefaultMaxAbandoned, callers-timeout.DefaultMaxAbandoned)
		}
		if started.Load() > timeout.DefaultMaxAbandoned || peak.Load() > timeout.DefaultMaxAbandoned {
			t.Errorf("%d executions started, peak %d; want at most %d", started.Load(), peak.Load(), timeout.DefaultMaxAbandoned)
		}
		close(release)
		synctest.Wait()
		if late.Load() != timedOut.Load() {
			t.Errorf("%d late reports, want %d", late.Load(), timedOut.Load())
		}
		if res, err := tool(context.Background(), nil); err != nil || res.Content != "late" {
			t.Fatalf("once the abandoned executions returned, a call is accepted again; got %v %v", res, err)
		}
	})
}
