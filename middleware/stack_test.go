package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/redact"
	"github.com/toolmw/toolmw/middleware/result"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// mark returns a layer that appends its name to *log on the way in.
func mark(name string, log *[]string) middleware.Layer {
	return middleware.Layer{Name: name, Middleware: func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			*log = append(*log, name)
			return next(ctx, args)
		}
	}}
}

func noop(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }

func TestStackEditing(t *testing.T) {
	var log []string
	s, err := middleware.NewStack(mark("a", &log), mark("b", &log), mark("c", &log))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := s.Replace("b", mark("B", &log).Middleware)
	if err != nil {
		t.Fatal(err)
	}
	s3, err := s2.Remove("a")
	if err != nil {
		t.Fatal(err)
	}
	s4, err := s3.InsertBefore("c", mark("x", &log))
	if err != nil {
		t.Fatal(err)
	}
	s5, err := s4.InsertAfter("c", mark("y", &log))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "a → b → c → tool"; got != want {
		t.Fatalf("original changed: %s", got)
	}
	if got, want := s5.Names(), []string{"b", "x", "c", "y"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	tool, err := s5.Wrap(toolmw.Spec{Name: "t"}, noop)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tool(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	// "b" was replaced by a layer that logs "B" under the name "b".
	if want := []string{"B", "x", "c", "y"}; !reflect.DeepEqual(log, want) {
		t.Fatalf("call order %v, want %v", log, want)
	}
}

func TestStackErrors(t *testing.T) {
	var log []string
	s, _ := middleware.NewStack(mark("a", &log))
	for name, err := range map[string]error{
		"replace unknown":  second(s.Replace("zzz", mark("z", &log).Middleware)),
		"replace with nil": second(s.Replace("a", nil)),
		"remove unknown":   second(s.Remove("zzz")),
		"insert unknown":   second(s.InsertAfter("zzz", mark("z", &log))),
		"insert duplicate": second(s.InsertBefore("a", mark("a", &log))),
		"insert nil":       second(s.InsertBefore("a", middleware.Layer{Name: "n"})),
		"insert unnamed":   second(s.InsertBefore("a", middleware.Layer{Middleware: mark("z", &log).Middleware})),
		"new duplicate":    second(middleware.NewStack(mark("a", &log), mark("a", &log))),
	} {
		if !errors.Is(err, taxonomy.ErrDefinitionInvalid) {
			t.Errorf("%s: err = %v, want tool-definition-invalid", name, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestDefaultOrder(t *testing.T) {
	got := middleware.Default().String()
	want := "tracing → logging → events → retry → breaker → ratelimit → timeout → recovery → redact → classify → tool"
	if got != want {
		t.Fatalf("Default() = %s\nwant        %s", got, want)
	}
}

func TestDefaultEndToEnd(t *testing.T) {
	calls := 0
	flaky := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		calls++
		if calls < 2 {
			return toolmw.Result{}, taxonomy.Transient("supplier_busy", "busy, token=ghp_0123456789abcdefghijklmnopqrstuvwxyz")
		}
		return toolmw.Text("booked"), nil
	}
	stack := middleware.Default(middleware.WithRetry(retry.WithBackoff(0, 0)))
	tool, err := stack.Wrap(toolmw.Spec{Name: "book"}, flaky)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tool(context.Background(), nil)
	if err != nil || res.Content != "booked" || calls != 2 {
		t.Fatalf("res %+v err %v calls %d", res, err, calls)
	}

	refuse := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		calls++
		return toolmw.Result{}, taxonomy.Refusal("not_cancellable", "card 4111 1111 1111 1111 is not refundable")
	}
	calls = 0
	tool, _ = stack.Wrap(toolmw.Spec{Name: "cancel", Idempotent: true}, refuse)
	_, err = tool(context.Background(), nil)
	if calls != 1 || taxonomy.OutcomeOf(err) != taxonomy.OutcomeRefused {
		t.Fatalf("refusal: calls %d err %v", calls, err)
	}
	if told := toolmw.ForModel(toolmw.Result{}, err); strings.Contains(told, "4111") {
		t.Fatalf("redact layer did not scrub the refusal: %s", told)
	}

	untyped := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		calls++
		return toolmw.Result{}, errors.New("ledger write failed for bob@example.com")
	}
	calls = 0
	tool, _ = stack.Wrap(toolmw.Spec{Name: "pay"}, untyped)
	_, err = tool(context.Background(), nil)
	if te, _ := taxonomy.From(err); calls != 1 || te == nil || te.Code() != taxonomy.CodeUnmappedFailure {
		t.Fatalf("untyped non-idempotent: calls %d err %v", calls, err)
	}
}

func TestValidate(t *testing.T) {
	if err := middleware.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for name, opt := range map[string]middleware.Option{
		"attempts": middleware.WithRetry(retry.WithMaxAttempts(-1)),
		"timeout":  middleware.WithTimeout(-time.Second),
	} {
		if err := middleware.Validate(opt); !errors.Is(err, taxonomy.ErrDefinitionInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A caller's deadline that passes mid-call ends it with a typed timeout, not
// a bare context.DeadlineExceeded, and it is not retried. The deadline
// passes on the fake time of a testing/synctest bubble.
func TestDefaultCallerDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		slow := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			calls++
			<-ctx.Done()
			return toolmw.Result{}, ctx.Err()
		}
		tool, err := middleware.Default().Wrap(toolmw.Spec{Name: "slow", Idempotent: true}, slow)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		_, err = tool(ctx, nil)
		te, ok := taxonomy.From(err)
		if !ok || te.Kind() != taxonomy.KindTimeout || te.Code() != taxonomy.CodeDeadlineExceeded || te.Retryable() {
			t.Fatalf("err = %v, want tool-timeout/deadline_exceeded, not retryable", err)
		}
		if calls != 1 || time.Since(start) != 2*time.Second {
			t.Fatalf("called %d times in %v; want once, ending at the deadline", calls, time.Since(start))
		}
	})
}

// TestResultCapAfterScrubbing: with the result layer outside redact, as the
// docs place them, the size cap holds for the scrubbed result even when
// placeholders are longer than what they replace.
func TestResultCapAfterScrubbing(t *testing.T) {
	const limit = 200
	content := strings.Repeat("ip 10.0.0.1 ", limit/12) // fits; each IP becomes a longer placeholder
	if len(content) > limit {
		t.Fatalf("setup: %d bytes", len(content))
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "dump"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text(content), nil
	}, result.New(result.WithMaxBytes(limit)), redact.New(redact.WithResults()))
	res, err := tool(context.Background(), nil)
	if taxonomy.InfoOf(err).Code != taxonomy.CodeResultTooLarge || len(res.Content) > limit {
		t.Fatalf("got %d bytes, %v; want result_too_large for the scrubbed result", len(res.Content), err)
	}
}
