package langchaingo_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/toolmw/toolmw"
	toollangchaingo "github.com/toolmw/toolmw/adapters/langchaingo"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

// TestApprovalInANewRun is the approval cycle of an app that keeps nothing
// between the two passes but the run id (a request served by another
// handler, or another process sharing the approval store): the second pass
// runs in a new run with the same id. The approved call runs once; the
// calls before it run again (dedupe's records live with the *budget.Run,
// in memory).
func TestApprovalInANewRun(t *testing.T) {
	tr := newTravel(t)
	lc, err := toollangchaingo.New(tr.box)
	if err != nil {
		t.Fatal(err)
	}
	pass := func() (string, error) {
		ctx := budget.WithRun(context.Background(), budget.WithID("run_new_pass"))
		agent := agents.NewOpenAIFunctionsAgent(newScripted(travelScript()...), lc.Tools())
		return chains.Run(ctx, agents.NewExecutor(agent), "Cancel LH123 and BK-1042; how is Oslo?")
	}
	_, err = pass()
	var stop *toollangchaingo.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindApprovalPending {
		t.Fatalf("the first pass ended with %v", err)
	}
	req, err := tr.desk.Get(context.Background(), stop.Approvals[0])
	must(t, err)
	must(t, tr.desk.Approve(context.Background(), req, time.Hour))
	if _, err := pass(); err != nil {
		t.Fatalf("the second pass: %v", err)
	}
	if n := tr.cancellations.Load(); n != 1 {
		t.Fatalf("the booking was cancelled %d times, want once", n)
	}
	if n := tr.weathers.Load(); n != 3 {
		t.Errorf("the weather tool ran %d times, want 3 (twice, then once in the new run)", n)
	}
	// A third pass (the input run once more, after the answer): the
	// approval is used, so the call is refused and the tool does not run.
	ctx := budget.WithRun(context.Background(), budget.WithID("run_new_pass"))
	model := newScripted(travelScript()...)
	if _, err := chains.Run(ctx, agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, lc.Tools())), "again"); err != nil {
		t.Fatal(err)
	}
	if n := tr.cancellations.Load(); n != 1 {
		t.Fatalf("the booking was cancelled %d times, want once", n)
	}
	got := model.toolResponses()
	if src, content := envelopeOf(t, got[len(got)-1].Content); src != toolmw.SourceError || !strings.Contains(content, taxonomy.CodeApprovalReplayed) {
		t.Errorf("the used approval's call was answered %q", got[len(got)-1].Content)
	}
}

func envelopeOf(t *testing.T, s string) (source, content string) {
	t.Helper()
	source, content, ok := toolmw.ParseEnvelope(s)
	if !ok {
		t.Fatalf("not an envelope: %q", s)
	}
	return source, content
}

// TestCancellation: the executor's context reaches the tool; cancelled
// while the tool runs, the run ends with the cancelled Stop, which
// errors.Is reads as context.Canceled, from executor.Call itself too.
func TestCancellation(t *testing.T) {
	box := toolmw.NewToolbox()
	ctx, cancel := context.WithCancel(budget.WithRun(context.Background()))
	defer cancel()
	started := make(chan struct{})
	must(t, box.Register(toolmw.Spec{Name: "slow"}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		close(started)
		<-ctx.Done()
		return toolmw.Result{}, ctx.Err()
	}))
	rec := &recorder{}
	lc, err := toollangchaingo.New(box, toollangchaingo.WithCallbacksHandler(rec))
	must(t, err)
	model := newScripted(reply{calls: []llms.ToolCall{call("c1", "slow", `{}`)}})
	executor := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, lc.Tools()), agents.WithCallbacksHandler(rec))
	go func() {
		<-started
		cancel()
	}()
	_, err = executor.Call(ctx, map[string]any{"input": "go slow"})
	var stop *toollangchaingo.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("the run ended with %v, want the cancelled Stop", err)
	}
	if !strings.Contains(rec.String(), "tool_error turn: run stopped: context canceled") {
		t.Errorf("the callbacks handler was not told of the stop:\n%s", rec.String())
	}
	if n := len(model.received()); n != 1 {
		t.Errorf("the model was asked %d times, want once", n)
	}
}

// stubBox answers every call with err.
type stubBox struct {
	err   error
	calls int
}

func (b *stubBox) Definitions(schema.Profile) ([]toolmw.Definition, error) {
	return []toolmw.Definition{{Name: "flaky", InputSchema: json.RawMessage(toolmw.AnyObjectSchema)}}, nil
}

func (b *stubBox) Call(context.Context, string, json.RawMessage) (toolmw.Result, error) {
	b.calls++
	return toolmw.Result{}, b.err
}

// TestStops: a call that finds its circuit open, or its tool out of
// attempts in the run budget, ends the run with that Stop (one call is all
// the model wanted at that point); a failure the model can act on does
// not.
func TestStops(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		kind taxonomy.Kind
	}{
		{"circuit open", taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "open"), taxonomy.KindCircuitOpen},
		{"run budget", taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunAttemptsExhausted, "used up"), taxonomy.KindRunLimitExceeded},
		{"failure", taxonomy.Failure("boom", "it broke"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			box := &stubBox{err: tc.err}
			lc, err := toollangchaingo.New(box)
			must(t, err)
			model := newScripted(reply{calls: []llms.ToolCall{call("c1", "flaky", `{}`)}}, reply{text: "gave up"})
			out, err := chains.Call(budget.WithRun(context.Background()), agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, lc.Tools())),
				map[string]any{"input": "try"})
			var stop *toollangchaingo.Stop
			if tc.kind == "" {
				if err != nil || out["output"] != "gave up" {
					t.Fatalf("the run ended with %v, %v; want the model's answer", out, err)
				}
				return
			}
			if !errors.As(err, &stop) || stop.Kind != tc.kind {
				t.Fatalf("the run ended with %v, want a %s Stop", err, tc.kind)
			}
		})
	}
}

// TestCallsCounted: with WithCallsCounted a call takes an attempt from the
// run budget; the call past the cap ends the run with the
// run-limit-exceeded Stop, without running.
func TestCallsCounted(t *testing.T) {
	x := newIDs(t)
	lc, err := toollangchaingo.New(x.box, toollangchaingo.WithCallsCounted())
	must(t, err)
	ctx := budget.WithRun(context.Background(), budget.WithMaxAttempts(1))
	model := newScripted(
		reply{calls: []llms.ToolCall{call("c1", "echo", `{}`)}},
		reply{calls: []llms.ToolCall{call("c2", "echo", `{}`)}})
	_, err = chains.Run(ctx, agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, lc.Tools())), "twice")
	var stop *toollangchaingo.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindRunLimitExceeded {
		t.Fatalf("the run ended with %v", err)
	}
	if n := len(x.take()); n != 1 {
		t.Fatalf("the tool ran %d times, want once", n)
	}
}

// TestApprovalSameRunWithoutAgent: without Agent (so no pass begins at the
// first Plan), the Stop itself starts a new pass: the same input run again
// in the same run finds the approval, and dedupe answers the calls made
// before it.
func TestApprovalSameRunWithoutAgent(t *testing.T) {
	tr := newTravel(t)
	lc, err := toollangchaingo.New(tr.box)
	must(t, err)
	ctx := budget.WithRun(context.Background(), budget.WithID("run_no_agent"))
	pass := func() (string, error) {
		agent := agents.NewOpenAIFunctionsAgent(newScripted(travelScript()...), lc.Tools())
		return chains.Run(ctx, agents.NewExecutor(agent), "Cancel LH123 and BK-1042; how is Oslo?")
	}
	_, err = pass()
	var stop *toollangchaingo.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindApprovalPending {
		t.Fatalf("the first pass ended with %v", err)
	}
	req, err := tr.desk.Get(context.Background(), stop.Approvals[0])
	must(t, err)
	must(t, tr.desk.Approve(context.Background(), req, time.Hour))
	if _, err := pass(); err != nil {
		t.Fatalf("the second pass: %v", err)
	}
	if tr.cancellations.Load() != 1 || tr.weathers.Load() != 2 || tr.refusals.Load() != 1 {
		t.Fatalf("%d cancellations, %d weather calls, %d refusals; want 1, 2, 1",
			tr.cancellations.Load(), tr.weathers.Load(), tr.refusals.Load())
	}
}
