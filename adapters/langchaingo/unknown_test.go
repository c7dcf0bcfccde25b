package langchaingo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/toolmw/toolmw"
	toollangchaingo "github.com/toolmw/toolmw/adapters/langchaingo"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/turn"
)

// TestUnknownToolWithoutAgent documents what the model reads when the
// executor answers an unknown tool itself: its own text, holding the
// model's name for the tool. The run goes on.
func TestUnknownToolWithoutAgent(t *testing.T) {
	tr := newTravel(t)
	lc, err := toollangchaingo.New(tr.box)
	must(t, err)
	model := newScripted(reply{calls: []llms.ToolCall{call("c1", "frobnicate", `{}`)}}, reply{text: "no such tool"})
	out, err := chains.Run(budget.WithRun(context.Background()), agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, lc.Tools())), "frobnicate")
	if err != nil || out != "no such tool" {
		t.Fatalf("the run ended with %q, %v", out, err)
	}
	if got := model.toolResponses(); len(got) != 1 || got[0].Content != "frobnicate is not a valid tool, try another one" {
		t.Fatalf("the model was shown %+v", got)
	}
}

// TestUnknownToolThroughAgent: through Agent, the OpenAI functions agent's
// model is shown its own call (the tool's name as it wrote it, and the
// input the agent read from its arguments, as langchaingo replays every
// call) followed by the typed answer, and the run goes on to the answer.
// A known tool named in another case is the executor's match, as before;
// a call of NotOfferedTool itself is answered as a tool that does not
// exist, without its name.
func TestUnknownToolThroughAgent(t *testing.T) {
	tr := newTravel(t)
	lc, err := toollangchaingo.New(tr.box)
	must(t, err)
	model := newScripted(
		reply{calls: []llms.ToolCall{
			call("c1", "frobnicate", `{"__arg1":"now"}`),
			call("c2", "GET_WEATHER", `{"__arg1":"{\"city\":\"Oslo\"}"}`),
			call("c3", toollangchaingo.NotOfferedTool, `{"__arg1":"{\"tool\":\"cancel_booking\",\"input\":\"x\"}"}`),
		}},
		reply{text: "done"})
	rec := &recorder{}
	executor := agents.NewExecutor(toollangchaingo.Agent(agents.NewOpenAIFunctionsAgent(model, lc.Tools())),
		agents.WithCallbacksHandler(rec))
	out, err := chains.Run(budget.WithRun(context.Background()), executor, "frobnicate")
	if err != nil || out != "done" {
		t.Fatalf("the run ended with %q, %v", out, err)
	}
	got := model.toolResponses()
	want := []string{
		toolmw.ForModel(toolmw.Result{}, turn.NotOffered("frobnicate")),
		`<untrusted-data source="tool_result">clear in Oslo</untrusted-data>`,
		toolmw.ForModel(toolmw.Result{}, turn.NotOffered("")),
	}
	if len(got) != len(want) {
		t.Fatalf("the model was shown %+v", got)
	}
	for i := range want {
		if got[i].Content != want[i] {
			t.Errorf("result %d: %q, want %q", i, got[i].Content, want[i])
		}
	}
	if !strings.Contains(want[0], "tool-not-found tool_not_found: no tool named frobnicate") {
		t.Errorf("the typed answer reads %q", want[0])
	}
	// The assistant message replayed to the model holds its calls under
	// the names it gave.
	reqs := model.received()
	var replayed []llms.ToolCall
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, p := range m.Parts {
			if c, ok := p.(llms.ToolCall); ok {
				replayed = append(replayed, c)
			}
		}
	}
	if len(replayed) != 3 || replayed[0].FunctionCall.Name != "frobnicate" || replayed[0].FunctionCall.Arguments != "now" ||
		replayed[2].FunctionCall.Name != toollangchaingo.NotOfferedTool {
		t.Errorf("the model's calls were replayed as %+v", replayed)
	}
	// The executor's callbacks see the routed call.
	if !strings.Contains(rec.String(), "Tool:"+toollangchaingo.NotOfferedTool) {
		t.Errorf("the callbacks did not see the routed call:\n%s", rec.String())
	}
}

// TestMRKLAgent drives langchaingo's text agent (agents.NewOneShotAgent,
// "Action: … Action Input: …") over the adapter's tools: the prompt shows
// each tool with its input schema; a JSON input (in a code fence too) is
// the call's arguments; a text that is not JSON is answered
// tool-args-invalid; a typed failure and an unknown tool (through Agent)
// are observations in the envelope; the run goes on to the final answer.
func TestMRKLAgent(t *testing.T) {
	tr := newTravel(t)
	lc, err := toollangchaingo.New(tr.box)
	must(t, err)
	model := newScripted(
		reply{text: "Thought: the weather first\nAction: get_weather\nAction Input: ```json\n{\"city\": \"Oslo\"}\n```"},
		reply{text: "Thought: now the flight\nAction: cancel_flight\nAction Input: {\"flight\":\"LH123\"}"},
		reply{text: "Thought: try words\nAction: cancel_flight\nAction Input: LH123 please"},
		reply{text: "Thought: something else\nAction: frobnicate\nAction Input: now"},
		reply{text: "Thought: I now know the final answer\nFinal Answer: Oslo is clear; LH123 stays."},
	)
	executor := agents.NewExecutor(toollangchaingo.Agent(agents.NewOneShotAgent(model, lc.Tools())), agents.WithMaxIterations(6))
	out, err := chains.Run(budget.WithRun(context.Background()), executor, "Weather in Oslo, and cancel LH123")
	if err != nil || out != "Oslo is clear; LH123 stays." {
		t.Fatalf("the run ended with %q, %v", out, err)
	}
	reqs := model.received()
	last := ""
	for _, p := range reqs[len(reqs)-1].Messages[0].Parts {
		last += p.(llms.TextContent).Text
	}
	for _, want := range []string{
		`- get_weather: Current weather in a city. Input: a JSON object with this JSON Schema: {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]`,
		"Observation: <untrusted-data source=\"tool_result\">clear in Oslo</untrusted-data>",
		"Observation: <untrusted-data source=\"tool_refusal\">flight_not_cancellable: this fare is non-refundable</untrusted-data>",
		"Observation: <untrusted-data source=\"tool_error\">tool-args-invalid ",
		"Observation: " + toolmw.ForModel(toolmw.Result{}, turn.NotOffered("frobnicate")),
	} {
		if !strings.Contains(last, want) {
			t.Errorf("the last prompt lacks %q:\n%s", want, last)
		}
	}
	if tr.refusals.Load() != 1 || tr.weathers.Load() != 2 {
		t.Errorf("%d refusals, %d weather calls; want 1 and 2", tr.refusals.Load(), tr.weathers.Load())
	}
}
