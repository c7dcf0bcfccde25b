package langchaingo

import "github.com/toolmw/toolmw/turn"

// Stop is the error a tool of this package returns when the agent's run
// must end rather than show the model an answer: the call waits for a
// person's approval, the run is over (its context is done), the tool's
// circuit is open, or the tool has used up its attempts in the run budget.
// It is [turn.Stop], shared with the other adapters: its Kind says which,
// and its documentation what to do about each. The executor returns it as
// it is (agents.Executor.Call, chains.Call and chains.Run do not wrap a
// tool's error), so errors.As(err, &stop) works on what they return;
// errors.Is(err, taxonomy.ErrApprovalPending) and friends,
// errors.Is(err, context.Canceled) and taxonomy.InfoOf see through it.
type Stop = turn.Stop
