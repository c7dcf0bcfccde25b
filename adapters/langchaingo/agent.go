package langchaingo

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/turn"
)

// NotOfferedTool is the name of the tool an [Agent] routes the model's
// calls of unknown tools to. It is not a valid toolmw name (it holds a
// '/'), so no box tool can have it; no model is shown it.
const NotOfferedTool = "toolmw/not-offered"

// Agent returns a so that a call the model makes to a tool a does not have
// is answered typed, as toolmw answers it — the envelope of
// tool-not-found/tool_not_found, "no tool named <name>" (the name only when it
// is a valid tool name) — instead of the executor's own text ("<name> is
// not a valid tool, try another one"). The run goes on either way: the
// executor never aborts on an unknown tool.
//
// The executor (agents.Executor) has no hook for unknown tools: it looks a
// call's tool up among its agent's GetTools by name, case-insensitively,
// and answers a miss itself. So the returned agent's Plan hands the
// executor such a call as a call of [NotOfferedTool], a tool its GetTools
// adds, which answers it; and restores the call as the model made it in
// the steps it passes to a's Plan, so the model is shown its own call
// followed by the answer. What the executor sees of such a step — its
// callbacks' HandleAgentAction, the steps WithReturnIntermediateSteps
// returns — is the rewritten call: tool NotOfferedTool, input the JSON
// {"tool": …, "input": …} of the model's call.
//
// Everything else is a's: its input and output keys, its tools, its plans.
func Agent(a agents.Agent) agents.Agent {
	return &agent{inner: a}
}

type agent struct {
	inner agents.Agent
}

var _ agents.Agent = (*agent)(nil)

// redirected is the input of a call routed to NotOfferedTool: the call as
// the model made it.
type redirected struct {
	Tool  string `json:"tool"`
	Input string `json:"input"`
}

// Plan restores the routed calls in steps, asks the wrapped agent, and
// routes its calls of unknown tools to NotOfferedTool.
func (w *agent) Plan(ctx context.Context, steps []schema.AgentStep, inputs map[string]string, options ...chains.ChainCallOption) ([]schema.AgentAction, *schema.AgentFinish, error) {
	if len(steps) == 0 {
		resetRun(ctx) // the executor's first Plan: a pass over the input begins
	}
	restored, copied := steps, false
	for i, s := range steps {
		if s.Action.Tool != NotOfferedTool {
			continue
		}
		var r redirected
		if json.Unmarshal([]byte(s.Action.ToolInput), &r) != nil {
			continue
		}
		if !copied {
			restored, copied = append([]schema.AgentStep(nil), steps...), true
		}
		restored[i].Action.Tool, restored[i].Action.ToolInput = r.Tool, r.Input
	}
	actions, finish, err := w.inner.Plan(ctx, restored, inputs, options...)
	if len(actions) == 0 {
		return actions, finish, err
	}
	known := map[string]bool{}
	for _, t := range w.inner.GetTools() {
		known[strings.ToUpper(t.Name())] = true
	}
	out := make([]schema.AgentAction, len(actions))
	for i, a := range actions {
		out[i] = a
		if known[strings.ToUpper(a.Tool)] {
			continue
		}
		in, jerr := json.Marshal(redirected{Tool: a.Tool, Input: a.ToolInput})
		if jerr != nil {
			continue // not reached: a struct of strings always encodes
		}
		out[i].Tool, out[i].ToolInput = NotOfferedTool, string(in)
	}
	return out, finish, err
}

// GetInputKeys returns the wrapped agent's input keys.
func (w *agent) GetInputKeys() []string { return w.inner.GetInputKeys() }

// GetOutputKeys returns the wrapped agent's output keys.
func (w *agent) GetOutputKeys() []string { return w.inner.GetOutputKeys() }

// GetTools returns the wrapped agent's tools and the tool that answers
// calls of unknown ones.
func (w *agent) GetTools() []tools.Tool {
	ts := w.inner.GetTools()
	return append(append(make([]tools.Tool, 0, len(ts)+1), ts...), notOffered{})
}

// notOffered answers a call routed to NotOfferedTool.
type notOffered struct{}

func (notOffered) Name() string { return NotOfferedTool }
func (notOffered) Description() string {
	return "Answers the model's calls of tools the agent does not have."
}

func (notOffered) Call(_ context.Context, input string) (string, error) {
	var r redirected
	if json.Unmarshal([]byte(input), &r) != nil {
		r.Tool = "" // the model called this tool itself: say no more than that
	}
	return toolmw.ForModel(toolmw.Result{}, turn.NotOffered(r.Tool)), nil
}
