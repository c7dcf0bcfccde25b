// Package langchaingo connects a toolmw Toolbox to LangChainGo
// (github.com/tmc/langchaingo, v0.1.14): the box's tools as the
// tools.Tool values its agents call, each call run through the box's
// layers, what the model reads always toolmw.ForModel's envelope, and the
// run ended typed when it must stop. Import it as toollangchaingo.
//
//	lc, err := toollangchaingo.New(box)
//	agent := agents.NewOpenAIFunctionsAgent(llm, lc.Tools())
//	executor := agents.NewExecutor(toollangchaingo.Agent(agent))
//	ctx = budget.WithRun(ctx, budget.WithID(runID))
//	answer, err := chains.Run(ctx, executor, question) // err: maybe a *toollangchaingo.Stop
//
// # Definitions
//
// [New] renders the box's tools once, in the schema profile of
// [WithProfile] (schema.Plain by default: langchaingo serves many model
// APIs). [Tools.Tools] returns them as tools.Tool values: the box's name,
// and the box's description followed by the input schema
// ([WithSchemaInDescription]), since langchaingo's agents show the model a
// tool's name and description only (the OpenAI functions agent declares
// every tool as a function of one string, "__arg1"). [Tools.Model] wraps
// a model so that the OpenAI functions agent declares the box's tools with
// their real schemas instead. [Tools.Definitions] returns them as
// llms.Tool definitions, for a model called directly with llms.WithTools:
// parameters as a map[string]any (what langchaingo's clients take), Strict
// under schema.OpenAIStrict.
//
// # Calls
//
// A tool's Call(ctx, input) reads input as the call's JSON arguments: the
// text an agent passes (the MRKL agent's "Action Input:", the string the
// OpenAI functions agent found in __arg1, or the whole arguments when they
// have no __arg1), trimmed, without one enclosing Markdown code fence,
// and {} when empty. Text that is not JSON goes to the box like any
// arguments, which answers it tool-args-invalid, with field errors the
// model can act on. The call runs through the box (package turn: a panic
// is re-raised in the caller, runtime.Goexit ends the call only) with the
// executor's context, so cancellation and the run budget reach the layers
// and the tool.
//
// What Call returns is what the model reads: toolmw.ForModel's envelope
// of the result, or of the failure — a refusal, a transient failure the
// retry layer gave up on, bad arguments, a denial — never a Go error and
// never a raw error's text (the executor ends the whole run on a tool's
// error, and prints it). Call returns an error only when the run must end
// ([Stop]). A langchaingo tool result is text, so a result's parts go as
// ForModel renders them: text and JSON as they are, images, audio and
// files as descriptors.
//
// # Call ids
//
// The executor does not pass a tool the model's call id
// (schema.AgentAction.ToolID reaches the callbacks, not the tool; the MRKL
// agents have none), and a model asked again makes new ids anyway. So the
// id the layers see (toolmw.CallFrom, and through it the idempotency key,
// dedupe's records and the approval id) is derived from the call:
// [CallIDPrefix] and 32 hex digits of a keyed hash of the tool's name, the
// arguments as a JSON value (members in any order, any spacing; numbers
// as written; other text as its bytes) and how many calls of the same tool
// with the same arguments the run made before in this pass over its input.
// The key is made of the run's id (budget.WithID; a run without one has a
// random nonce of its own) and, with [WithCallIDKey], a secret. So:
//
//   - two identical calls in one pass are two calls, each with its own id
//     (its own approval, its own dedupe record);
//   - a pass begins at the agent's first Plan (through [Agent]) and after
//     a call that ends the run with a Stop; running the same input again,
//     in the same run or in a new run with the same id, gives the calls the
//     model makes again, in the same order, the ids they had: that is what
//     lets an approval be found, and dedupe answer calls already made;
//   - a call the model makes with other arguments on the second pass is
//     another call (another id): it asks again where it needs approval;
//   - without a run in the context (budget.WithRun) each call has a random
//     id, so no two calls share a record or an approval (and the approval
//     layer needs a run anyway);
//   - a run's counts live as long as its *budget.Run: one entry per
//     distinct call, dropped when the Run is garbage collected.
//
// Use one run (one budget.WithRun) per input — a new id for a new
// question — and do not run two executors on one run at once.
// [Tools.CallTools], for a loop of your own, has the model's ids and uses
// them.
//
// # When the run ends: Stop
//
// A call answered approval-pending (the approval layer), cancelled (the
// context is done), circuit-open or run-limit-exceeded ends the run: Call
// returns the [*Stop] (turn.StopOf of its one answer), the executor
// returns it as it is, and errors.As(err, &stop) works on what
// executor.Call, chains.Call and chains.Run return. The model is not asked
// again. Every other failure is an answer for the model, and the run goes
// on.
//
// LangChainGo has no pause and resume: approval-pending ends the run, and
// the approval is a second pass. A reviewer decides the request
// (approval.Desk, with stop.Approvals); the app runs the same input again
// with the same run (the same context, or a new budget.WithRun with the
// same budget.WithID, in any process sharing the approval store); the
// model makes the same calls again, and the approved call runs, once.
// Everything the first pass did is done again: with dedupe in the stack
// and the same run (the same context), calls already made are answered
// from its records; in a new run, dedupe's records (kept in memory, with
// the Run) are gone, so those calls run again, and an approval the first
// pass already used is refused as approval_replayed (the tool does not
// run twice). A model that answers the second pass differently makes
// other calls, which ask afresh.
//
// # Unknown tools
//
// The executor answers a call of a tool its agent does not have with its
// own text, "<name> is not a valid tool, try another one", and goes on; it
// has no hook for it. [Agent] wraps an agent so that such a call is
// answered as toolmw answers it, typed (tool-not-found/tool_not_found in the
// envelope), and the model is shown its own call followed by that answer.
//
// # Tools of your own
//
// [Wrap] runs a langchaingo tool you already have through a toolmw stack
// with the same semantics: its input string is the arguments
// {"input": "…"} for the layers (an approval's summary shows it), the tool
// gets it back exactly, and its error is an answer for the model, its text
// withheld unless it is a taxonomy error.
//
// # A loop of your own
//
// [Tools.CallTools] runs a model reply's tool calls (llms.ToolCall) at
// once, at most [WithMaxParallel] at a time, with the model's call ids,
// and returns a [Turn] whose Messages are the tool messages to append;
// its Stop follows turn.StopOf over the whole turn.
//
// # Callbacks
//
// [WithCallbacksHandler] reports each call to a callbacks.Handler as
// langchaingo's own tools do (HandleToolStart with the input, HandleToolEnd
// with the envelope, HandleToolError with a Stop). Nothing a tool's error
// holds reaches a handler: the envelope carries only what ForModel shows,
// and a Stop's text is a fixed sentence.
//
// Everything here is safe for concurrent use.
package langchaingo
