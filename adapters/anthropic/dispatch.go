package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/taxonomy"
)

// Outcome is how one of the model's tool calls ended.
//
// It is a plain value, safe to read from many goroutines; do not modify
// one that is shared.
type Outcome struct {
	// ToolUseID is the id of the model's tool_use block exactly as it sent
	// it: the tool_result must carry it. (The layers see it through
	// toolmw.WithCallID, as toolmw.SafeCallID makes it.)
	ToolUseID string
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
	// result or the failure wrapped as untrusted data, never the raw error.
	Text string
}

// IsError reports whether the tool_result says the call failed: whenever
// Err is set, refusals included.
func (o Outcome) IsError() bool { return o.Err != nil }

// Turn is the outcome of one reply's tool_use blocks, in the order the
// model wrote them, and the tool_result blocks to send back.
//
// A Turn is not modified after the dispatcher returns it; it is safe to
// read from many goroutines.
type Turn struct {
	// Calls holds one outcome per tool_use block of the reply, in the
	// model's order. Empty when the reply asked for no tool: the model's
	// answer is final.
	Calls []Outcome
}

// Blocks returns the answers as tool_result blocks, one per call in the
// model's order, each with the tool_use id, ForModel's text and is_error
// set (true or false) from the outcome. The Messages API wants them first
// in the next user message; add other content after them.
func (t *Turn) Blocks() []anthropic.ContentBlockParamUnion {
	if t == nil {
		return nil
	}
	out := make([]anthropic.ContentBlockParamUnion, len(t.Calls))
	for i, c := range t.Calls {
		out[i] = anthropic.NewToolResultBlock(c.ToolUseID, c.Text, c.IsError())
	}
	return out
}

// Message returns the user message that answers the turn: its tool_result
// blocks. Send it only when the turn had calls.
func (t *Turn) Message() anthropic.MessageParam {
	return anthropic.NewUserMessage(t.Blocks()...)
}

// call is one tool call as the dispatcher makes it.
type call struct {
	id, name string
	args     json.RawMessage
	refused  error // set when the call is answered without reaching the box
}

// Call runs the tool_use blocks of a Messages API reply (Message.Content)
// through the box and returns their outcomes; other blocks are skipped.
//
// The calls run at once, at most [WithMaxParallel] at a time, each with
// the block's id in its context (toolmw.WithCallID); their outcomes come
// back in the model's order. Every call draws on the run budget ctx
// carries (put one there with budget.WithRun before the loop's first
// turn, so that it spans the run). A call of a tool the box did not offer
// (or of a toolset member) is answered as tool-not-found without calling
// the box; an empty input is read as {}.
//
// The Turn always holds an outcome for every call, so the conversation
// stays well-formed whatever happens. The error is nil, or a *[Stop]
// saying why the loop should not go on: ctx is done, every call was
// refused by the run budget, or every call found its circuit open. A
// panic in a tool is re-raised in the caller's goroutine once the turn's
// other calls have returned; a tool that calls runtime.Goexit ends its
// call as tool-failed/tool_exited.
func (t *Tools) Call(ctx context.Context, blocks []anthropic.ContentBlockUnion) (*Turn, error) {
	var cs []call
	for _, b := range blocks {
		if b.Type != "tool_use" {
			continue
		}
		c := call{id: b.ID, name: b.Name}
		switch {
		case b.ToolsetName != "" || !t.offered[b.Name]:
			c.refused = notOffered(b.Name)
		case len(bytes.TrimSpace(b.Input)) == 0:
			c.args = json.RawMessage(`{}`)
		default:
			c.args = b.Input
		}
		cs = append(cs, c)
	}
	return t.dispatch(ctx, cs)
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
	return Outcome{ToolUseID: c.id, Name: c.name, Result: res, Err: err, Text: toolmw.ForModel(res, err)}
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
