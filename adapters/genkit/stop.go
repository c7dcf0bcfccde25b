package genkit

import "github.com/toolmw/toolmw/turn"

// Stop is the error a call returns when the generation should not go on:
// the run is over (its context is done), the run budget has no attempt
// left for the tool, or the tool's circuit is open. It is [turn.Stop],
// shared with the other adapters: its Kind says which, and its
// documentation what to do about each.
//
// Genkit ends the generation with it: genkit.Generate returns an error
// wrapping it (ai.ErrToolFailed, or a cancellation when the context is
// done), so errors.As(err, &stop) finds it, and taxonomy.InfoOf and
// errors.Is(err, context.Canceled) see through it. A call that waits for a
// person's approval is not a Stop here: it pauses the generation the
// Genkit way, as a tool interrupt (see [Pending] and [Restarts]).
type Stop = turn.Stop
