package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/logging"
	"github.com/toolmw/toolmw/scrub"
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

func newClock() *clock.Fake { return clock.NewFake(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) }

func TestLines(t *testing.T) {
	refusal := taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
	transient := taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier down").WithCause(errors.New("dial tcp: refused"))
	tests := []struct {
		name   string
		err    error
		opts   []logging.Option
		logLvl slog.Level
		want   []map[string]any
	}{
		{
			name: "success at debug", logLvl: slog.LevelDebug,
			want: []map[string]any{{"level": "debug", "tool": "book_flight", "call_id": "call_7", "outcome": "ok", "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"}},
		},
		{
			name: "success at info", logLvl: slog.LevelInfo, opts: []logging.Option{logging.WithSuccessLevel(slog.LevelInfo)},
			want: []map[string]any{{"level": "info", "tool": "book_flight", "call_id": "call_7", "outcome": "ok", "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"}},
		},
		{
			name: "success at trace", logLvl: slog.LevelDebug - 4, opts: []logging.Option{logging.WithSuccessLevel(slog.LevelDebug - 4)},
			want: []map[string]any{{"level": "trace", "tool": "book_flight", "call_id": "call_7", "outcome": "ok", "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"}},
		},
		{
			name: "success not logged at info", logLvl: slog.LevelInfo,
		},
		{
			name: "successes disabled", logLvl: slog.LevelDebug - 4, opts: []logging.Option{logging.WithSuccessLevel(logging.LevelOff)},
		},
		{
			name: "refusal at info with debug detail", err: refusal, logLvl: slog.LevelDebug,
			want: []map[string]any{
				{"level": "info", "tool": "book_flight", "call_id": "call_7", "outcome": "refused", "kind": "tool-refused", "code": "booking_not_cancellable", "retryable": false, "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"},
				{"level": "debug", "tool": "book_flight", "call_id": "call_7", "code": "booking_not_cancellable", "error": "tool-refused booking_not_cancellable: this fare is non-refundable", "message": "tool call error detail"},
			},
		},
		{
			name: "transient exhausted at warn, no detail above debug", err: transient, logLvl: slog.LevelInfo,
			want: []map[string]any{
				{"level": "warn", "tool": "book_flight", "call_id": "call_7", "outcome": "failed", "kind": "tool-failed", "code": "upstream_unavailable", "retryable": true, "attempts": 3.0, "duration_ms": 4500.0, "message": "tool call"},
			},
		},
		{
			name: "detail carries the cause", err: transient, logLvl: slog.LevelDebug,
			want: []map[string]any{
				{"level": "warn", "tool": "book_flight", "call_id": "call_7", "outcome": "failed", "kind": "tool-failed", "code": "upstream_unavailable", "retryable": true, "attempts": 3.0, "duration_ms": 4500.0, "message": "tool call"},
				{"level": "debug", "tool": "book_flight", "call_id": "call_7", "code": "upstream_unavailable", "error": "tool-failed upstream_unavailable: supplier down", "cause": "dial tcp: refused", "message": "tool call error detail"},
			},
		},
		{
			name: "untyped at error", err: errors.New("boom"), logLvl: slog.LevelWarn,
			want: []map[string]any{
				{"level": "error", "tool": "book_flight", "call_id": "call_7", "outcome": "failed", "kind": "tool-failed", "code": "unmapped_failure", "retryable": false, "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"},
			},
		},
		{
			name: "cancelled at info", err: fmt.Errorf("stopping: %w", context.Canceled), logLvl: slog.LevelInfo,
			want: []map[string]any{
				{"level": "info", "tool": "book_flight", "call_id": "call_7", "outcome": "cancelled", "kind": "tool-cancelled", "code": "cancelled", "retryable": false, "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"},
			},
		},
		{
			name: "kind override", err: refusal, logLvl: slog.LevelInfo, opts: []logging.Option{logging.WithLevel(taxonomy.KindRefused, slog.LevelWarn)},
			want: []map[string]any{
				{"level": "warn", "tool": "book_flight", "call_id": "call_7", "outcome": "refused", "kind": "tool-refused", "code": "booking_not_cancellable", "retryable": false, "attempts": 1.0, "duration_ms": 1500.0, "message": "tool call"},
			},
		},
		{
			name: "disabled kind", err: refusal, logLvl: slog.LevelDebug - 4, opts: []logging.Option{logging.WithLevel(taxonomy.KindRefused, logging.LevelOff)},
		},
	}
	for _, b := range backends {
		for _, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				var buf bytes.Buffer
				clk := newClock()
				opts := append([]logging.Option{logging.WithClock(clk)}, tt.opts...)
				tool := toolmw.MustWrap(toolmw.Spec{Name: "book_flight"}, failing(clk, 1500*time.Millisecond, tt.err),
					b.new(&buf, tt.logLvl, opts...), retryN(3))
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
}

// TestWithoutCall: with no toolmw.Call in the context (the layer used
// without Wrap) the tool is "" and the call id and attempts are left out,
// of the detail line too.
func TestWithoutCall(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			var buf bytes.Buffer
			clk := newClock()
			mw := b.new(&buf, slog.LevelDebug, logging.WithClock(clk))
			if _, err := mw(failing(clk, time.Millisecond/4, nil))(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			_, _ = mw(failing(clk, time.Millisecond, taxonomy.Failure("ledger_rejected", "no")))(context.Background(), nil)
			want := []map[string]any{
				{"level": "debug", "tool": "", "outcome": "ok", "duration_ms": 0.25, "message": "tool call"},
				{"level": "error", "tool": "", "outcome": "failed", "kind": "tool-failed", "code": "ledger_rejected", "retryable": false, "duration_ms": 1.0, "message": "tool call"},
				{"level": "debug", "tool": "", "code": "ledger_rejected", "error": "tool-failed ledger_rejected: no", "message": "tool call error detail"},
			}
			if got := lines(t, &buf); !reflect.DeepEqual(got, want) {
				t.Errorf("got  %v\nwant %v", got, want)
			}
		})
	}
}

// TestEmptyCallIDLeftOut: a Call without an id leaves call_id out of both
// lines, on both backends.
func TestEmptyCallIDLeftOut(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			var buf bytes.Buffer
			clk := newClock()
			tool := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, failing(clk, 0, errors.New("boom")), b.new(&buf, slog.LevelDebug, logging.WithClock(clk)))
			_, _ = tool(context.Background(), nil)
			got := lines(t, &buf)
			if len(got) != 2 {
				t.Fatalf("lines %v", got)
			}
			for _, ln := range got {
				if _, ok := ln["call_id"]; ok {
					t.Errorf("a line has call_id: %v", ln)
				}
			}
		})
	}
}

func TestPanicIsLoggedAndGoesOn(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			var buf bytes.Buffer
			tool := toolmw.MustWrap(toolmw.Spec{Name: "boom"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
				panic("the value of the panic")
			}, b.new(&buf, slog.LevelInfo, logging.WithClock(newClock())))
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
		})
	}
}

func TestDisabledLoggerReturnsTheToolUnchanged(t *testing.T) {
	tool := toolmw.Tool(func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Result{}, nil })
	same := func(mw toolmw.Middleware) bool {
		return reflect.ValueOf(mw(tool)).Pointer() == reflect.ValueOf(tool).Pointer()
	}
	for _, lg := range []zerolog.Logger{zerolog.Nop(), zerolog.New(&bytes.Buffer{}).Level(zerolog.FatalLevel)} {
		if !same(logging.New(lg)) {
			t.Errorf("zerolog logger at %v: the tool was wrapped", lg.GetLevel())
		}
	}
	if !same(logging.NewSlog(slog.New(slog.DiscardHandler))) {
		t.Error("slog.DiscardHandler: the tool was wrapped")
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

// TestSlogLevelVar: the slog handler is asked at each call, so its level
// may change after the tool is wrapped.
func TestSlogLevelVar(t *testing.T) {
	var buf bytes.Buffer
	var level slog.LevelVar
	level.Set(slog.LevelError + 4)
	clk := newClock()
	tool := logging.NewSlog(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: &level})), logging.WithClock(clk))(failing(clk, 0, nil))
	_, _ = tool(context.Background(), nil)
	if buf.Len() != 0 {
		t.Fatalf("wrote %q above ERROR", buf.String())
	}
	level.Set(slog.LevelDebug)
	_, _ = tool(context.Background(), nil)
	if got := lines(t, &buf); len(got) != 1 || got[0]["outcome"] != "ok" {
		t.Errorf("lines %v", got)
	}
}

// TestSlogNilIsDefault: NewSlog(nil) writes to slog.Default(), as it is at
// the call.
func TestSlogNilIsDefault(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	clk := newClock()
	tool := logging.NewSlog(nil, logging.WithClock(clk))(failing(clk, 0, taxonomy.Refusal("no_seats", "full")))
	var buf bytes.Buffer
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, nil)))
	_, _ = tool(context.Background(), nil)
	if got := lines(t, &buf); len(got) != 1 || got[0]["code"] != "no_seats" {
		t.Errorf("lines %v", got)
	}
}

// TestSlogKeepsLoggerAttrs: the attributes and groups of the slog logger
// passed in are kept, as slog users expect of Logger.With.
func TestSlogKeepsLoggerAttrs(t *testing.T) {
	var buf bytes.Buffer
	clk := newClock()
	logger := slog.New(slog.NewJSONHandler(&buf, nil)).With("service", "booking")
	tool := logging.NewSlog(logger, logging.WithClock(clk))(failing(clk, 0, taxonomy.Refusal("no_seats", "full")))
	_, _ = tool(context.Background(), nil)
	if got := lines(t, &buf); len(got) != 1 || got[0]["service"] != "booking" {
		t.Errorf("lines %v", got)
	}
}

// TestScrubberOption: the detail line is scrubbed with the configured
// scrubber, the default one by default.
func TestScrubberOption(t *testing.T) {
	boom := errors.New("order ORD-12345678 for jane.canary@example.com failed")
	orders, err := scrub.New(scrub.WithPattern("order_id", regexp.MustCompile(`\bORD-[0-9]{8}\b`)))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts []logging.Option
		want string
	}{
		{"default", nil, "order ORD-12345678 for [REDACTED:email] failed"},
		{"nil is the default", []logging.Option{logging.WithScrubber(nil)}, "order ORD-12345678 for [REDACTED:email] failed"},
		{"configured", []logging.Option{logging.WithScrubber(orders)},
			"order [REDACTED:order_id] for [REDACTED:email] failed"},
	}
	for _, b := range backends {
		for _, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				var buf bytes.Buffer
				clk := newClock()
				opts := append([]logging.Option{logging.WithClock(clk)}, tt.opts...)
				_, _ = b.new(&buf, slog.LevelDebug, opts...)(failing(clk, 0, boom))(context.Background(), nil)
				got := lines(t, &buf)
				if len(got) != 2 || got[1]["error"] != tt.want {
					t.Errorf("lines %v\nwant error %q", got, tt.want)
				}
			})
		}
	}
}

func TestDefaultLevel(t *testing.T) {
	tests := []struct {
		kind      taxonomy.Kind
		retryable bool
		want      slog.Level
	}{
		{taxonomy.KindRefused, false, slog.LevelInfo},
		{taxonomy.KindCancelled, false, slog.LevelInfo},
		{taxonomy.KindFailed, true, slog.LevelWarn},
		{taxonomy.KindFailed, false, slog.LevelError},
		{taxonomy.KindTimeout, false, slog.LevelWarn},
		{taxonomy.KindCircuitOpen, true, slog.LevelWarn},
		{taxonomy.KindRateLimited, true, slog.LevelWarn},
		{taxonomy.KindRetryBudgetExhausted, false, slog.LevelWarn},
		{taxonomy.KindRunLimitExceeded, false, slog.LevelWarn},
		{taxonomy.KindNotPermitted, false, slog.LevelWarn},
		{taxonomy.KindArgsInvalid, false, slog.LevelWarn},
		{taxonomy.KindNotFound, false, slog.LevelWarn},
		{taxonomy.KindResultInvalid, false, slog.LevelError},
		{taxonomy.KindDefinitionInvalid, false, slog.LevelError},
		{taxonomy.KindDuplicateTool, false, slog.LevelError},
		{taxonomy.KindApprovalPending, false, slog.LevelInfo},
		{taxonomy.KindApprovalDenied, false, slog.LevelInfo},
		{taxonomy.KindBudgetExceeded, false, slog.LevelWarn},
		{taxonomy.KindGuardrailBlocked, false, slog.LevelWarn},
		{"custom-kind", true, slog.LevelWarn},
		{"custom-kind", false, slog.LevelError},
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

// TestNilMeansDefault: a nil Option, clock or scrubber is valid and means
// the default.
func TestNilMeansDefault(t *testing.T) {
	opts := []logging.Option{nil, logging.WithClock(nil), logging.WithScrubber(nil)}
	if err := logging.Validate(opts...); err != nil {
		t.Fatal(err)
	}
	for _, b := range backends {
		var buf bytes.Buffer
		tool := b.new(&buf, slog.LevelDebug, opts...)(failing(newClock(), 0, nil))
		if _, err := tool(context.Background(), nil); err != nil || buf.Len() == 0 {
			t.Fatal(b.name, err, buf.String())
		}
	}
}

// TestValidate: a bad option value is a tool-definition-invalid error with
// code option_invalid, naming the option, from Validate and from Wrap (New
// and NewSlog return toolmw.Reject), never a panic.
func TestValidate(t *testing.T) {
	good := [][]logging.Option{
		nil,
		{logging.WithSuccessLevel(slog.LevelInfo), logging.WithSuccessLevel(slog.LevelDebug - 4), logging.WithSuccessLevel(logging.LevelOff)},
		{logging.WithLevel(taxonomy.KindRefused, slog.LevelError), logging.WithLevel("custom-kind", logging.LevelOff)},
		{logging.WithLevel(taxonomy.KindTimeout, slog.LevelDebug)},
	}
	for _, opts := range good {
		if err := logging.Validate(opts...); err != nil {
			t.Errorf("valid options: %v", err)
		}
	}
	bad := map[string]logging.Option{
		"WithSuccessLevel(WARN)": logging.WithSuccessLevel(slog.LevelWarn),
		"WithLevel(":             logging.WithLevel(taxonomy.KindRefused, slog.LevelError+1),
		`WithLevel("Not A Kind"`: logging.WithLevel("Not A Kind", slog.LevelWarn),
		`WithLevel(""`:           logging.WithLevel("", slog.LevelWarn),
	}
	isOptionInvalid := func(err error) bool {
		var te taxonomy.Error
		return errors.As(err, &te) && te.Kind() == taxonomy.KindDefinitionInvalid && te.Code() == taxonomy.CodeOptionInvalid
	}
	for want, opt := range bad {
		opts := []logging.Option{logging.WithClock(nil), opt, logging.WithSuccessLevel(slog.LevelWarn + 1)}
		err := logging.Validate(opts...)
		if !isOptionInvalid(err) {
			t.Errorf("%s: %v, want a definition error with code option_invalid", want, err)
			continue
		}
		if !strings.Contains(err.Error(), "logging: "+want) {
			t.Errorf("%s: %q does not name the first bad option", want, err)
		}
		for _, b := range backends {
			tool, werr := toolmw.Wrap(toolmw.Spec{Name: "t"}, failing(newClock(), 0, nil), b.new(io.Discard, slog.LevelDebug, opts...))
			if tool != nil || !isOptionInvalid(werr) || !strings.Contains(werr.Error(), "logging: "+want) {
				t.Errorf("%s: %s: Wrap returned %v, want the error of Validate", b.name, want, werr)
			}
		}
	}
}

// TestFallbackIsLogged: a result that a fallback layer inside stood in for
// (toolmw.SetFallback), and a call a layer decided on local state
// (toolmw.SetDegraded), are logged with what stood in and which layer, by
// both backends; other calls are not.
func TestFallbackIsLogged(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			var buf bytes.Buffer
			served := true
			standIn := func(next toolmw.Tool) toolmw.Tool {
				return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
					if served {
						toolmw.SetFallback(ctx, "last_good")
						toolmw.SetDegraded(ctx, "breaker")
					}
					return next(ctx, args)
				}
			}
			tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
				return toolmw.Text("3 flights"), nil
			}, b.new(&buf, slog.LevelDebug), standIn)
			_, _ = tool(context.Background(), nil)
			served = false
			_, _ = tool(context.Background(), nil)
			got := lines(t, &buf)
			if len(got) != 2 || got[0]["fallback"] != "last_good" || got[1]["fallback"] != nil ||
				got[0]["degraded"] != "breaker" || got[1]["degraded"] != nil {
				t.Fatalf("lines %v, want fallback=last_good and degraded=breaker on the first only", got)
			}
		})
	}
}
