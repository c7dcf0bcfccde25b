package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolmw/toolmw/turn"
)

// BetaRunner is what [WithBetaRunner] reads of the SDK's tool runner: the
// reply whose tool calls it is running. *anthropic.BetaToolRunner and
// *anthropic.BetaToolRunnerStreaming are BetaRunners.
type BetaRunner interface {
	LastMessage() *anthropic.BetaMessage
}

// BetaRun is one run of the SDK's tool runner over tools made here
// ([Tools.BetaTools], [WrapBetaTool]), made by [WithBetaRunner]: it gives
// each call the id of the model's tool_use block, and it ends the runner's
// loop when a call says the run should stop.
//
// A BetaRun is safe for concurrent use: the runner calls a turn's tools at
// once.
type BetaRun struct {
	runner BetaRunner
	parent context.Context
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	stop  *Stop
	msg   *anthropic.BetaMessage // the reply whose calls uses lists
	uses  []betaUse
	media *turn.Media // the media of msg's answers
}

// betaUse is one tool_use block of the runner's last reply.
type betaUse struct {
	id, name string
	input    []byte // the input as the runner gives it to Execute
	member   bool   // a toolset member's call
	claimed  bool   // a call of the tool took this id
}

type betaRunKey struct{}

// WithBetaRunner returns ctx for runner's run (pass it to
// RunToCompletion, NextMessage, All or their streaming forms) and the
// [BetaRun] that ends it.
//
// The SDK's runner gives a tool only its input, not the id of the model's
// tool_use block, and ends its loop on nothing a tool returns. Through the
// returned context, the tools made here do both: each call finds its
// tool_use block in runner.LastMessage() (the block of its tool with the
// same input that no other call of the reply took) and runs with the
// block's id as its call id (toolmw.WithCallID), the id the approval and
// dedupe layers key on; and a call whose answer says the run should stop
// (turn.StopOf of it: approval-pending, run-limit-exceeded, circuit-open,
// cancelled) cancels the returned context, which ends the runner's loop
// before it asks the model again. [BetaRun.End] then returns the
// [*Stop].
//
// Calls of the same turn already running finish first: they keep ctx's own
// cancellation and deadline, not the stop's. A runner that is not the one
// the context is passed to, or nil, gives no ids.
func WithBetaRunner(ctx context.Context, runner BetaRunner) (context.Context, *BetaRun) {
	r := &BetaRun{runner: runner, parent: ctx}
	c, cancel := context.WithCancelCause(ctx)
	r.cancel = cancel
	return context.WithValue(c, betaRunKey{}, r), r
}

func betaRunFrom(ctx context.Context) *BetaRun {
	r, _ := ctx.Value(betaRunKey{}).(*BetaRun)
	return r
}

// Stop returns why a call stopped the run, or nil when none did.
func (r *BetaRun) Stop() *Stop {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stop
}

// End ends the run, once the runner has returned, and says how it ended:
// the [*Stop] a call stopped it with (errors.As(err, &stop) reads its Kind
// and, for approval-pending, its Approvals); a *Stop of
// taxonomy.KindCancelled when err is the runner's error and the context
// given to [WithBetaRunner] is done; err otherwise (nil when the runner
// finished). The runner itself returns only the context's cancellation
// for a stop, so read the reason from End. The context of the run is
// cancelled: do not use it again.
func (r *BetaRun) End(err error) error {
	r.cancel(context.Canceled)
	if s := r.Stop(); s != nil {
		return s
	}
	if err != nil && r.parent.Err() != nil {
		return turn.StopOf(r.parent, nil)
	}
	return err
}

// stopWith records s, unless a stop was recorded first, and ends the
// runner's loop.
func (r *BetaRun) stopWith(s *Stop) {
	r.mu.Lock()
	if r.stop == nil {
		r.stop = s
	}
	r.mu.Unlock()
	r.cancel(s)
}

// claim returns the id of the tool_use block of the runner's last reply
// that a call of name with input answers: the first such block no other
// call took. ok is false when there is none (no runner, another reply).
func (r *BetaRun) claim(name string, input []byte) (id string, member, ok bool) {
	if r.runner == nil {
		return "", false, false
	}
	msg := r.runner.LastMessage()
	if msg == nil {
		return "", false, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.load(msg)
	for i := range r.uses {
		u := &r.uses[i]
		if !u.claimed && u.name == name && bytes.Equal(u.input, input) {
			u.claimed = true
			return u.id, u.member, true
		}
	}
	return "", false, false
}

// load reads msg's tool_use blocks, as the runner does (those after the
// last fallback block), when msg is a new reply. r.mu is held.
func (r *BetaRun) load(msg *anthropic.BetaMessage) {
	if msg == r.msg {
		return
	}
	r.msg, r.uses, r.media = msg, nil, turn.NewMedia(limits)
	seam := -1
	for i, b := range msg.Content {
		if b.Type == "fallback" {
			seam = i
		}
	}
	for _, b := range msg.Content[seam+1:] {
		if b.Type != "tool_use" {
			continue
		}
		use := b.AsToolUse()
		in, err := json.Marshal(use.Input)
		if err != nil {
			continue // the runner answers it without calling a tool
		}
		r.uses = append(r.uses, betaUse{id: use.ID, name: use.Name, input: in, member: use.ToolsetName != ""})
	}
}

// content returns a successful answer as tool_result content: its media
// counted against the reply's bounds when the run knows the reply.
func (r *BetaRun) content(a turn.Answer) []anthropic.BetaToolResultBlockParamContentUnion {
	if len(a.Result.Parts()) == 0 {
		return betaText(a.Text)
	}
	if r == nil {
		return betaContent(a, turn.NewMedia(limits))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.media == nil { // no reply read (ResumeBeta's calls): one bound for all
		r.media = turn.NewMedia(limits)
	}
	return betaContent(a, r.media)
}

// detach returns a context for one call: ctx's values, the run's own
// cancellation and deadline, but not a stop's, so that a stop lets the
// turn's running calls finish. done releases it.
func (r *BetaRun) detach(ctx context.Context) (c context.Context, done func()) {
	if r == nil {
		return ctx, func() {}
	}
	c = context.WithoutCancel(ctx)
	var cancel context.CancelFunc
	if d, ok := r.parent.Deadline(); ok {
		c, cancel = context.WithDeadline(c, d)
	} else {
		c, cancel = context.WithCancel(c)
	}
	stop := context.AfterFunc(r.parent, cancel)
	return c, func() {
		stop()
		cancel()
	}
}
