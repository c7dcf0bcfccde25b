package toolmwtest

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
)

// OK is a tool that succeeds with the text "ok".
func OK(context.Context, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Text("ok"), nil
}

// Returning returns a tool that returns res and err, whatever it is called
// with.
func Returning(res toolmw.Result, err error) toolmw.Tool {
	return func(context.Context, json.RawMessage) (toolmw.Result, error) { return res, err }
}

// Step is one answer of a [Script].
type Step struct {
	Result toolmw.Result
	Err    error
	// Hang makes the call wait until its context ends, and return the
	// context's error: a tool that never answers.
	Hang bool
	// Delay makes the call wait this long (by the script's clock, or
	// until its context ends) before it answers.
	Delay time.Duration
}

// Fail is a step that fails with err.
func Fail(err error) Step { return Step{Err: err} }

// Succeed is a step that returns res.
func Succeed(res toolmw.Result) Step { return Step{Result: res} }

// Hang is a step that waits until the call's context ends.
func Hang() Step { return Step{Hang: true} }

// Script is a scripted tool: its calls answer with its steps in order, and
// the last step again once they are used up. It records the arguments of
// every call. A Script is safe for concurrent use; calls take the steps in
// the order they arrive.
type Script struct {
	clock clock.Clock

	mu    sync.Mutex
	steps []Step
	args  []json.RawMessage
}

// NewScript returns a tool answering with steps (none: "ok").
func NewScript(steps ...Step) *Script {
	if len(steps) == 0 {
		steps = []Step{Succeed(toolmw.Text("ok"))}
	}
	return &Script{clock: clock.System, steps: steps}
}

// FailTimes returns a Script that fails n times with err, then returns
// res: the transient failure a retry layer should absorb.
func FailTimes(n int, err error, res toolmw.Result) *Script {
	steps := make([]Step, 0, n+1)
	for range n {
		steps = append(steps, Fail(err))
	}
	return NewScript(append(steps, Succeed(res))...)
}

// WithClock makes the script's delays wait on clk (a *clock.Fake drives
// them from a test); nil means the system clock. It returns s.
func (s *Script) WithClock(clk clock.Clock) *Script {
	s.clock = clock.Or(clk)
	return s
}

// Tool returns the script as a tool.
func (s *Script) Tool() toolmw.Tool { return s.call }

func (s *Script) call(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	s.mu.Lock()
	i := min(len(s.args), len(s.steps)-1)
	step := s.steps[i]
	s.args = append(s.args, slices.Clone(args))
	s.mu.Unlock()
	if step.Hang {
		<-ctx.Done()
		return toolmw.Result{}, ctx.Err()
	}
	if step.Delay > 0 {
		t := s.clock.NewTimer(step.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return toolmw.Result{}, ctx.Err()
		case <-t.C():
		}
	}
	return step.Result, step.Err
}

// Calls returns how many times the tool was called.
func (s *Script) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.args)
}

// Args returns the arguments of every call, in order.
func (s *Script) Args() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.args)
}
