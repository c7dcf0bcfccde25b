package guardrail_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/guardrail"
	"github.com/toolmw/toolmw/middleware/permit"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counted is a tool that counts its executions and echoes its arguments.
type counted struct{ n atomic.Int64 }

func (c *counted) tool(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
	c.n.Add(1)
	return toolmw.Text("echo " + string(args)), nil
}

func wrap(t testing.TB, tool toolmw.Tool, mws ...toolmw.Middleware) toolmw.Tool {
	t.Helper()
	w, err := toolmw.Wrap(toolmw.Spec{Name: "book"}, tool, mws...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// mentions blocks content holding word, quoting it in its error as a
// careless check would.
func mentions(word string) (guardrail.ArgsCheck, guardrail.ResultCheck) {
	find := func(s string) error {
		if strings.Contains(s, word) {
			return fmt.Errorf("found %q in %q", word, s)
		}
		return nil
	}
	return func(_ context.Context, _ toolmw.Call, args json.RawMessage) error { return find(string(args)) },
		func(_ context.Context, _ toolmw.Call, res toolmw.Result) error { return find(res.Content) }
}

// TestBlocks: an argument guardrail blocks before the tool runs, a result
// guardrail after it; the error names the guardrail, carries a fixed
// message, is final and not retryable, and keeps nothing of the check's
// error, not even as a cause.
func TestBlocks(t *testing.T) {
	argsCheck, _ := mentions("4556")
	_, resultCheck := mentions("internal.example")
	cases := []struct {
		name      string
		args      string
		code      string
		guardrail string
		runs      int64
	}{
		{"clean", `{"to":"Rome"}`, "", "", 1},
		{"arguments", `{"card":"4556 7375"}`, taxonomy.CodeGuardrailArgs, "no_card_numbers", 0},
		{"result", `{"url":"https://internal.example/x"}`, taxonomy.CodeGuardrailResult, "no_internal_urls", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ct := &counted{}
			tool := wrap(t, ct.tool, guardrail.New(
				guardrail.Args("no_card_numbers", argsCheck),
				guardrail.Result("no_internal_urls", resultCheck)))
			res, err := tool(context.Background(), json.RawMessage(c.args))
			if ct.n.Load() != c.runs {
				t.Fatalf("%d executions, want %d", ct.n.Load(), c.runs)
			}
			if c.code == "" {
				if err != nil || res.Content != "echo "+c.args {
					t.Fatalf("%q, %v", res.Content, err)
				}
				return
			}
			info := taxonomy.InfoOf(err)
			if info.Kind != taxonomy.KindGuardrailBlocked || info.Code != c.code || info.Guardrail != c.guardrail ||
				info.Retryable || !info.Final || !reflect.DeepEqual(res, toolmw.Result{}) {
				t.Fatalf("result %q, record %+v", res.Content, info)
			}
			if retry, _ := taxonomy.ShouldRetry(err, true); retry {
				t.Fatal("a block may be retried")
			}
			if errors.Unwrap(err) != nil || strings.Contains(err.Error(), "found") || strings.Contains(toolmw.ForModel(res, err), "found") {
				t.Fatalf("the check's error was kept: %v (cause %v)", err, errors.Unwrap(err))
			}
			if !strings.Contains(info.Message, c.guardrail) {
				t.Fatalf("the message %q does not name the guardrail", info.Message)
			}
		})
	}
}

// TestOrder: guardrails run in the order given and the first block ends
// the call; result guardrails run only after a success.
func TestOrder(t *testing.T) {
	var seen []string
	pass := func(name string) guardrail.Option {
		return guardrail.Args(name, func(context.Context, toolmw.Call, json.RawMessage) error { seen = append(seen, name); return nil })
	}
	block := func(name string) guardrail.Option {
		return guardrail.Args(name, func(context.Context, toolmw.Call, json.RawMessage) error {
			seen = append(seen, name)
			return errors.New("no")
		})
	}
	result := guardrail.Result("after", func(context.Context, toolmw.Call, toolmw.Result) error { seen = append(seen, "after"); return nil })
	ct := &counted{}
	tool := wrap(t, ct.tool, guardrail.New(pass("one"), block("two"), pass("three"), result))
	_, err := tool(context.Background(), nil)
	if got := taxonomy.InfoOf(err).Guardrail; got != "two" || !reflect.DeepEqual(seen, []string{"one", "two"}) || ct.n.Load() != 0 {
		t.Fatalf("blocked by %q, checks %v, executions %d", got, seen, ct.n.Load())
	}

	seen = nil
	failing := wrap(t, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Refusal("sold_out", "no seats")
	}, guardrail.New(pass("one"), result))
	_, err = failing(context.Background(), nil)
	if taxonomy.InfoOf(err).Code != "sold_out" || !reflect.DeepEqual(seen, []string{"one"}) {
		t.Fatalf("%v; checks %v", err, seen)
	}
}

// TestFailsClosed: a check that panics blocks, at either stage, and the
// hook gets the panic value; a panic in the hook is dropped.
func TestFailsClosed(t *testing.T) {
	cases := []struct {
		name  string
		opt   guardrail.Option
		code  string
		value any
		runs  int64
	}{
		{"arguments", guardrail.Args("pii_scan", func(context.Context, toolmw.Call, json.RawMessage) error { panic("scanner down") }),
			taxonomy.CodeGuardrailArgs, "scanner down", 0},
		{"result", guardrail.Result("pii_scan", func(context.Context, toolmw.Call, toolmw.Result) error { panic("scanner down") }),
			taxonomy.CodeGuardrailResult, "scanner down", 1},
		{"nil panic", guardrail.Args("pii_scan", func(context.Context, toolmw.Call, json.RawMessage) error { panic(nil) }),
			taxonomy.CodeGuardrailArgs, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var blocks []guardrail.Block
			ct := &counted{}
			tool := wrap(t, ct.tool, guardrail.New(c.opt, guardrail.WithOnBlock(func(_ context.Context, b guardrail.Block) {
				blocks = append(blocks, b)
				panic("the hook broke too")
			})))
			_, err := tool(toolmw.WithCallID(context.Background(), "call_9"), nil)
			info := taxonomy.InfoOf(err)
			if info.Code != c.code || info.Guardrail != "pii_scan" || ct.n.Load() != c.runs {
				t.Fatalf("%+v, %d executions", info, ct.n.Load())
			}
			if len(blocks) != 1 || blocks[0].Panic == nil || blocks[0].Err != nil || blocks[0].Tool != "book" || blocks[0].CallID != "call_9" {
				t.Fatalf("blocks %+v", blocks)
			}
			if c.value != nil && blocks[0].Panic != c.value {
				t.Fatalf("panic value %v", blocks[0].Panic)
			}
		})
	}
}

// TestContextEnded: a check that gives up because the caller cancelled or
// ran out of time ends the call as that, not as a block, and its error
// (which quotes the content) is dropped.
func TestContextEnded(t *testing.T) {
	slow := func(ctx context.Context, _ toolmw.Call, args json.RawMessage) error {
		<-ctx.Done()
		return fmt.Errorf("moderation of %s: %w", args, ctx.Err())
	}
	tool := wrap(t, (&counted{}).tool, guardrail.New(guardrail.Args("moderation", slow)))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tool(ctx, json.RawMessage(`"secret words"`)); err != context.Canceled {
		t.Fatalf("cancelled: %v, want context.Canceled as is", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_, err := tool(ctx, json.RawMessage(`"secret words"`))
	if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindTimeout || info.Code != taxonomy.CodeDeadlineExceeded || strings.Contains(err.Error(), "secret") {
		t.Fatalf("deadline: %v", err)
	}
}

// TestNotAPermission: a permission denial and a guardrail block are told
// apart by kind and outcome.
func TestNotAPermission(t *testing.T) {
	no := func(context.Context, toolmw.Call, json.RawMessage) error { return errors.New("no") }
	denied := wrap(t, (&counted{}).tool, permit.New(permit.Deny("book")))
	blocked := wrap(t, (&counted{}).tool, guardrail.New(guardrail.Args("no_pii", no)))
	_, derr := denied(context.Background(), nil)
	_, berr := blocked(context.Background(), nil)
	if taxonomy.OutcomeOf(derr) != taxonomy.OutcomeNotPermitted || taxonomy.OutcomeOf(berr) != taxonomy.OutcomeBlocked ||
		errors.Is(berr, taxonomy.ErrNotPermitted) || !errors.Is(berr, taxonomy.ErrGuardrailBlocked) {
		t.Fatalf("denied %v (%s), blocked %v (%s)", derr, taxonomy.OutcomeOf(derr), berr, taxonomy.OutcomeOf(berr))
	}
}

// TestConcurrentCalls: 100 goroutines, every other one with arguments a
// guardrail blocks: each call ends in exactly one outcome, and only the
// clean ones run.
func TestConcurrentCalls(t *testing.T) {
	argsCheck, resultCheck := mentions("blocked")
	ct := &counted{}
	tool := wrap(t, ct.tool, guardrail.New(guardrail.Args("a", argsCheck), guardrail.Result("r", resultCheck)))
	var okN, blockedN atomic.Int64
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			args := json.RawMessage(`"clean"`)
			if i%2 == 0 {
				args = json.RawMessage(`"blocked"`)
			}
			switch _, err := tool(context.Background(), args); {
			case err == nil:
				okN.Add(1)
			case taxonomy.InfoOf(err).Code == taxonomy.CodeGuardrailArgs:
				blockedN.Add(1)
			default:
				t.Errorf("unexpected %v", err)
			}
		})
	}
	wg.Wait()
	if okN.Load() != 50 || blockedN.Load() != 50 || ct.n.Load() != 50 {
		t.Fatalf("ok %d, blocked %d, executions %d", okN.Load(), blockedN.Load(), ct.n.Load())
	}
}

func TestValidate(t *testing.T) {
	a := func(context.Context, toolmw.Call, json.RawMessage) error { return nil }
	r := func(context.Context, toolmw.Call, toolmw.Result) error { return nil }
	cases := []struct {
		name string
		opts []guardrail.Option
		bad  bool
	}{
		{"none", nil, false},
		{"nil option and hook", []guardrail.Option{nil, guardrail.WithOnBlock(nil)}, false},
		{"both", []guardrail.Option{guardrail.Args("no_pii", a), guardrail.Result("no_urls", r)}, false},
		{"not snake_case", []guardrail.Option{guardrail.Args("No PII", a)}, true},
		{"empty name", []guardrail.Option{guardrail.Result("", r)}, true},
		{"a token as a name", []guardrail.Option{guardrail.Args("ghp_abcdef0123456789abcdef0123456789", a)}, true},
		{"nil args check", []guardrail.Option{guardrail.Args("no_pii", nil)}, true},
		{"nil result check", []guardrail.Option{guardrail.Result("no_pii", nil)}, true},
		{"one name twice", []guardrail.Option{guardrail.Args("no_pii", a), guardrail.Result("no_pii", r)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := guardrail.Validate(c.opts...)
			_, werr := toolmw.Wrap(toolmw.Spec{Name: "book"}, (&counted{}).tool, guardrail.New(c.opts...))
			for how, err := range map[string]error{"Validate": err, "Wrap": werr} {
				info := taxonomy.InfoOf(err)
				if c.bad != (err != nil) || c.bad && (info.Kind != taxonomy.KindDefinitionInvalid || info.Code != taxonomy.CodeOptionInvalid) {
					t.Fatalf("%s: %v (bad: %v)", how, err, c.bad)
				}
			}
		})
	}
}

// TestOffWithoutGuardrails: New without guardrails returns the tool
// unchanged.
func TestOffWithoutGuardrails(t *testing.T) {
	var tool toolmw.Tool = (&counted{}).tool
	if got := guardrail.New(guardrail.WithOnBlock(func(context.Context, guardrail.Block) {}))(tool); reflect.ValueOf(got).Pointer() != reflect.ValueOf(tool).Pointer() {
		t.Fatal("New() wrapped the tool")
	}
}

func TestStageString(t *testing.T) {
	for s, want := range map[guardrail.Stage]string{guardrail.StageArgs: "args", guardrail.StageResult: "result", 0: "Stage(0)"} {
		if s.String() != want {
			t.Errorf("%d: %q", s, s.String())
		}
	}
}
