package dedupe_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/taxonomy"
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
	if err != nil || again != first || c.n.Load() != 1 {
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
