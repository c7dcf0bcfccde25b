package guardrail_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/testrig/sinkrig"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/guardrail"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// TestCanaryBlocksQuoteNothing: secrets planted in the arguments and the
// results, caught by guardrails whose errors quote them (and by checks
// that panic quoting them), through the default stack with the layer
// inserted and every sink on (logs at DEBUG): nothing of them — nor of the
// checks' errors — reaches a span, a metric, a log line at any level, an
// event or the model. Only the debug hook sees the checks' errors.
func TestCanaryBlocksQuoteNothing(t *testing.T) {
	quote := func(s string) error {
		if canary.Leaked(s) != "" {
			return fmt.Errorf("check quoted %s", s)
		}
		return nil
	}
	var mu sync.Mutex
	var hooked []string
	r := sinkrig.New(t)
	r.Insert(t, middleware.Retry, "guardrail", guardrail.New(
		guardrail.Args("no_secrets_in", func(_ context.Context, _ toolmw.Call, args json.RawMessage) error {
			if strings.Contains(string(args), "panic") {
				panic("check panicked on " + string(args))
			}
			return quote(string(args))
		}),
		guardrail.Result("no_secrets_out", func(_ context.Context, _ toolmw.Call, res toolmw.Result) error { return quote(res.Content) }),
		guardrail.WithOnBlock(func(_ context.Context, b guardrail.Block) {
			mu.Lock()
			defer mu.Unlock()
			hooked = append(hooked, fmt.Sprint(b.Err, b.Panic))
		}),
	))
	echo, err := r.Stack.Wrap(toolmw.Spec{Name: "lookup"}, func(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
		var in struct{ Q int }
		_ = json.Unmarshal(args, &in)
		return toolmw.Text("record for " + canary.Secrets[in.Q].Value), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for i, secret := range canary.Values() {
		for _, args := range []map[string]any{
			{"card": secret},               // blocked before the call
			{"card": secret, "p": "panic"}, // the check panics
			{"Q": i},                       // clean arguments, a secret in the result
		} {
			raw, _ := json.Marshal(args)
			res, err := echo(toolmw.WithCallID(context.Background(), "call_1"), raw)
			if err == nil {
				t.Fatalf("%s: not blocked", raw)
			}
			r.Tell(res, err)
			calls++
		}
	}
	sinks := r.Sinks(t)
	sinkrig.NoLeak(t, sinks, "check quoted", "check panicked", "record for")
	for _, code := range []string{"guardrail_args", "guardrail_result"} {
		if !strings.Contains(sinks["events"], code) || !strings.Contains(sinks["spans"], code) {
			t.Errorf("no %s in the events and spans", code)
		}
	}
	if len(hooked) != calls || canary.Leaked(strings.Join(hooked, " ")) == "" {
		t.Fatalf("the hook saw %d blocks of %d, without the content", len(hooked), calls)
	}
}

// TestCanaryEscapedArguments: the canaries sent with every character JSON
// escaped (\uXXXX, surrogate pairs for what lies beyond) in keys and
// values, nested, are caught by an argument check and a string check that
// look for them as written, through the default stack with every sink on;
// the tool never runs, and nothing of them reaches a sink.
func TestCanaryEscapedArguments(t *testing.T) {
	quote := func(s string) error {
		if canary.Leaked(s) != "" {
			return fmt.Errorf("check quoted %s", s)
		}
		return nil
	}
	for _, opt := range []guardrail.Option{
		guardrail.Args("no_secrets_in", func(_ context.Context, _ toolmw.Call, args json.RawMessage) error { return quote(string(args)) }),
		guardrail.ArgStrings("no_secrets_in", func(_ context.Context, _ toolmw.Call, s string) error { return quote(s) }),
	} {
		r := sinkrig.New(t)
		r.Insert(t, middleware.Retry, "guardrail", guardrail.New(opt))
		ran := 0
		echo, err := r.Stack.Wrap(toolmw.Spec{Name: "lookup"}, func(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
			ran++
			return toolmw.Text("record for " + string(args)), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range canary.Values() {
			for _, args := range []string{
				`{"card":` + escapeAll(secret) + `}`,
				`{"a":[{"b":` + escapeAll("x "+secret+" y") + `}]}`,
				`{` + escapeAll(secret) + `:true}`,
			} {
				res, err := echo(toolmw.WithCallID(context.Background(), "call_1"), json.RawMessage(args))
				if taxonomy.InfoOf(err).Code != taxonomy.CodeGuardrailArgs {
					t.Fatalf("%s: not blocked: %v", args, err)
				}
				r.Tell(res, err)
			}
		}
		if ran != 0 {
			t.Fatalf("the tool ran %d times", ran)
		}
		sinkrig.NoLeak(t, r.Sinks(t), "check quoted", "record for")
	}
}
