package dedupe_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counter is a tool that counts its executions and answers with their number.
type counter struct {
	n    atomic.Int64
	hold time.Duration
	err  func(n int64) error
}

func (c *counter) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	n := c.n.Add(1)
	time.Sleep(c.hold)
	if c.err != nil {
		if err := c.err(n); err != nil {
			return toolmw.Result{}, err
		}
	}
	return toolmw.Text("booking " + string(rune('0'+n))), nil
}

func wrap(t *testing.T, spec toolmw.Spec, c *counter, opts ...dedupe.Option) toolmw.Tool {
	t.Helper()
	tool, err := toolmw.Wrap(spec, c.tool, dedupe.New(opts...))
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// TestDuplicateCallIDExecutesOnce: a repeated call id gets the recorded
// result; another id, another run, or no run runs the tool.
func TestDuplicateCallIDExecutesOnce(t *testing.T) {
	c := &counter{}
	tool := wrap(t, toolmw.Spec{Name: "book"}, c)
	run := budget.WithRun(context.Background())
	first, err := tool(toolmw.WithCallID(run, "call_1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := tool(toolmw.WithCallID(run, "call_1"), nil)
	if err != nil || !reflect.DeepEqual(again, first) || c.n.Load() != 1 {
		t.Fatalf("repeat: %v %v after %d executions", again, err, c.n.Load())
	}
	_, _ = tool(toolmw.WithCallID(run, "call_2"), nil)
	_, _ = tool(toolmw.WithCallID(budget.WithRun(context.Background()), "call_1"), nil)
	_, _ = tool(toolmw.WithCallID(context.Background(), "call_1"), nil)
	_, _ = tool(run, nil) // no call id
	if c.n.Load() != 5 {
		t.Fatalf("%d executions, want 5", c.n.Load())
	}
}

// Test50ConcurrentDuplicates: 50 goroutines make the same call at once,
// for several call ids at a time: each id executes once, and every
// duplicate gets its outcome.
func Test50ConcurrentDuplicates(t *testing.T) {
	c := &counter{hold: 5 * time.Millisecond}
	tool := wrap(t, toolmw.Spec{Name: "pay"}, c)
	run := budget.WithRun(context.Background())
	ids := []string{"call_a", "call_b", "call_c"}
	results := make([][]string, len(ids))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, id := range ids {
		results[i] = make([]string, 50)
		for j := range 50 {
			wg.Go(func() {
				<-start
				res, err := tool(toolmw.WithCallID(run, id), nil)
				if err != nil {
					t.Error(err)
				}
				results[i][j] = res.Content
			})
		}
	}
	close(start)
	wg.Wait()
	if n := c.n.Load(); n != int64(len(ids)) {
		t.Fatalf("%d executions for %d calls made 50 times each", n, len(ids))
	}
	for i := range ids {
		for _, r := range results[i] {
			if r != results[i][0] || r == "" {
				t.Fatalf("call %s: duplicates got %q", ids[i], results[i])
			}
		}
	}
}

// TestByArguments: a tool named in WithArguments is deduplicated by its
// arguments' JSON value, whatever the call ids, key order and spacing.
func TestByArguments(t *testing.T) {
	c := &counter{}
	tool := wrap(t, toolmw.Spec{Name: "pay"}, c, dedupe.WithArguments("pay"))
	run := budget.WithRun(context.Background())
	_, _ = tool(toolmw.WithCallID(run, "call_1"), json.RawMessage(`{"amount": 10, "to": "acme"}`))
	_, _ = tool(toolmw.WithCallID(run, "call_2"), json.RawMessage(`{"to":"acme","amount":10}`))
	_, _ = tool(run, json.RawMessage(`{"to":"acme","amount":10}`))
	if c.n.Load() != 1 {
		t.Fatalf("%d executions of one payment", c.n.Load())
	}
	_, _ = tool(toolmw.WithCallID(run, "call_5"), json.RawMessage(`{"to":"\u0061cme","amount":10}`)) // one escaping of strings
	if c.n.Load() != 1 {
		t.Fatalf("%d executions of one payment, spelt with an escape", c.n.Load())
	}
	_, _ = tool(toolmw.WithCallID(run, "call_3"), json.RawMessage(`{"to":"acme","amount":10.0}`))
	_, _ = tool(toolmw.WithCallID(run, "call_4"), json.RawMessage(`{"to":"acme","amount":11}`))
	if c.n.Load() != 3 {
		t.Fatalf("%d executions of three payments", c.n.Load())
	}
}

// TestWhatIsRecorded: failures that ran nothing (bad arguments included: the
// model may send the call again corrected), or that an idempotent tool may
// repeat, are not recorded; a non-idempotent tool's permanent failure is; a
// timeout or a cancellation in flight is in doubt, whatever it says of
// retrying.
func TestWhatIsRecorded(t *testing.T) {
	run := budget.WithRun(context.Background())
	cases := []struct {
		name  string
		spec  toolmw.Spec
		first error
		runs  int64  // executions after the repeat
		code  string // the repeat's code; "" for success
	}{
		{"transient", toolmw.Spec{Name: "pay"}, taxonomy.Transient("supplier_busy", "busy"), 2, ""},
		{"circuit open", toolmw.Spec{Name: "pay"}, taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "open"), 2, ""},
		{"refusal", toolmw.Spec{Name: "pay"}, taxonomy.Refusal("card_declined", "declined"), 1, "card_declined"},
		{"untyped", toolmw.Spec{Name: "pay"}, errors.New("ledger said no"), 1, taxonomy.CodeUnmappedFailure},
		{"untyped idempotent", toolmw.Spec{Name: "get", Idempotent: true}, errors.New("flaky"), 2, ""},
		{"untyped keyed", toolmw.Spec{Name: "pay", HonoursKeys: true}, errors.New("flaky"), 2, ""},
		{"timeout", toolmw.Spec{Name: "pay"}, taxonomy.Timeout(taxonomy.CodeTimeout, "slow", false), 1, taxonomy.CodeDuplicateInDoubt},
		{"timeout said retryable", toolmw.Spec{Name: "pay"}, taxonomy.Timeout(taxonomy.CodeTimeout, "slow", true), 1, taxonomy.CodeDuplicateInDoubt},
		{"args invalid", toolmw.Spec{Name: "pay"}, taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "missing", Loc: []any{"to"}, Msg: "Field required"}), 2, ""},
		{"cancelled", toolmw.Spec{Name: "pay"}, context.Canceled, 1, taxonomy.CodeDuplicateInDoubt},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &counter{err: func(n int64) error {
				if n == 1 {
					return tc.first
				}
				return nil
			}}
			tool := wrap(t, tc.spec, c)
			ctx := toolmw.WithCallID(run, "call_"+string(rune('a'+i)))
			_, _ = tool(ctx, nil)
			_, err := tool(ctx, nil)
			if got := c.n.Load(); got != tc.runs {
				t.Errorf("%d executions, want %d", got, tc.runs)
			}
			if code := taxonomy.InfoOf(err).Code; err != nil && code != tc.code || err == nil && tc.code != "" {
				t.Errorf("repeat: %v, want code %q", err, tc.code)
			}
		})
	}
}

// TestWaiterTakesOverAfterForgotten: a repeat waiting for a call whose
// failure is not recorded runs the tool itself, once.
func TestWaiterTakesOverAfterForgotten(t *testing.T) {
	c := &counter{hold: 5 * time.Millisecond, err: func(n int64) error {
		if n == 1 {
			return taxonomy.Transient("supplier_busy", "busy")
		}
		return nil
	}}
	tool := wrap(t, toolmw.Spec{Name: "pay"}, c)
	ctx := toolmw.WithCallID(budget.WithRun(context.Background()), "call_1")
	var wg sync.WaitGroup
	var ok atomic.Int64
	for range 10 {
		wg.Go(func() {
			if _, err := tool(ctx, nil); err == nil {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if c.n.Load() != 2 || ok.Load() < 9 {
		t.Fatalf("%d executions, %d successes", c.n.Load(), ok.Load())
	}
}

// TestBounds: past WithMaxBytes a record keeps the call but not its
// result; past WithMaxRecords the oldest call is forgotten.
func TestBounds(t *testing.T) {
	c := &counter{}
	tool := wrap(t, toolmw.Spec{Name: "pay"}, c, dedupe.WithMaxBytes(len("booking 1")), dedupe.WithMaxRecords(2))
	run := budget.WithRun(context.Background())
	id := func(s string) context.Context { return toolmw.WithCallID(run, s) }
	_, _ = tool(id("call_1"), nil)
	_, _ = tool(id("call_2"), nil) // over the byte bound
	if _, err := tool(id("call_2"), nil); taxonomy.InfoOf(err).Code != taxonomy.CodeDuplicateDropped || c.n.Load() != 2 {
		t.Fatalf("dropped result: %v after %d", err, c.n.Load())
	}
	if res, err := tool(id("call_1"), nil); err != nil || res.Content != "booking 1" {
		t.Fatalf("held result: %v %v", res, err)
	}
	_, _ = tool(id("call_3"), nil) // call_1 is now the oldest of three
	_, _ = tool(id("call_1"), nil)
	if c.n.Load() != 4 {
		t.Fatalf("%d executions: the oldest record should have been forgotten", c.n.Load())
	}
}

// TestPanicIsRecorded: a panic is re-raised and recorded as tool_panicked.
func TestPanicIsRecorded(t *testing.T) {
	var n atomic.Int64
	tool := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		n.Add(1)
		panic("boom")
	}, dedupe.New())
	ctx := toolmw.WithCallID(budget.WithRun(context.Background()), "call_1")
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic was swallowed")
			}
		}()
		_, _ = tool(ctx, nil)
	}()
	if _, err := tool(ctx, nil); taxonomy.InfoOf(err).Code != taxonomy.CodeToolPanicked || n.Load() != 1 {
		t.Fatalf("repeat after a panic: %v, %d executions", err, n.Load())
	}
}

// TestWaiterLeavesOnCancel: a repeat waiting for the first call returns
// when its own context ends.
func TestWaiterLeavesOnCancel(t *testing.T) {
	release := make(chan struct{})
	tool := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		<-release
		return toolmw.Text("ok"), nil
	}, dedupe.New())
	ctx := toolmw.WithCallID(budget.WithRun(context.Background()), "call_1")
	done := make(chan struct{})
	go func() { _, _ = tool(ctx, nil); close(done) }()
	time.Sleep(time.Millisecond)
	wctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	if _, err := tool(wctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiter: %v", err)
	}
	close(release)
	<-done
}

func TestValidate(t *testing.T) {
	for _, o := range []dedupe.Option{dedupe.WithMaxRecords(-1), dedupe.WithMaxBytes(-1), dedupe.WithArguments("not a name")} {
		if info := taxonomy.InfoOf(dedupe.Validate(o)); info.Code != taxonomy.CodeOptionInvalid {
			t.Errorf("%v", info)
		}
		if _, err := toolmw.Wrap(toolmw.Spec{Name: "pay"}, (&counter{}).tool, dedupe.New(o)); !strings.Contains(taxonomy.InfoOf(err).Code, "option_invalid") {
			t.Errorf("Wrap: %v", err)
		}
	}
	if err := dedupe.Validate(dedupe.WithMaxRecords(0), dedupe.WithMaxBytes(0), dedupe.WithArguments(), nil); err != nil {
		t.Error(err)
	}
}

// TestForgedReplacedID: a model id that reads like the replaced form of
// another (toolmw.SafeCallID's "invalid_call_id_" and 16 hex digits)
// claims nothing of the other's record: each of the two ids runs once.
func TestForgedReplacedID(t *testing.T) {
	c := &counter{}
	tool := wrap(t, toolmw.Spec{Name: "pay"}, c)
	run := budget.WithRun(context.Background())
	for _, id := range []string{"call/1", toolmw.SafeCallID("call/1"), "call/1", toolmw.SafeCallID("call/1")} {
		if _, err := tool(toolmw.WithCallID(run, id), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.n.Load(); n != 2 {
		t.Fatalf("%d executions for two distinct call ids made twice each, want 2", n)
	}
}

// TestByArgumentsNotCanonical: for a tool deduplicated by arguments,
// arguments without one canonical form (a duplicate key, spelt alike or
// escaped, keys alike but for case, which encoding/json reads as one field,
// a lone surrogate; not JSON) are refused as tool-args-invalid, the tool
// not run:
// otherwise a repeat spelt that way would run again, or pass as another
// call's repeat.
func TestByArgumentsNotCanonical(t *testing.T) {
	c := &counter{}
	tool := wrap(t, toolmw.Spec{Name: "pay"}, c, dedupe.WithArguments("pay"))
	run := budget.WithRun(context.Background())
	if _, err := tool(toolmw.WithCallID(run, "call_1"), json.RawMessage(`{"to":"mallory"}`)); err != nil {
		t.Fatal(err)
	}
	for i, args := range []string{`{"to":"alice","to":"mallory"}`, `{"to":"alice","to":"mallory"}`, `{"To":"mallory","to":"alice"}`,
		`{"to":"alice","\u0074o":"mallory"}`, `{"to":"\ud800"}`, `{"to":`, `{} {}`} {
		_, err := tool(toolmw.WithCallID(run, "call_"+string(rune('2'+i))), json.RawMessage(args))
		if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindArgsInvalid {
			t.Errorf("%s: %v, want tool-args-invalid", args, err)
		}
	}
	if n := c.n.Load(); n != 1 {
		t.Fatalf("%d executions, want 1", n)
	}
}

// TestUnknownOutcomeIsInDoubt: a non-idempotent call whose outcome is
// unknown — it timed out or its caller's deadline passed while it ran, or
// it was cancelled — may have acted: a repeat, later or waiting meanwhile,
// is tool-failed/duplicate_in_doubt and the tool does not run again. An
// idempotent (or key-honouring) call in the same case runs again.
func TestUnknownOutcomeIsInDoubt(t *testing.T) {
	for _, first := range []error{
		taxonomy.Timeout(taxonomy.CodeTimeout, "slow", false),
		taxonomy.Timeout(taxonomy.CodeDeadlineExceeded, "the caller's deadline passed", false),
		context.DeadlineExceeded,
		fmt.Errorf("supplier: %w", context.DeadlineExceeded),
		context.Canceled,
	} {
		for _, spec := range []toolmw.Spec{{Name: "pay"}, {Name: "pay", HonoursKeys: true}} {
			c := &counter{err: func(n int64) error {
				if n == 1 {
					return first
				}
				return nil
			}}
			tool := wrap(t, spec, c)
			ctx := toolmw.WithCallID(budget.WithRun(context.Background()), "call_1")
			_, _ = tool(ctx, nil)
			_, err := tool(ctx, nil)
			if spec.HonoursKeys {
				if err != nil || c.n.Load() != 2 {
					t.Errorf("%v, honours keys: repeat %v after %d executions, want a second execution", first, err, c.n.Load())
				}
				continue
			}
			if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeDuplicateInDoubt || info.Retryable || c.n.Load() != 1 {
				t.Errorf("%v: repeat %v (%+v) after %d executions, want duplicate_in_doubt after 1", first, err, info, c.n.Load())
			}
		}
	}
}

// TestErrorRecordsBounded: a run's records of failures are bounded in
// bytes like its results: 1,024 permanent failures, each with a message of
// 128 KiB, grew the heap by about 137 MiB when errors were kept whole. Each
// recorded error now keeps its message scrubbed and cut to
// dedupe.MaxErrorMessage, and the run's records hold at most WithMaxBytes
// (1 MiB by default) of result and error text: the heap grows by a few MiB
// at most, whatever the messages.
func TestErrorRecordsBounded(t *testing.T) {
	const calls, size = dedupe.DefaultMaxRecords, 128 << 10
	tool := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Failure("ledger_rejected", strings.Repeat("x", size)) // a fresh message each time
	}, dedupe.New())
	run := budget.WithRun(context.Background())
	before := heapInUse()
	for i := range calls {
		if _, err := tool(toolmw.WithCallID(run, fmt.Sprintf("call_%d", i)), nil); err == nil {
			t.Fatal("the tool succeeded")
		}
	}
	grown := heapInUse() - before
	runtime.KeepAlive(run)
	if limit := int64(8 << 20); grown > limit {
		t.Fatalf("the heap grew by %d MiB for %d recorded failures of %d KiB each, want at most %d MiB", grown>>20, calls, size>>10, limit>>20)
	}
	// The records are still there: a repeat gets the failure, bounded.
	_, err := tool(toolmw.WithCallID(run, "call_0"), nil)
	if info := taxonomy.InfoOf(err); info.Code != "ledger_rejected" || len(info.Message) > dedupe.MaxErrorMessage {
		t.Fatalf("repeat: code %q, message of %d bytes", info.Code, len(info.Message))
	}
}

// heapInUse returns the bytes of live heap objects after a collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestRepeatErrorEquivalent: a repeat of a recorded failure gets an
// equivalent typed error: the same taxonomy.Info (kind, code, tool,
// retryability, finality, retry-after, message, field errors, approval,
// spend and guardrail records), matched by errors.Is and errors.As as the
// original is. A message longer than dedupe.MaxErrorMessage is scrubbed,
// then cut, so no part of a secret straddling the cut survives; field
// errors are kept in order while they fit MaxErrorBytes. Past the run's
// WithMaxBytes, a recorded error keeps its kind, code and the rest, but not
// its message and field errors.
func TestRepeatErrorEquivalent(t *testing.T) {
	secret := canary.Secrets[0].Value
	fields := []taxonomy.FieldError{{Type: "value_error", Loc: []any{"to", 2}, Msg: "Input should be a known account"}}
	cases := map[string]error{
		"refusal":   taxonomy.Refusal("card_declined", "the card was declined"),
		"final":     taxonomy.Failure("ledger_rejected", "no").WithRetryAfter(3 * time.Second).WithFinal(),
		"fields":    taxonomy.Failure("ledger_rejected", "bad").WithFields(fields...),
		"guardrail": taxonomy.New(taxonomy.KindGuardrailBlocked, taxonomy.CodeGuardrailResult, "blocked").WithGuardrail("no_cards"),
		"spend":     taxonomy.Failure("ledger_rejected", "over").WithSpend(10, 4),
		"approval":  taxonomy.Failure("ledger_rejected", "asked").WithApproval("apr_1", "pay 10 EUR to acme"),
		"timeout":   taxonomy.Timeout(taxonomy.CodeUpstreamTimeout, "slow", false).WithCause(errors.New("dial")),
	}
	for name, first := range cases {
		t.Run(name, func(t *testing.T) {
			tool := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
				return toolmw.Result{}, first
			}, dedupe.New())
			ctx := toolmw.WithCallID(budget.WithRun(context.Background()), "call_1")
			_, err1 := tool(ctx, nil)
			_, err2 := tool(ctx, nil)
			want := taxonomy.InfoOf(err1)
			if name == "timeout" { // an unknown outcome: the repeat is in doubt
				if taxonomy.InfoOf(err2).Code != taxonomy.CodeDuplicateInDoubt {
					t.Fatalf("repeat: %v", err2)
				}
				return
			}
			if got := taxonomy.InfoOf(err2); !reflect.DeepEqual(got, want) {
				t.Fatalf("repeat's record:\n%+v\nwant\n%+v", got, want)
			}
			var te *taxonomy.ToolError
			if !errors.As(err2, &te) || errors.Is(err1, taxonomy.ErrRefused) != errors.Is(err2, taxonomy.ErrRefused) {
				t.Fatalf("repeat %v: errors.As/Is differ from %v", err2, err1)
			}
		})
	}

	t.Run("long message", func(t *testing.T) {
		// The secret straddles the cut.
		msg := strings.Repeat("a ", (dedupe.MaxErrorMessage-len(secret)/2)/2) + secret + " " + strings.Repeat("b", 1<<20)
		tool := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			return toolmw.Result{}, taxonomy.Failure("ledger_rejected", msg)
		}, dedupe.New())
		ctx := toolmw.WithCallID(budget.WithRun(context.Background()), "call_1")
		_, _ = tool(ctx, nil)
		_, err := tool(ctx, nil)
		info := taxonomy.InfoOf(err)
		if info.Code != "ledger_rejected" || len(info.Message) > dedupe.MaxErrorMessage || !utf8.ValidString(info.Message) {
			t.Fatalf("repeat: %q, %d bytes", info.Code, len(info.Message))
		}
		if family, found := canary.Find(info.Message); family != "" {
			t.Fatalf("the %s canary survived the cut: %q", family, found)
		}
		if !strings.HasPrefix(info.Message, "a a a") {
			t.Fatalf("message %.40q", info.Message)
		}
	})

	t.Run("many fields", func(t *testing.T) {
		var many []taxonomy.FieldError
		for i := range 1000 {
			many = append(many, taxonomy.FieldError{Type: "value_error", Loc: []any{"items", i}, Msg: strings.Repeat("m", 200)})
		}
		tool := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			return toolmw.Result{}, taxonomy.Failure("ledger_rejected", "bad").WithFields(many...)
		}, dedupe.New())
		ctx := toolmw.WithCallID(budget.WithRun(context.Background()), "call_1")
		_, _ = tool(ctx, nil)
		_, err := tool(ctx, nil)
		info := taxonomy.InfoOf(err)
		if len(info.Fields) == 0 || len(info.Fields) > dedupe.MaxErrorFields || !reflect.DeepEqual(info.Fields, many[:len(info.Fields)]) {
			t.Fatalf("repeat kept %d field errors", len(info.Fields))
		}
	})

	t.Run("past the run's bytes", func(t *testing.T) {
		tool := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			return toolmw.Result{}, taxonomy.Failure("ledger_rejected", "the ledger refused").WithFields(fields...).WithRetryAfter(time.Second)
		}, dedupe.New(dedupe.WithMaxBytes(10)))
		ctx := toolmw.WithCallID(budget.WithRun(context.Background()), "call_1")
		_, err1 := tool(ctx, nil)
		_, err2 := tool(ctx, nil)
		want := taxonomy.InfoOf(err1)
		want.Message, want.Fields = "", nil
		if got := taxonomy.InfoOf(err2); !reflect.DeepEqual(got, want) {
			t.Fatalf("repeat's record:\n%+v\nwant\n%+v", got, want)
		}
	})
}

// TestCallIDReusedWithOtherArguments: a call id that arrives again with
// other arguments is not a repeat: the model re-used the id for another
// request, and answering it with the first call's outcome would report
// an action that was not asked for as done (a payment to acme answered
// to a payment to mallory). It is refused as
// tool-not-permitted/call_id_reused, nothing runs, and the first call's
// record stands; the same arguments spelt another way (key order,
// spacing) are a repeat.
func TestCallIDReusedWithOtherArguments(t *testing.T) {
	c := &counter{hold: 5 * time.Millisecond}
	tool := wrap(t, toolmw.Spec{Name: "pay"}, c)
	ctx := toolmw.WithCallID(budget.WithRun(context.Background()), "call_1")
	first, err := tool(ctx, json.RawMessage(`{"to":"acme","amount":10}`))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := tool(ctx, json.RawMessage(`{ "amount": 10, "to": "acme" }`)); err != nil || !reflect.DeepEqual(res, first) {
		t.Fatalf("the same arguments spelt another way: %v %v", res, err)
	}
	for _, other := range []string{`{"to":"mallory","amount":10}`, `{"to":"acme","amount":10,"note":"x"}`, ``, `{"to":"acme","to":"acme","amount":10}`} {
		_, err := tool(ctx, json.RawMessage(other))
		if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindNotPermitted || info.Code != taxonomy.CodeCallIDReused || info.Retryable {
			t.Errorf("%s: %v, want tool-not-permitted/call_id_reused", other, err)
		}
	}
	// In flight: a reuse does not wait for the first call.
	ctx2 := toolmw.WithCallID(budget.WithRun(context.Background()), "call_2")
	done := make(chan struct{})
	go func() { _, _ = tool(ctx2, json.RawMessage(`{"to":"acme"}`)); close(done) }()
	for c.n.Load() < 2 {
		runtime.Gosched()
	}
	if _, err := tool(ctx2, json.RawMessage(`{"to":"mallory"}`)); taxonomy.InfoOf(err).Code != taxonomy.CodeCallIDReused {
		t.Errorf("in flight: %v", err)
	}
	<-done
	if res, err := tool(ctx, json.RawMessage(`{"to":"acme","amount":10}`)); err != nil || !reflect.DeepEqual(res, first) || c.n.Load() != 2 {
		t.Fatalf("the first call's record: %v %v after %d executions", res, err, c.n.Load())
	}
}
