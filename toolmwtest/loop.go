package toolmwtest

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/toolmw/toolmw/turn"
)

// ModelTurn is one reply of a scripted model: tool calls, or (with no
// calls) a final answer.
type ModelTurn struct {
	Calls  []turn.Call
	Answer string
}

// Model is a scripted model: it replies with its turns in order, and
// records what it was told after each. Once its turns are used up it
// repeats the last one, so a model that keeps asking for a failing tool
// is one turn long. A Model is safe for concurrent use.
type Model struct {
	mu    sync.Mutex
	turns []ModelTurn
	next  int
	told  [][]string
}

// NewModel returns a model replying with turns (at least one).
func NewModel(turns ...ModelTurn) *Model {
	if len(turns) == 0 {
		turns = []ModelTurn{{Answer: "done"}}
	}
	return &Model{turns: turns}
}

// Reply records what the model was told of its last turn's calls, and
// returns its next turn.
func (m *Model) Reply(told []string) ModelTurn {
	m.mu.Lock()
	defer m.mu.Unlock()
	if told != nil {
		m.told = append(m.told, slices.Clone(told))
	}
	t := m.turns[min(m.next, len(m.turns)-1)]
	m.next++
	return t
}

func (m *Model) record(told []string) {
	m.mu.Lock()
	m.told = append(m.told, slices.Clone(told))
	m.mu.Unlock()
}

// Told returns, per turn with calls, what the model was told of them.
func (m *Model) Told() [][]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.told)
}

// LoopResult is how a run of [RunLoop] ended.
type LoopResult struct {
	Answer string // the model's final answer, when it gave one
	Turns  int    // the model turns taken
	Calls  int    // the tool calls made
	// Err is why the run stopped without an answer: a *turn.Stop (run
	// budget used up, every circuit open, an approval pending, the
	// context done), or ErrTurnCap.
	Err error
}

// ErrTurnCap is LoopResult.Err when the model did not answer within the
// turns allowed.
var ErrTurnCap = errors.New("toolmwtest: the model did not answer within the turns allowed")

// RunLoop runs an agent loop of the shape package turn serves: the model
// replies; its calls are answered through box (turn.Run, with o); the loop
// stops where turn.StopOf says so, or gives the answers to the model and
// asks again, for at most maxTurns turns. It is the loop toolmw's own
// tests run, for testing what a chain does to a whole run: that it gives
// up when the run budget is used up, that an open circuit ends it, what
// the model is told.
func RunLoop(ctx context.Context, box turn.Caller, m *Model, maxTurns int, o turn.Options) LoopResult {
	var res LoopResult
	var told []string
	for res.Turns < maxTurns {
		t := m.Reply(told)
		res.Turns++
		if len(t.Calls) == 0 {
			res.Answer = t.Answer
			return res
		}
		answers := turn.Run(ctx, box, t.Calls, o)
		res.Calls += len(t.Calls)
		told = make([]string, len(answers))
		for i, a := range answers {
			told[i] = a.Text
		}
		if err := turn.StopOf(ctx, answers); err != nil {
			m.record(told) // the model is told what ended its run
			res.Err = err
			return res
		}
	}
	res.Err = ErrTurnCap
	return res
}
