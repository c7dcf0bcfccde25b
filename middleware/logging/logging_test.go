package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/logging"
	"github.com/toolmw/toolmw/taxonomy"
)

// retryN stands in for the retry layer: up to n attempts while the error is
// retryable, advancing the Call's attempt.
func retryN(n int) toolmw.Middleware {
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			for i := 1; ; i++ {
				toolmw.SetAttempt(ctx, i)
				res, err := next(ctx, args)
				if retry, _ := taxonomy.ShouldRetry(err, false); !retry || i == n {
					return res, err
				}
			}
		}
	}
}

// failing returns a tool that advances the clock by step and returns err.
func failing(c *clock.Fake, step time.Duration, err error) toolmw.Tool {
	return func(context.Context, json.RawMessage) (toolmw.Result, error) {
		c.Advance(step)
		if err != nil {
			return toolmw.Result{}, err
		}
		return toolmw.Text("done"), nil
	}
}

func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ln := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if ln == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(ln), &m); err != nil {
			t.Fatalf("not JSON: %q: %v", ln, err)
		}
		out = append(out, m)
	}
	return out
}

func newClock() *clock.Fake { return clock.NewFake(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) }

func TestLines(t *testing.T) {
	refusal := taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
	transient := taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier down").WithCause(errors.New("dial tcp: refused"))
	tests := []struct {
		name   string
		err    error
		opts   []logging.Option
		logLvl zerolog.Level
		want   []map[string]any
	}{
		{
			name: "success at debug", logLvl: zerolog.DebugLevel,
			want: []map[string]any{{"level": "debug", "tool": "book_flight", "call_id": "call_7", "outcome": "ok", "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"}},
		},
		{
			name: "success at info", logLvl: zerolog.InfoLevel, opts: []logging.Option{logging.WithSuccessLevel(zerolog.InfoLevel)},
			want: []map[string]any{{"level": "info", "tool": "book_flight", "call_id": "call_7", "outcome": "ok", "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"}},
		},
		{
			name: "success above info is info", logLvl: zerolog.DebugLevel, opts: []logging.Option{logging.WithSuccessLevel(zerolog.ErrorLevel)},
			want: []map[string]any{{"level": "info", "tool": "book_flight", "call_id": "call_7", "outcome": "ok", "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"}},
		},
		{
			name: "success not logged at info", logLvl: zerolog.InfoLevel,
		},
		{
			name: "successes disabled", logLvl: zerolog.TraceLevel, opts: []logging.Option{logging.WithSuccessLevel(zerolog.Disabled)},
		},
		{
			name: "refusal at info with debug detail", err: refusal, logLvl: zerolog.DebugLevel,
			want: []map[string]any{
				{"level": "info", "tool": "book_flight", "call_id": "call_7", "outcome": "declined", "kind": "tool-refused", "code": "booking_not_cancellable", "retryable": false, "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"},
				{"level": "debug", "tool": "book_flight", "call_id": "call_7", "code": "booking_not_cancellable", "error": "tool-refused booking_not_cancellable: this fare is non-refundable", "message": "tool call error detail"},
			},
		},
		{
			name: "transient exhausted at warn, no detail above debug", err: transient, logLvl: zerolog.InfoLevel,
			want: []map[string]any{
				{"level": "warn", "tool": "book_flight", "call_id": "call_7", "outcome": "failed", "kind": "tool-failed", "code": "upstream_unavailable", "retryable": true, "attempts": 3.0, "duration_ms": 4500.0, "message": "tool call"},
			},
		},
		{
			name: "detail carries the cause", err: transient, logLvl: zerolog.DebugLevel,
			want: []map[string]any{
				{"level": "warn", "tool": "book_flight", "call_id": "call_7", "outcome": "failed", "kind": "tool-failed", "code": "upstream_unavailable", "retryable": true, "attempts": 3.0, "duration_ms": 4500.0, "message": "tool call"},
				{"level": "debug", "tool": "book_flight", "call_id": "call_7", "code": "upstream_unavailable", "error": "tool-failed upstream_unavailable: supplier down", "cause": "dial tcp: refused", "message": "tool call error detail"},
			},
		},
		{
			name: "untyped at error", err: errors.New("boom"), logLvl: zerolog.WarnLevel,
			want: []map[string]any{
				{"level": "error", "tool": "book_flight", "call_id": "call_7", "outcome": "failed", "kind": "tool-failed", "code": "unmapped_failure", "retryable": false, "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"},
			},
		},
		{
			name: "cancelled at info", err: fmt.Errorf("stopping: %w", context.Canceled), logLvl: zerolog.InfoLevel,
			want: []map[string]any{
				{"level": "info", "tool": "book_flight", "call_id": "call_7", "outcome": "cancelled", "kind": "tool-cancelled", "code": "cancelled", "retryable": false, "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"},
			},
		},
		{
			name: "kind override", err: refusal, logLvl: zerolog.InfoLevel, opts: []logging.Option{logging.WithLevel(taxonomy.KindRefused, zerolog.WarnLevel)},
			want: []map[string]any{
				{"level": "warn", "tool": "book_flight", "call_id": "call_7", "outcome": "declined", "kind": "tool-refused", "code": "booking_not_cancellable", "retryable": false, "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"},
			},
		},
		{
			name: "fatal override is error", err: refusal, logLvl: zerolog.InfoLevel, opts: []logging.Option{logging.WithLevel(taxonomy.KindRefused, zerolog.FatalLevel)},
			want: []map[string]any{
				{"level": "error", "tool": "book_flight", "call_id": "call_7", "outcome": "declined", "kind": "tool-refused", "code": "booking_not_cancellable", "retryable": false, "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"},
			},
		},
		{
			name: "disabled kind", err: refusal, logLvl: zerolog.TraceLevel, opts: []logging.Option{logging.WithLevel(taxonomy.KindRefused, zerolog.Disabled)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			clk := newClock()
			opts := append([]logging.Option{logging.WithClock(clk)}, tt.opts...)
			tool := toolmw.MustWrap(toolmw.Spec{Name: "book_flight"}, failing(clk, 1500*time.Millisecond, tt.err),
				logging.New(zerolog.New(&buf).Level(tt.logLvl), opts...), retryN(3))
			_, err := tool(toolmw.WithCallID(context.Background(), "call_7"), nil)
			if (err != nil) != (tt.err != nil) {
				t.Fatalf("err = %v", err)
			}
			if got := lines(t, &buf); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("lines\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestWithoutCall(t *testing.T) {
	var buf bytes.Buffer
	clk := newClock()
	tool := logging.New(zerolog.New(&buf), logging.WithClock(clk))(failing(clk, time.Millisecond/4, nil))
	if _, err := tool(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"level": "debug", "tool": "", "outcome": "ok", "duration_ms": 0.25, "message": "tool call"}}
	if got := lines(t, &buf); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestPanicIsLoggedAndGoesOn(t *testing.T) {
	var buf bytes.Buffer
	tool := toolmw.MustWrap(toolmw.Spec{Name: "boom"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		panic("the value of the panic")
	}, logging.New(zerolog.New(&buf).Level(zerolog.InfoLevel), logging.WithClock(newClock())))
	func() {
		defer func() {
			if v := recover(); v != "the value of the panic" {
				t.Errorf("recovered %v", v)
			}
		}()
		_, _ = tool(context.Background(), nil)
	}()
	got := lines(t, &buf)
	if len(got) != 1 || got[0]["level"] != "error" || got[0]["code"] != "tool_panicked" {
		t.Errorf("lines %v", got)
	}
	if strings.Contains(buf.String(), "value of the panic") {
		t.Error("the panic value was logged")
	}
}

func TestDisabledLoggerReturnsTheToolUnchanged(t *testing.T) {
	tool := toolmw.Tool(func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Result{}, nil })
	for _, lg := range []zerolog.Logger{zerolog.Nop(), zerolog.New(&bytes.Buffer{}).Level(zerolog.FatalLevel)} {
		if got := logging.New(lg)(tool); reflect.ValueOf(got).Pointer() != reflect.ValueOf(tool).Pointer() {
			t.Errorf("logger at %v: the tool was wrapped", lg.GetLevel())
		}
	}
}

func TestGlobalLevelSilences(t *testing.T) {
	defer zerolog.SetGlobalLevel(zerolog.GlobalLevel())
	zerolog.SetGlobalLevel(zerolog.FatalLevel)
	var buf bytes.Buffer
	tool := logging.New(zerolog.New(&buf))(failing(newClock(), 0, errors.New("x")))
	_, _ = tool(context.Background(), nil)
	if buf.Len() != 0 {
		t.Errorf("wrote %q", buf.String())
	}
}

func TestDefaultLevel(t *testing.T) {
	tests := []struct {
		kind      taxonomy.Kind
		retryable bool
		want      zerolog.Level
	}{
		{taxonomy.KindRefused, false, zerolog.InfoLevel},
		{taxonomy.KindCancelled, false, zerolog.InfoLevel},
		{taxonomy.KindFailed, true, zerolog.WarnLevel},
		{taxonomy.KindFailed, false, zerolog.ErrorLevel},
		{taxonomy.KindTimeout, false, zerolog.WarnLevel},
		{taxonomy.KindCircuitOpen, true, zerolog.WarnLevel},
		{taxonomy.KindRateLimited, true, zerolog.WarnLevel},
		{taxonomy.KindRetryBudgetExhausted, false, zerolog.WarnLevel},
		{taxonomy.KindRunLimitExceeded, false, zerolog.WarnLevel},
		{taxonomy.KindNotPermitted, false, zerolog.WarnLevel},
		{taxonomy.KindArgsInvalid, false, zerolog.WarnLevel},
		{taxonomy.KindNotFound, false, zerolog.WarnLevel},
		{taxonomy.KindResultInvalid, false, zerolog.ErrorLevel},
		{taxonomy.KindDefinitionInvalid, false, zerolog.ErrorLevel},
		{taxonomy.KindDuplicateTool, false, zerolog.ErrorLevel},
		{"custom-kind", true, zerolog.WarnLevel},
		{"custom-kind", false, zerolog.ErrorLevel},
	}
	for _, tt := range tests {
		if got := logging.DefaultLevel(taxonomy.Info{Kind: tt.kind, Retryable: tt.retryable}); got != tt.want {
			t.Errorf("%s retryable=%v: %v, want %v", tt.kind, tt.retryable, got, tt.want)
		}
	}
	// Every built-in kind is named.
	for _, k := range taxonomy.Kinds() {
		found := false
		for _, tt := range tests {
			found = found || tt.kind == k.Kind
		}
		if !found {
			t.Errorf("kind %s has no level in the table", k.Kind)
		}
	}
}

func TestNilOptionIgnored(t *testing.T) {
	var buf bytes.Buffer
	tool := logging.New(zerolog.New(&buf), nil, logging.WithClock(nil))(failing(newClock(), 0, nil))
	if _, err := tool(context.Background(), nil); err != nil || buf.Len() == 0 {
		t.Fatal(err, buf.String())
	}
}
