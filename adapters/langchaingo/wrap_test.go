package langchaingo_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolmw/toolmw"
	toollangchaingo "github.com/toolmw/toolmw/adapters/langchaingo"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

// userTool is a langchaingo tool of the user's: it records its inputs and
// answers from answer.
type userTool struct {
	name   string
	mu     sync.Mutex
	inputs []string
	answer func(n int, input string) (string, error)
}

func (u *userTool) Name() string        { return u.name }
func (u *userTool) Description() string { return "Sends a message." }
func (u *userTool) Call(_ context.Context, input string) (string, error) {
	u.mu.Lock()
	u.inputs = append(u.inputs, input)
	n := len(u.inputs)
	u.mu.Unlock()
	return u.answer(n, input)
}

func (u *userTool) calls() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.inputs...)
}

// TestWrapRoundTrip: a wrapped tool keeps its name and description for the
// agent, gets the agent's input exactly (any text, JSON or not), and its
// output comes back enveloped; the layers see the call under the valid
// toolmw name, with the arguments {"input": …}.
func TestWrapRoundTrip(t *testing.T) {
	u := &userTool{name: "Send Message!", answer: func(_ int, in string) (string, error) { return "sent " + in, nil }}
	var seen []string
	var mu sync.Mutex
	spy := func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			c, _ := toolmw.CallFrom(ctx)
			mu.Lock()
			seen = append(seen, c.Tool+" "+string(args))
			mu.Unlock()
			return next(ctx, args)
		}
	}
	w, err := toollangchaingo.Wrap(u, spy)
	must(t, err)
	if w.Name() != "Send Message!" || w.Description() != "Sends a message." {
		t.Fatalf("the wrapped tool is %q: %q", w.Name(), w.Description())
	}
	inputs := []string{"hello", ` {"a": 1} `, "line\nbreak \"quoted\" <b>&", ""}
	for _, in := range inputs {
		out, err := w.Call(budget.WithRun(context.Background()), in)
		if err != nil {
			t.Fatal(err)
		}
		if want := toolmw.ForModel(toolmw.Text("sent "+in), nil); out != want {
			t.Errorf("input %q: %q, want %q", in, out, want)
		}
	}
	if got := u.calls(); strings.Join(got, "|") != strings.Join(inputs, "|") {
		t.Errorf("the tool got %q, want %q", got, inputs)
	}
	if seen[0] != `Send_Message_ {"input":"hello"}` {
		t.Errorf("the layers saw %q", seen[0])
	}
}

// TestWrapApproval: a wrapped tool gated by the approval layer ends the
// executor's run with the approval-pending Stop; the reviewer reads its
// input in the request's summary; after the approval, the same input run
// again in the same run sends the message once, and the run goes on to
// the answer. The tool's own error, untyped, reaches the model as a
// failure whose text is withheld, and does not end the run.
func TestWrapApproval(t *testing.T) {
	desk := approval.NewDesk()
	u := &userTool{name: "send_message", answer: func(n int, in string) (string, error) {
		if in == "break" {
			return "", errors.New("smtp: 550 rejected for secret reasons")
		}
		return "sent", nil
	}}
	w, err := toollangchaingo.Wrap(u, stack(t, nil), toollangchaingo.WithSpec(toolmw.Spec{Description: "Sends."}))
	must(t, err)
	g := &userTool{name: "send_gated", answer: u.answer}
	gated, err := toollangchaingo.Wrap(g, toolmw.Chain(desk.Middleware(approval.Tools("send_gated")), stack(t, nil)))
	must(t, err)
	script := func() *scripted {
		return newScripted(
			reply{calls: []llms.ToolCall{call("c1", "send_message", `{"__arg1":"break"}`)}},
			reply{calls: []llms.ToolCall{call("c2", "send_gated", `{"__arg1":"hi Ann"}`)}},
			reply{text: "sent"})
	}
	ctx := budget.WithRun(context.Background(), budget.WithID("run_wrap"))
	run := func(m *scripted) (string, error) {
		return chains.Run(ctx, agents.NewExecutor(agents.NewOpenAIFunctionsAgent(m, []tools.Tool{w, gated})), "send")
	}
	first := script()
	_, err = run(first)
	var stop *toollangchaingo.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindApprovalPending {
		t.Fatalf("the run ended with %v", err)
	}
	got := first.toolResponses()
	if len(got) != 1 || strings.Contains(got[0].Content, "smtp") || !strings.Contains(got[0].Content, "tool-failed unmapped_failure") {
		t.Fatalf("the model was shown %+v", got)
	}
	req, err := desk.Get(context.Background(), stop.Approvals[0])
	must(t, err)
	if req.Tool != "send_gated" || !strings.Contains(req.Summary, `{"input":"hi Ann"}`) {
		t.Fatalf("the request: %+v", req)
	}
	must(t, desk.Approve(context.Background(), req, time.Hour))
	out, err := run(script())
	if err != nil || out != "sent" {
		t.Fatalf("the run after the approval: %q, %v", out, err)
	}
	if n := len(g.calls()); n != 1 {
		t.Errorf("the gated message was sent %d times, want once", n)
	}
}

// TestOptionsRejected: invalid options, and options given to the function
// that does not take them, are tool-definition-invalid/option_invalid
// errors.
func TestOptionsRejected(t *testing.T) {
	box := toolmw.NewToolbox()
	u := &userTool{name: "x"}
	for name, err := range map[string]error{
		"negative parallel":      second(toollangchaingo.New(box, toollangchaingo.WithMaxParallel(-1))),
		"unknown profile":        second(toollangchaingo.New(box, toollangchaingo.WithProfile(schema.Profile(99)))),
		"short key":              second(toollangchaingo.New(box, toollangchaingo.WithCallIDKey([]byte("short")))),
		"spec to New":            second(toollangchaingo.New(box, toollangchaingo.WithSpec(toolmw.Spec{}))),
		"nil box":                second(toollangchaingo.New(nil)),
		"profile to Wrap":        second(toollangchaingo.Wrap(u, toolmw.Chain(), toollangchaingo.WithProfile(schema.Plain))),
		"description to Wrap":    second(toollangchaingo.Wrap(u, toolmw.Chain(), toollangchaingo.WithSchemaInDescription(false))),
		"schema in spec":         second(toollangchaingo.Wrap(u, toolmw.Chain(), toollangchaingo.WithSpec(toolmw.Spec{InputSchema: []byte(`{}`)}))),
		"nil tool":               second(toollangchaingo.Wrap(nil, toolmw.Chain())),
		"nil middleware":         second(toollangchaingo.Wrap(u, nil)),
		"invalid name from spec": second(toollangchaingo.Wrap(u, toolmw.Chain(), toollangchaingo.WithSpec(toolmw.Spec{Name: "a b"}))),
	} {
		if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindDefinitionInvalid {
			t.Errorf("%s: %v (%s), want tool-definition-invalid", name, err, info.Kind)
		}
	}
	if _, err := toollangchaingo.Wrap(&userTool{name: ""}, toolmw.Chain()); err != nil {
		t.Errorf("a tool without a name: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }
