package openai

import "github.com/toolmw/toolmw/internal/turn"

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
// through a Stop. The type is shared with the other model-SDK adapters.
//
// A Stop is not modified after it is returned; it is safe to read from
// many goroutines.
type Stop = turn.Stop
