package langchaingo

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/llms"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// dispatcher runs one call made through a tools.Tool.
type dispatcher struct {
	box        turn.Caller
	countCalls bool
	handler    callbacks.Handler
	idKey      []byte
}

var errNilContext = taxonomy.New(taxonomy.KindFailed, taxonomy.CodeContextNil, "the tool was called with a nil context")

// call runs one call of name with args through the box, under a call id
// derived from the call, and returns what the model is shown; or, when the
// run must end, a *Stop. input is the agent's input as given, for the
// callbacks handler.
func (d *dispatcher) call(ctx context.Context, name string, args json.RawMessage, input string) (string, error) {
	if ctx == nil {
		return toolmw.ForModel(toolmw.Result{}, errNilContext.WithTool(name)), nil
	}
	if d.handler != nil {
		d.handler.HandleToolStart(ctx, input)
	}
	c := turn.Call{ID: callID(ctx, d.idKey, name, args), Name: name, Args: args}
	a := turn.Run(ctx, d.box, []turn.Call{c}, turn.Options{MaxParallel: 1, CountCalls: d.countCalls})[0]
	if err := turn.StopOf(ctx, []turn.Answer{a}); err != nil {
		resetRun(ctx)
		if d.handler != nil {
			d.handler.HandleToolError(ctx, err)
		}
		return "", err
	}
	if d.handler != nil {
		d.handler.HandleToolEnd(ctx, a.Text)
	}
	return a.Text, nil
}

// Answer is how one of the model's tool calls ended, in [Tools.CallTools].
type Answer struct {
	// CallID is the model's id of the call exactly as it sent it: the
	// answer must carry it. (The layers see it through toolmw.WithCallID,
	// as toolmw.SafeCallID makes it.)
	CallID string
	// Name is the tool the model asked for.
	Name string
	// Result is what the tool returned; meaningful when Err is nil.
	Result toolmw.Result
	// Err is why the call failed, a typed error that taxonomy.InfoOf
	// reads, or the context's error for a call cancelled before it
	// started; nil when the call succeeded. It is for the loop, never for
	// the model.
	Err error
	// Text is what the model is shown: toolmw.ForModel(Result, Err), the
	// result or the failure wrapped as untrusted data.
	Text string
}

// Turn is the outcome of one model reply's tool calls, in the order the
// model made them. It is not modified after [Tools.CallTools] returns it;
// it is safe to read from many goroutines.
type Turn struct {
	// Calls holds one outcome per tool call of the reply, in the model's
	// order. Empty when the reply asked for no tool.
	Calls []Answer
}

// Messages returns the answers as tool messages, one per call in the
// model's order: role tool, with one llms.ToolCallResponse part carrying
// the call's id, the tool's name and its Text (langchaingo's OpenAI and
// Anthropic clients take one response per tool message). Append them to
// the conversation after the model's message that made the calls. A tool
// response holds text only, so a result's images and files go as
// toolmw.ForModel's descriptors of them.
func (t *Turn) Messages() []llms.MessageContent {
	if t == nil {
		return nil
	}
	out := make([]llms.MessageContent, len(t.Calls))
	for i, c := range t.Calls {
		out[i] = llms.MessageContent{
			Role:  llms.ChatMessageTypeTool,
			Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: c.CallID, Name: c.Name, Content: c.Text}},
		}
	}
	return out
}

// CallTools runs the tool calls of a model's reply (a
// llms.ContentChoice's ToolCalls), for a loop that calls the model itself
// with llms.WithTools([Tools.Definitions]) rather than through an agent.
// The calls run at once, at most [WithMaxParallel] at a time, each with
// the model's call id in its context (toolmw.WithCallID); their outcomes
// come back in the model's order. A call of a tool the box did not offer,
// or of another type than "function", is answered as tool-not-found
// without calling the box; empty arguments are read as {}.
//
// The Turn always holds an outcome for every call. The error is nil, or a
// [*Stop] saying why the loop should not go on: ctx is done, a call waits
// for approval, every call was refused by the run budget, or every call
// found its circuit open (turn.StopOf over the whole turn). A panic in a
// tool is re-raised in the caller's goroutine once the turn's other calls
// have returned.
func (t *Tools) CallTools(ctx context.Context, calls []llms.ToolCall) (*Turn, error) {
	cs := make([]turn.Call, len(calls))
	for i, c := range calls {
		switch {
		case c.FunctionCall == nil || c.Type != "" && c.Type != "function":
			name := ""
			if c.FunctionCall != nil {
				name = c.FunctionCall.Name
			}
			cs[i] = turn.Call{ID: c.ID, Name: name, Refused: turn.NotOffered("")}
		case !t.offered[c.FunctionCall.Name]:
			cs[i] = turn.Call{ID: c.ID, Name: c.FunctionCall.Name, Refused: turn.NotOffered(c.FunctionCall.Name)}
		default:
			args := c.FunctionCall.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			cs[i] = turn.Call{ID: c.ID, Name: c.FunctionCall.Name, Args: json.RawMessage(args)}
		}
	}
	answers := turn.Run(ctx, t.d.box, cs, turn.Options{MaxParallel: t.opts.maxParallel, CountCalls: t.opts.countCalls})
	out := &Turn{Calls: make([]Answer, len(cs))}
	for i, a := range answers {
		out.Calls[i] = Answer{CallID: cs[i].ID, Name: cs[i].Name, Result: a.Result, Err: a.Err, Text: a.Text}
	}
	return out, turn.StopOf(ctx, answers)
}
