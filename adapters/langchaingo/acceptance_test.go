package langchaingo_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/toolmw/toolmw"
	toollangchaingo "github.com/toolmw/toolmw/adapters/langchaingo"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// The model's script in the acceptance scenario, as a model shown
// langchaingo's OpenAI functions agent's declarations writes it (each tool
// a function of one string, __arg1, which holds the JSON arguments): a
// refusing tool, a transiently failing tool and an unknown tool in one
// turn, then the tool that needs approval, then the answer.
func travelScript() []reply {
	return []reply{
		{calls: []llms.ToolCall{
			call("call_1", "cancel_flight", `{"__arg1":"{\"flight\":\"LH123\"}"}`),
			call("call_2", "get_weather", `{"__arg1":"{\"city\":\"Oslo\"}"}`),
			call("call_3", "frobnicate", `{"__arg1":"now"}`),
		}},
		{calls: []llms.ToolCall{call("call_4", "cancel_booking", `{"__arg1":"{\"booking\":\"BK-1042\"}"}`)}},
		{text: "LH123 cannot be cancelled; Oslo is clear; BK-1042 is cancelled."},
	}
}

// TestAcceptance runs the scenario through langchaingo's OpenAI functions
// agent and its executor, built the usual way over the adapter's tools.
// The refusal reaches the model once, as a tool result; the transient
// failure is retried inside toolmw (the tool ran twice, the model saw one
// success); the unknown tool is answered typed; the run goes on. The call
// that needs approval ends the run with the approval-pending Stop, which
// errors.As finds in what chains.Run returns. A reviewer approves; the app
// runs the same input again in the same run, the model makes the same
// calls, and the booking is cancelled exactly once (the weather is
// answered from dedupe's record), then the model answers.
func TestAcceptance(t *testing.T) {
	tr := newTravel(t)
	lc, err := toollangchaingo.New(tr.box)
	if err != nil {
		t.Fatal(err)
	}
	ctx := budget.WithRun(context.Background(), budget.WithID("run_acceptance"))
	run := func(model *scripted) (string, error) {
		agent := agents.NewOpenAIFunctionsAgent(model, lc.Tools())
		executor := agents.NewExecutor(toollangchaingo.Agent(agent))
		return chains.Run(ctx, executor, "Cancel LH123 and BK-1042; how is Oslo?")
	}

	first := newScripted(travelScript()...)
	_, err = run(first)
	var stop *toollangchaingo.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindApprovalPending || len(stop.Approvals) != 1 ||
		!errors.Is(err, taxonomy.ErrApprovalPending) {
		t.Fatalf("the run ended with %v, want an approval-pending Stop with one approval", err)
	}
	if got := len(first.received()); got != 2 {
		t.Fatalf("the model was asked %d times before the pause, want 2", got)
	}
	want := []string{
		`<untrusted-data source="tool_refusal">flight_not_cancellable: this fare is non-refundable</untrusted-data>`,
		`<untrusted-data source="tool_result">clear in Oslo</untrusted-data>`,
		toolmw.ForModel(toolmw.Result{}, turn.NotOffered("frobnicate")),
	}
	got := first.toolResponses()
	if len(got) != len(want) {
		t.Fatalf("the model was shown %d tool results, want %d: %+v", len(got), len(want), got)
	}
	for i, r := range got {
		if r.Content != want[i] || r.ToolCallID != []string{"call_1", "call_2", "call_3"}[i] {
			t.Errorf("tool result %d: %+v, want %q for call_%d", i, r, want[i], i+1)
		}
	}
	if tr.refusals.Load() != 1 || tr.weathers.Load() != 2 || tr.cancellations.Load() != 0 {
		t.Fatalf("before the decision: %d refusals, %d weather calls, %d cancellations; want 1, 2 (one retry), 0",
			tr.refusals.Load(), tr.weathers.Load(), tr.cancellations.Load())
	}

	req, err := tr.desk.Get(context.Background(), stop.Approvals[0])
	if err != nil {
		t.Fatal(err)
	}
	if req.Tool != "cancel_booking" {
		t.Fatalf("the request is for %s", req.Tool)
	}
	if err := tr.desk.Approve(context.Background(), req, time.Hour); err != nil {
		t.Fatal(err)
	}

	second := newScripted(travelScript()...)
	out, err := run(second)
	if err != nil {
		t.Fatalf("the run after the approval: %v", err)
	}
	if out != "LH123 cannot be cancelled; Oslo is clear; BK-1042 is cancelled." {
		t.Errorf("answer %q", out)
	}
	if tr.cancellations.Load() != 1 || tr.weathers.Load() != 2 {
		t.Fatalf("after the decision: %d cancellations, %d weather calls; want 1 and 2", tr.cancellations.Load(), tr.weathers.Load())
	}
	got = second.toolResponses()
	if len(got) != 4 || got[3].Content != `<untrusted-data source="tool_result">cancelled BK-1042</untrusted-data>` {
		t.Fatalf("the model was shown %+v", got)
	}
	for i, r := range got[:3] {
		if r.Content != want[i] {
			t.Errorf("run again, tool result %d: %q, want %q", i, r.Content, want[i])
		}
	}
	if n := tr.refusals.Load(); n != 1 {
		t.Errorf("the refusing tool ran %d times over both runs, want 1 (dedupe keeps the refusal: it is final)", n)
	}
}
