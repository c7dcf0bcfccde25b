package toolmwtest

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/taxonomy"
)

// Recorder records what a chain did with its calls: each call as the
// caller saw it (put [Recorder.Calls] outermost), each attempt as the tool
// saw it (put [Recorder.Attempts] innermost, next to the tool), and the
// run events the chain emitted (a Recorder is an events.Sink). A test then
// asserts on the records: how many attempts, how long between them, the
// outcomes, and what the model was told. A Recorder is safe for
// concurrent use.
//
//	rec := toolmwtest.NewRecorder(fake)
//	tool := toolmw.MustWrap(spec, script.Tool(), rec.Calls(), stack.Middleware(), rec.Attempts())
type Recorder struct {
	clock clock.Clock

	mu       sync.Mutex
	calls    []CallRecord
	attempts []AttemptRecord
	events   []events.Event
}

// CallRecord is one call as the caller saw it.
type CallRecord struct {
	Tool     string
	Run      string // the run's id (budget.Run.ID), or ""
	Start    time.Time
	Elapsed  time.Duration
	Outcome  taxonomy.Outcome // "" for a success
	Kind     taxonomy.Kind    // "" for a success
	Code     string
	Attempts int    // as the call record counts them (toolmw.Call.Attempt)
	Told     string // toolmw.ForModel(result, err): what the model is shown
	Err      error
}

// AttemptRecord is one attempt as the tool saw it.
type AttemptRecord struct {
	Tool    string
	Run     string // the run's id (budget.Run.ID), or ""
	Attempt int    // 1 for the first
	Start   time.Time
	Elapsed time.Duration
	Args    json.RawMessage
	Kind    taxonomy.Kind // "" for a success
	Code    string
	Err     error
}

// NewRecorder returns a Recorder timing with clk (nil: the system clock).
func NewRecorder(clk clock.Clock) *Recorder { return &Recorder{clock: clock.Or(clk)} }

// Calls returns the middleware that records calls; put it outermost.
func (r *Recorder) Calls() toolmw.Middleware {
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			start := r.clock.Now()
			res, err := next(ctx, args)
			c, _ := toolmw.CallFrom(ctx)
			rec := CallRecord{Tool: c.Tool, Run: runID(ctx), Start: start, Elapsed: r.clock.Now().Sub(start), Attempts: c.Attempt,
				Told: toolmw.ForModel(res, err), Err: err}
			if err != nil {
				info := taxonomy.InfoOf(err)
				rec.Outcome, rec.Kind, rec.Code = taxonomy.OutcomeOf(err), info.Kind, info.Code
			}
			r.mu.Lock()
			r.calls = append(r.calls, rec)
			r.mu.Unlock()
			return res, err
		}
	}
}

// Attempts returns the middleware that records attempts; put it
// innermost.
func (r *Recorder) Attempts() toolmw.Middleware {
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			start := r.clock.Now()
			res, err := next(ctx, args)
			c, _ := toolmw.CallFrom(ctx)
			rec := AttemptRecord{Tool: c.Tool, Run: runID(ctx), Attempt: max(c.Attempt, 1), Start: start, Elapsed: r.clock.Now().Sub(start),
				Args: slices.Clone(args), Err: err}
			if err != nil {
				info := taxonomy.InfoOf(err)
				rec.Kind, rec.Code = info.Kind, info.Code
			}
			r.mu.Lock()
			r.attempts = append(r.attempts, rec)
			r.mu.Unlock()
			return res, err
		}
	}
}

// runID returns the id of ctx's run, or "".
func runID(ctx context.Context) string {
	if r, ok := budget.RunFrom(ctx); ok {
		return r.ID()
	}
	return ""
}

// Emit records ev. It implements events.Sink.
func (r *Recorder) Emit(ev events.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

// CallRecords returns the calls recorded, in the order they ended.
func (r *Recorder) CallRecords() []CallRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// AttemptRecords returns the attempts recorded, in the order they ended.
func (r *Recorder) AttemptRecords() []AttemptRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.attempts)
}

// Events returns the events recorded, in the order they were delivered.
func (r *Recorder) Events() []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Waits returns the time between the end of each attempt and the start
// of the next, for the attempts of tool: the backoff a retry layer waited.
func (r *Recorder) Waits(tool string) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	var prev *AttemptRecord
	for i := range r.attempts {
		a := &r.attempts[i]
		if a.Tool != tool {
			continue
		}
		if prev != nil && a.Attempt > prev.Attempt {
			out = append(out, a.Start.Sub(prev.Start.Add(prev.Elapsed)))
		}
		prev = a
	}
	return out
}

// Reset forgets everything recorded.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.calls, r.attempts, r.events = nil, nil, nil
	r.mu.Unlock()
}
