package openai

import "github.com/toolmw/toolmw/turn"

// Stop is the error a dispatch returns when the agent loop should stop
// asking the model: nothing the model wants can run (every call found its
// circuit open, or its run budget used up), a call waits for a person's
// approval, or the run is over (its context is done). It is [turn.Stop],
// shared with the other model-SDK adapters and with loops of your own: its
// Kind says which, and its documentation what to do about each.
//
// The turn's answers are complete even then: append them before stopping
// if the conversation is kept. errors.Is(err, taxonomy.ErrCircuitOpen) and
// friends, errors.Is(err, context.Canceled) and taxonomy.InfoOf all see
// through a Stop.
type Stop = turn.Stop
