package recovery_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/recovery"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" // a GitHub token shape: 36 characters after the prefix

// seen keeps the panics a handler receives.
type seen struct {
	mu     sync.Mutex
	events []recovery.PanicEvent
	vals   []any
}

func (s *seen) handle(_ context.Context, e recovery.PanicEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
	s.vals = append(s.vals, e.Value)
}

func panicking(v any) toolmw.Tool {
	return func(context.Context, json.RawMessage) (toolmw.Result, error) { panic(v) }
}

func TestPanicBecomesToolPanicked(t *testing.T) {
	for _, v := range []any{
		"token " + secret,
		fmt.Errorf("auth with %s failed", secret),
		struct{ Token string }{secret},
		[]byte(secret),
	} {
		s := &seen{}
		tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, panicking(v), recovery.New(recovery.WithOnPanic(s.handle)))
		res, err := tool(toolmw.WithCallID(context.Background(), "call_7"), json.RawMessage(`{}`))
		te, ok := taxonomy.From(err)
		if !ok || te.Kind() != taxonomy.KindFailed || te.Code() != taxonomy.CodeToolPanicked || te.Retryable() || te.Tool() != "book" {
			t.Fatalf("err = %v, want book: tool-failed/tool_panicked, permanent", err)
		}
		if !reflect.DeepEqual(res, toolmw.Result{}) {
			t.Fatalf("res = %+v, want the zero Result", res)
		}
		if retry, _ := taxonomy.ShouldRetry(err, true); retry {
			t.Fatal("a panic is retried")
		}
		info, _ := json.Marshal(taxonomy.InfoOf(err))
		problem, _ := json.Marshal(taxonomy.InfoOf(err).Problem())
		for what, text := range map[string]string{
			"Error()":  err.Error(),
			"Info":     string(info),
			"Problem":  string(problem),
			"ForModel": toolmw.ForModel(res, err),
			"%+v":      fmt.Sprintf("%+v", err),
		} {
			if strings.Contains(text, secret[4:]) {
				t.Fatalf("%s shows the secret: %s", what, text)
			}
		}
		if errors.Unwrap(err) != nil {
			t.Fatal("the error has a cause: the panic value could be reached")
		}
		if len(s.events) != 1 {
			t.Fatalf("handler ran %d times, want once", len(s.events))
		}
		e := s.events[0]
		if fmt.Sprint(e.Value) != fmt.Sprint(v) || e.Tool != "book" || e.CallID != "call_7" || e.Attempt != 1 || e.Time.IsZero() {
			t.Fatalf("handler got %+v for %v, want the panic value with the call", e, v)
		}
		if !strings.Contains(string(e.Stack), "panicking") {
			t.Fatalf("the stack does not show the panicking function:\n%s", e.Stack)
		}
	}
}

func TestPassesThrough(t *testing.T) {
	want := taxonomy.Refusal("no_seats", "the flight is full")
	tool := recovery.New()(func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("partial"), want
	})
	res, err := tool(context.Background(), nil)
	if err != want || res.Content != "partial" {
		t.Fatalf("got %+v, %v; want the tool's result and error untouched", res, err)
	}
}

func TestWithoutHandler(t *testing.T) {
	tool := recovery.New()(panicking(secret))
	if _, err := tool(context.Background(), nil); !errors.Is(err, taxonomy.ErrFailed) || strings.Contains(err.Error(), secret) {
		t.Fatalf("err = %v", err)
	}
}

func TestPanicNil(t *testing.T) {
	s := &seen{}
	tool := recovery.New(recovery.WithOnPanic(s.handle))(panicking(nil))
	_, err := tool(context.Background(), nil)
	if te, ok := taxonomy.From(err); !ok || te.Code() != taxonomy.CodeToolPanicked {
		t.Fatalf("err = %v, want tool_panicked", err)
	}
	var pn *runtime.PanicNilError
	if len(s.vals) != 1 || !errors.As(s.vals[0].(error), &pn) {
		t.Fatalf("handler got %v, want a *runtime.PanicNilError", s.vals)
	}
}

func TestGoexitIsNotStopped(t *testing.T) {
	s := &seen{}
	tool := recovery.New(recovery.WithOnPanic(s.handle))(func(context.Context, json.RawMessage) (toolmw.Result, error) {
		runtime.Goexit()
		return toolmw.Text("unreachable"), nil
	})
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		tool(context.Background(), nil)
		returned = true
	}()
	<-done
	if returned || len(s.vals) != 0 {
		t.Fatalf("returned = %v, handler calls = %d; want Goexit to end the goroutine without a handler call", returned, len(s.vals))
	}
}

func TestConcurrentPanics(t *testing.T) {
	s := &seen{}
	tool := recovery.New(recovery.WithOnPanic(s.handle))(panicking("boom"))
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := tool(context.Background(), nil); err == nil {
				t.Error("no error")
			}
		}()
	}
	wg.Wait()
	if len(s.vals) != 16 {
		t.Fatalf("handler ran %d times, want 16", len(s.vals))
	}
}

func TestHandlerPanicIsDropped(t *testing.T) {
	tool := recovery.New(recovery.WithOnPanic(func(context.Context, recovery.PanicEvent) {
		panic("handler bug")
	}))(panicking("boom"))
	if _, err := tool(context.Background(), nil); !errors.Is(err, taxonomy.ErrFailed) {
		t.Fatalf("err = %v, want the panic error", err)
	}
}

// A tool not made by toolmw.Wrap has no call: the event says so with zero
// fields.
func TestUnwrappedTool(t *testing.T) {
	s := &seen{}
	recovery.New(recovery.WithOnPanic(s.handle))(panicking("boom"))(context.Background(), nil)
	if len(s.events) != 1 || s.events[0].Tool != "" || s.events[0].CallID != "" || s.events[0].Attempt != 0 || s.events[0].Value != "boom" {
		t.Fatalf("events = %+v, want one without a call", s.events)
	}
}

func TestValidate(t *testing.T) {
	for _, opts := range [][]recovery.Option{nil, {nil}, {recovery.WithOnPanic(nil)}, {recovery.WithOnPanic((&seen{}).handle)}} {
		if err := recovery.Validate(opts...); err != nil {
			t.Errorf("Validate(%d options) = %v, want nil", len(opts), err)
		}
	}
	// nil is the default: no handler; the panic is still recovered.
	_, err := recovery.New(nil, recovery.WithOnPanic(nil))(panicking("boom"))(context.Background(), nil)
	if te, ok := taxonomy.From(err); !ok || te.Code() != taxonomy.CodeToolPanicked {
		t.Fatalf("err = %v, want tool_panicked", err)
	}
}

// TestGoexitContained: with WithGoexit, a tool that calls runtime.Goexit
// ends the call as tool-failed/tool_exited; the caller's goroutine goes on;
// panics and results are as without it.
func TestGoexitContained(t *testing.T) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "exits"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		runtime.Goexit()
		return toolmw.Text("unreachable"), nil
	}, recovery.New(recovery.WithGoexit()))
	_, err := tool(context.Background(), nil)
	if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindFailed || info.Code != taxonomy.CodeToolExited || info.Retryable {
		t.Fatalf("got %v, want a permanent tool-failed/tool_exited", err)
	}
	var seen recovery.PanicEvent
	panicky := toolmw.MustWrap(toolmw.Spec{Name: "panics"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		panic("boom")
	}, recovery.New(recovery.WithGoexit(), recovery.WithOnPanic(func(_ context.Context, e recovery.PanicEvent) { seen = e })))
	if _, err := panicky(context.Background(), nil); taxonomy.InfoOf(err).Code != taxonomy.CodeToolPanicked || seen.Value != "boom" || seen.Tool != "panics" {
		t.Fatalf("panic: %v, handler saw %+v", err, seen)
	}
	ok := toolmw.MustWrap(toolmw.Spec{Name: "ok"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("fine"), nil
	}, recovery.New(recovery.WithGoexit()))
	if res, err := ok(context.Background(), nil); err != nil || res.Content != "fine" {
		t.Fatalf("success: %v %v", res, err)
	}
}
