package openai

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/taxonomy"
)

// Outcome is how one of the model's tool calls ended.
//
// It is a plain value, safe to read from many goroutines; do not modify
// one that is shared.
type Outcome struct {
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

// Turn is the outcome of one reply's tool calls, in the order the model
// made them, and the answers to send back.
//
// A Turn is not modified after the dispatcher returns it; it is safe to
// read from many goroutines.
type Turn struct {
	// Calls holds one outcome per tool call of the reply, in the model's
	// order. Empty when the reply asked for no tool: the model's answer is
	// final.
	Calls []Outcome
}

// Messages returns the answers as Chat Completions tool messages, one per
// call in the model's order, each carrying the call's id and its Text.
// Append them to the conversation after the assistant message that made
// the calls.
func (t *Turn) Messages() []openai.ChatCompletionMessageParamUnion {
	if t == nil {
		return nil
	}
	out := make([]openai.ChatCompletionMessageParamUnion, len(t.Calls))
	for i, c := range t.Calls {
		out[i] = openai.ToolMessage(c.Text, c.CallID)
	}
	return out
}

// Items returns the answers as Responses API function_call_output items,
// one per call in the model's order, each carrying the call's call_id and
// its Text. Send them as the next request's input, chained to the reply
// with PreviousResponseID.
func (t *Turn) Items() []responses.ResponseInputItemUnionParam {
	if t == nil {
		return nil
	}
	out := make([]responses.ResponseInputItemUnionParam, len(t.Calls))
	for i, c := range t.Calls {
		item := responses.ResponseInputItemParamOfFunctionCallOutput(c.Text)
		item.OfFunctionCallOutput.CallID = param.NewOpt(c.CallID)
		out[i] = item
	}
	return out
}

// call is one tool call as the dispatcher makes it.
type call struct {
	id, name string
	args     json.RawMessage
	refused  error // set when the call is answered without reaching the box
}

// CallChat runs the tool calls of a Chat Completions reply
// (ChatCompletionMessage.ToolCalls) through the box and returns their
// outcomes. See [Tools.CallResponses] for how they run and what the error
// means; a custom tool call is answered as tool-not-found (the box serves
// function tools only).
func (t *Tools) CallChat(ctx context.Context, calls []openai.ChatCompletionMessageToolCallUnion) (*Turn, error) {
	cs := make([]call, len(calls))
	for i, c := range calls {
		switch {
		case c.Type == "function" || c.Type == "" && c.Function.Name != "":
			cs[i] = t.newCall(c.ID, c.Function.Name, c.Function.Arguments)
		case c.Type == "custom":
			cs[i] = call{id: c.ID, name: c.Custom.Name, refused: notOffered(c.Custom.Name)}
		default:
			cs[i] = call{id: c.ID, refused: notOffered("")}
		}
	}
	return t.dispatch(ctx, cs)
}

// CallResponses runs the function calls among a Responses API reply's
// output items (Response.Output) through the box and returns their
// outcomes; other items are skipped.
//
// The calls run at once, at most [WithMaxParallel] at a time, each with
// the model's call id in its context (toolmw.WithCallID); their outcomes
// come back in the model's order. Every call draws on the run budget ctx
// carries (put one there with budget.WithRun before the loop's first
// turn, so that it spans the run). A call the model makes to a tool the
// box did not offer is answered as tool-not-found without calling the
// box; arguments that are empty are read as {}.
//
// The Turn always holds an outcome for every call, so the conversation
// stays well-formed whatever happens. The error is nil, or a *[Stop]
// saying why the loop should not go on: ctx is done, every call was
// refused by the run budget, or every call found its circuit open. A
// panic in a tool is re-raised in the caller's goroutine once the turn's
// other calls have returned; a tool that calls runtime.Goexit ends its
// call as tool-failed/tool_exited.
func (t *Tools) CallResponses(ctx context.Context, items []responses.ResponseOutputItemUnion) (*Turn, error) {
	var cs []call
	for _, it := range items {
		if it.Type != "function_call" {
			continue
		}
		if it.Namespace != "" {
			cs = append(cs, call{id: it.CallID, name: it.Name, refused: notOffered("")})
			continue
		}
		cs = append(cs, t.newCall(it.CallID, it.Name, it.Arguments.OfString))
	}
	return t.dispatch(ctx, cs)
}

func (t *Tools) newCall(id, name, args string) call {
	c := call{id: id, name: name}
	if !t.offered[name] {
		c.refused = notOffered(name)
		return c
	}
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	c.args = json.RawMessage(args)
	return c
}

// notOffered is the answer to a call of a tool the model was not shown,
// worded as the Toolbox words it: the name is the model's, so it is shown
// only when it is a valid tool name.
func notOffered(name string) error {
	if !toolmw.ValidName(name) {
		return taxonomy.New(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, "no tool has the requested name")
	}
	return taxonomy.New(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, "no tool named "+name).WithTool(name)
}

// dispatch runs cs on at most maxParallel goroutines, each outcome in its
// own slot, and reports whether the run should stop. The caller only
// waits: a tool that panics has its panic re-raised here once the other
// workers are done, and one that calls runtime.Goexit ends its call as
// tool_exited while a fresh worker takes the calls left.
func (t *Tools) dispatch(ctx context.Context, cs []call) (*Turn, error) {
	turn := &Turn{Calls: make([]Outcome, len(cs))}
	var (
		next     atomic.Int64
		panicked atomic.Pointer[any]
		wg       sync.WaitGroup
		work     func()
	)
	work = func() {
		i, done := -1, false
		defer func() {
			if done {
				return
			}
			if p := recover(); p != nil {
				panicked.CompareAndSwap(nil, &p)
				return
			}
			// runtime.Goexit: the goroutine ends whatever happens here.
			turn.Calls[i] = answer(cs[i], toolmw.Result{}, errExited.WithTool(cs[i].name))
			wg.Go(work)
		}()
		for {
			if i = int(next.Add(1) - 1); i >= len(cs) {
				done = true
				return
			}
			turn.Calls[i] = t.run(ctx, cs[i])
		}
	}
	for range min(len(cs), t.opts.maxParallel) {
		wg.Go(work)
	}
	wg.Wait()
	if p := panicked.Load(); p != nil {
		panic(*p)
	}
	return turn, stopOf(ctx, turn.Calls)
}

// errExited answers a call whose tool ended its goroutine.
var errExited = taxonomy.Failure(taxonomy.CodeToolExited, "the tool ended its goroutine (runtime.Goexit)")

// run makes one call and renders its outcome for the model.
func (t *Tools) run(ctx context.Context, c call) Outcome {
	switch {
	case c.refused != nil:
		return answer(c, toolmw.Result{}, c.refused)
	case ctx.Err() != nil:
		return answer(c, toolmw.Result{}, ctx.Err())
	}
	res, err := t.call(toolmw.WithCallID(ctx, c.id), c)
	return answer(c, res, err)
}

// answer is the outcome of c, with what the model is shown of it.
func answer(c call, res toolmw.Result, err error) Outcome {
	return Outcome{CallID: c.id, Name: c.name, Result: res, Err: err, Text: toolmw.ForModel(res, err)}
}

func (t *Tools) call(ctx context.Context, c call) (toolmw.Result, error) {
	if t.opts.countCalls {
		if run, ok := budget.RunFrom(ctx); ok && !run.Take(c.name) {
			return toolmw.Result{}, taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunAttemptsExhausted,
				"the run's attempt cap for this tool is used up").WithTool(c.name)
		}
	}
	return t.box.Call(ctx, c.name, c.args)
}
