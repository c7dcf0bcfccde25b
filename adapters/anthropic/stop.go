package anthropic

import (
	"context"
	"math"
	"time"

	"github.com/toolmw/toolmw/taxonomy"
)

// Stop is the error a dispatch returns when the agent loop should stop
// asking the model: nothing the model wants can run, or the run is over.
// Its Kind says which, as one of the taxonomy's kinds:
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
	// taxonomy.KindCircuitOpen or taxonomy.KindRunLimitExceeded.
	Kind taxonomy.Kind
	// RetryAfter is, for KindCircuitOpen, the shortest wait before one of
	// the circuits half-opens (0 when none said); otherwise 0.
	RetryAfter time.Duration

	cause error
}

// Error says why the run stopped.
func (s *Stop) Error() string {
	switch s.Kind {
	case taxonomy.KindCancelled:
		return "adapters/anthropic: run stopped: " + s.cause.Error()
	case taxonomy.KindCircuitOpen:
		return "adapters/anthropic: run stopped: every tool the model asked for has an open circuit"
	}
	return "adapters/anthropic: run stopped: the tools the model asked for have used up their attempts in this run"
}

// Unwrap returns the context's error for KindCancelled, and a
// *taxonomy.ToolError of the Stop's kind otherwise.
func (s *Stop) Unwrap() error { return s.cause }

// stopOf returns the Stop of a turn whose calls ended in outs, or nil.
func stopOf(ctx context.Context, outs []Outcome) error {
	if err := ctx.Err(); err != nil {
		return &Stop{Kind: taxonomy.KindCancelled, cause: err}
	}
	if len(outs) == 0 {
		return nil
	}
	circuits, wait := 0, time.Duration(math.MaxInt64)
	for _, o := range outs {
		info := taxonomy.InfoOf(o.Err)
		switch info.Kind {
		case taxonomy.KindCircuitOpen:
			circuits++
			wait = min(wait, time.Duration(info.RetryAfter))
		case taxonomy.KindRunLimitExceeded:
		default:
			return nil // something could run, or the model can act on the answer
		}
	}
	if circuits == len(outs) {
		return &Stop{Kind: taxonomy.KindCircuitOpen, RetryAfter: wait,
			cause: taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen,
				"every tool the model asked for has an open circuit").WithRetryAfter(wait)}
	}
	return &Stop{Kind: taxonomy.KindRunLimitExceeded,
		cause: taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunAttemptsExhausted,
			"the tools the model asked for have used up their attempts in this run")}
}
