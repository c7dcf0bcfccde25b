package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/turn"
)

// errNoCalls is ResumeBeta's answer to a history that does not end with
// tool calls to answer.
var errNoCalls = errors.New("adapters/anthropic: ResumeBeta: the history's last assistant message has no tool_use block")

// ResumeBeta answers the tool calls a stopped run left unanswered, so that
// a new runner can go on with the conversation: the SDK's runner cannot
// be told to run the tool calls of a reply it did not receive itself.
//
// history is the stopped runner's conversation (runner.Messages(), saved
// across a restart if need be). ResumeBeta cuts it after its last
// assistant message, dropping the tool_result message the runner may have
// added, runs that message's tool_use blocks at once through tools (the
// tools given to the runner), each with its block's id as its call id,
// and returns the history with the user message of their tool_result
// blocks appended, as the runner makes them: the Messages of the next
// runner's params. A call of a tool not among tools is answered
// tool-not-found. Give it a context with the stopped run's budget
// (budget.WithRun with the same budget.WithID; not the context
// WithBetaRunner returned, which End cancelled), so that an approved call
// finds its approval and runs once. The calls' media share the bounds of
// one reply.
//
// Every call of the message runs again, not only the one that stopped the
// run: a call that ran before the stop runs twice unless the stack has a
// dedupe layer (which answers it from its record) or the tool is
// idempotent. When a call says the run should stop again (its approval
// still pending, say), ResumeBeta returns nil and that [*Stop]; resume
// later with the same history.
func ResumeBeta(ctx context.Context, tools []anthropic.BetaTool, history []anthropic.BetaMessageParam) ([]anthropic.BetaMessageParam, error) {
	last := -1
	for i, m := range history {
		if m.OfAssistant != nil {
			last = i
		}
	}
	if last < 0 {
		return nil, errNoCalls
	}
	var uses []*anthropic.BetaToolUseBlockParam
	for _, b := range history[last].OfAssistant.Content {
		switch {
		case b.OfFallback != nil:
			uses = nil // the calls before it belong to the attempt that was refused
		case b.OfToolUse != nil:
			uses = append(uses, b.OfToolUse)
		}
	}
	if len(uses) == 0 {
		return nil, errNoCalls
	}
	byName := make(map[string]anthropic.BetaTool, len(tools))
	for _, t := range tools {
		if t != nil {
			byName[t.Name()] = t
		}
	}

	ctx, run := WithBetaRunner(ctx, nil)
	defer run.cancel(context.Canceled)
	results := make([]anthropic.BetaContentBlockParamUnion, len(uses))
	var wg sync.WaitGroup
	for i, u := range uses {
		wg.Go(func() {
			r := answer(ctx, byName[u.Name], u)
			results[i] = anthropic.BetaContentBlockParamUnion{OfToolResult: &r}
		})
	}
	wg.Wait()
	if s := run.Stop(); s != nil {
		return nil, s
	}
	out := append(history[:last+1:last+1], anthropic.NewBetaUserMessage(results...))
	return out, nil
}

// answer runs one call of ResumeBeta and returns its tool_result as the
// runner makes it: the content, or "Error: " and the failure's envelope
// with is_error set.
func answer(ctx context.Context, t anthropic.BetaTool, u *anthropic.BetaToolUseBlockParam) anthropic.BetaToolResultBlockParam {
	if t == nil || u.ToolsetName.Valid() {
		return anthropic.NewBetaToolResultTextBlockParam(u.ID, "Error: "+toolmw.ForModel(toolmw.Result{}, turn.NotOffered(u.Name)), true)
	}
	input, err := json.Marshal(u.Input)
	if err != nil {
		input = json.RawMessage(`{}`)
	}
	content, err := t.Execute(context.WithValue(ctx, betaCallKey{}, u.ID), input)
	if err != nil {
		var f *failure
		if !errors.As(err, &f) {
			// A tool not made here: its error is not shown.
			f = &failure{text: toolmw.ForModel(toolmw.Result{}, err)}
		}
		return anthropic.NewBetaToolResultTextBlockParam(u.ID, "Error: "+f.text, true)
	}
	return anthropic.BetaToolResultBlockParam{ToolUseID: u.ID, Content: content}
}
