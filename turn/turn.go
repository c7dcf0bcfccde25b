// Package turn runs the tool calls of one model turn through a Toolbox, for
// an agent loop of your own: the engine the model-SDK adapters
// (adapters/openai, adapters/anthropic) share. A loop turns its model's
// tool calls into [Call]s, runs them with [Run] — concurrently, at most
// [Options.MaxParallel] at a time, each answer in the model's order — and
// turns the [Answer]s into its model's messages; [StopOf] says when the
// run should stop asking the model ([Stop]). How calls run, how a tool's
// panic or runtime.Goexit is contained, and when the run should stop are
// decided here, once. For an API that takes images and documents in its
// tool results, [Media] says which parts of a result go as media and which
// as text, within the API's bounds ([MediaLimits]).
package turn

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/taxonomy"
)

// Call is one tool call the model asked for. It is a plain value.
type Call struct {
	ID, Name string          // the model's call id, exactly as it sent it, and the tool's name
	Args     json.RawMessage // the arguments
	Refused  error           // set when the call is answered without reaching the box (see NotOffered)
}

// Answer is how a call ended, and what the model is shown of it. It is a
// plain value.
type Answer struct {
	Result toolmw.Result
	Err    error
	Text   string // toolmw.ForModel(Result, Err)
}

// Caller is what runs a call: a *toolmw.Toolbox. Its Call must be safe for
// concurrent use.
type Caller interface {
	Call(ctx context.Context, name string, args json.RawMessage) (toolmw.Result, error)
}

// NotOffered is the answer to a call of a tool the model was not shown,
// worded as the Toolbox words it: the name is the model's, so it is shown
// only when it is a valid tool name.
func NotOffered(name string) error {
	if !toolmw.ValidName(name) {
		return taxonomy.New(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, "no tool has the requested name")
	}
	return taxonomy.New(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, "no tool named "+name).WithTool(name)
}

// errExited answers a call whose tool ended its goroutine.
var errExited = taxonomy.Failure(taxonomy.CodeToolExited, "the tool ended its goroutine (runtime.Goexit)")

// DefaultMaxParallel is how many calls of one turn [Run] makes at a time
// when [Options.MaxParallel] is 0.
const DefaultMaxParallel = 8

// Options configures [Run]. The zero value is ready to use.
type Options struct {
	// MaxParallel bounds the calls made at a time: 0 means
	// [DefaultMaxParallel], 1 makes them one after another.
	MaxParallel int
	// CountCalls makes each call take an attempt of its tool from the
	// context's run budget (budget.RunFrom) before it runs, for a box
	// without a retry layer (which takes attempts itself); a call past the
	// budget's cap is answered run-limit-exceeded/run_attempts_exhausted
	// without running.
	CountCalls bool
}

// Run answers cs through box, each answer in its own slot, in the order of
// cs, on at most o.MaxParallel goroutines. The caller only waits: a tool
// that panics has its panic re-raised here once the other calls are done,
// and one that calls runtime.Goexit ends its call as tool_exited while a
// fresh goroutine takes the calls left. A call with Refused set is
// answered with it without reaching box; once ctx is done, the calls not
// started are answered with its error. Each call's context carries its
// call id (toolmw.WithCallID). Run is safe for concurrent use.
func Run(ctx context.Context, box Caller, cs []Call, o Options) []Answer {
	maxParallel := o.MaxParallel
	if maxParallel <= 0 {
		maxParallel = DefaultMaxParallel
	}
	countCalls := o.CountCalls
	answers := make([]Answer, len(cs))
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
			answers[i] = answer(toolmw.Result{}, errExited.WithTool(cs[i].Name))
			wg.Go(work)
		}()
		for {
			if i = int(next.Add(1) - 1); i >= len(cs) {
				done = true
				return
			}
			answers[i] = run(ctx, box, cs[i], countCalls)
		}
	}
	for range min(len(cs), maxParallel) {
		wg.Go(work)
	}
	wg.Wait()
	if p := panicked.Load(); p != nil {
		panic(*p)
	}
	return answers
}

// run makes one call.
func run(ctx context.Context, box Caller, c Call, countCalls bool) Answer {
	switch {
	case c.Refused != nil:
		return answer(toolmw.Result{}, c.Refused)
	case ctx.Err() != nil:
		return answer(toolmw.Result{}, ctx.Err())
	}
	ctx = toolmw.WithCallID(ctx, c.ID)
	if countCalls {
		if run, ok := budget.RunFrom(ctx); ok {
			// A take decided without the run's store is reported to the
			// store's OnError; the call record, made inside box.Call,
			// does not exist yet to be marked.
			if ok, _ := run.TakeContext(ctx, c.Name); !ok {
				return answer(toolmw.Result{}, taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunAttemptsExhausted,
					"the run's attempt cap for this tool is used up").WithTool(c.Name))
			}
		}
	}
	return answer(box.Call(ctx, c.Name, c.Args))
}

func answer(res toolmw.Result, err error) Answer {
	return Answer{Result: res, Err: err, Text: toolmw.ForModel(res, err)}
}

// Stop is the error a turn returns when the agent loop should stop asking
// the model: nothing the model wants can run, or the run is over. Its Kind
// says which, as one of the taxonomy's kinds:
//
//   - taxonomy.KindCancelled: the context is done (cancelled, or past its
//     deadline: errors.Is(err, context.DeadlineExceeded) tells which).
//     Calls that had not started were answered as cancelled.
//   - taxonomy.KindCircuitOpen: every call of the turn found its tool's
//     circuit open. RetryAfter is the shortest wait before one of those
//     circuits lets a call through; a loop may wait it out and ask again.
//   - taxonomy.KindRunLimitExceeded: every call of the turn was refused
//     by the run budget (or by open circuits, at least one call by the
//     budget): the tools the model wants have no attempt left in this run.
//   - taxonomy.KindApprovalPending: at least one call waits for a person's
//     decision (the approval layer); Approvals lists their approval ids.
//     Pause: have the reviewer decide (approval.Desk), then run the same
//     model message again, with the same run (and run id) and call ids,
//     before answering the model. The approved call then runs once; a call
//     that ran already is answered from dedupe's record when dedupe is in
//     the stack, and run again otherwise.
//
// The turn's answers are complete even then: append them before stopping
// if the conversation is kept. errors.Is(err, taxonomy.ErrCircuitOpen) and
// friends, errors.Is(err, context.Canceled) and taxonomy.InfoOf all see
// through a Stop.
//
// A Stop is not modified after it is returned; it is safe to read from
// many goroutines.
type Stop struct {
	// Kind is why the loop should stop: taxonomy.KindCancelled,
	// taxonomy.KindCircuitOpen, taxonomy.KindRunLimitExceeded or
	// taxonomy.KindApprovalPending.
	Kind taxonomy.Kind
	// RetryAfter is, for KindCircuitOpen, the shortest wait before one of
	// the circuits half-opens (0 when none said); otherwise 0.
	RetryAfter time.Duration
	// Approvals are, for KindApprovalPending, the approval ids of the calls
	// that wait for a decision, in the turn's order; otherwise nil.
	Approvals []string

	cause error
}

// Error says why the run stopped.
func (s *Stop) Error() string {
	switch s.Kind {
	case taxonomy.KindCancelled:
		return "turn: run stopped: " + s.cause.Error()
	case taxonomy.KindCircuitOpen:
		return "turn: run stopped: every tool the model asked for has an open circuit"
	case taxonomy.KindApprovalPending:
		return "turn: run paused: a call waits for a person's approval"
	}
	return "turn: run stopped: the tools the model asked for have used up their attempts in this run"
}

// Unwrap returns the context's error for KindCancelled, and a
// *taxonomy.ToolError of the Stop's kind otherwise.
func (s *Stop) Unwrap() error { return s.cause }

// StopOf returns the [*Stop] of a turn whose calls ended in answers, or
// nil when the loop should give the answers to the model and go on.
func StopOf(ctx context.Context, answers []Answer) error {
	if err := ctx.Err(); err != nil {
		return &Stop{Kind: taxonomy.KindCancelled, cause: err}
	}
	if len(answers) == 0 {
		return nil
	}
	var pending []string
	for _, a := range answers {
		if info := taxonomy.InfoOf(a.Err); info.Kind == taxonomy.KindApprovalPending && info.Approval != nil {
			pending = append(pending, info.Approval.ID)
		}
	}
	if pending != nil {
		return &Stop{Kind: taxonomy.KindApprovalPending, Approvals: pending,
			cause: taxonomy.New(taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending,
				"a call waits for a person's approval")}
	}
	circuits, wait := 0, time.Duration(math.MaxInt64)
	for _, a := range answers {
		info := taxonomy.InfoOf(a.Err)
		switch info.Kind {
		case taxonomy.KindCircuitOpen:
			circuits++
			wait = min(wait, time.Duration(info.RetryAfter))
		case taxonomy.KindRunLimitExceeded:
		default:
			return nil // something could run, or the model can act on the answer
		}
	}
	if circuits == len(answers) {
		return &Stop{Kind: taxonomy.KindCircuitOpen, RetryAfter: wait,
			cause: taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen,
				"every tool the model asked for has an open circuit").WithRetryAfter(wait)}
	}
	return &Stop{Kind: taxonomy.KindRunLimitExceeded,
		cause: taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunAttemptsExhausted,
			"the tools the model asked for have used up their attempts in this run")}
}
