// Package runlimit provides the per-run call limit layer: a tool may be
// called once per agent run, or at most n times per run.
//
//	ctx = budget.WithRun(ctx) // the run the calls are counted in
//	mw := runlimit.New(runlimit.Once("cancel_booking"), runlimit.Max("search", 5))
//
// A model that loops, or re-plans after a failure, calls a side-effecting
// tool again; this layer bounds how often that can happen in one run. A
// call past the limit ends at once as run-limit-exceeded/run_call_limit,
// not retryable and final: the tool does not run, and asking again in the
// same run cannot change the answer.
//
// # Calls, not attempts
//
// A call is one request of the model, whatever its attempts: a call the
// retry layer makes three times is one call. The layer counts a call when it
// admits it, before the tool runs, and gives the slot back only when the
// call is known to have had no effect, as taxonomy.NoEffect decides (one
// rule, taxonomy.EffectOf, for every layer that asks "did this call
// possibly run?"):
//
//   - the tool never ran: circuit-open, rate-limited (a rate limit or a
//     full bulkhead), retry-budget-exhausted, run-limit-exceeded,
//     tool-not-permitted, tool-args-invalid, tool-not-found,
//     approval-pending, approval-denied, budget-exceeded, a guardrail that
//     blocked the arguments (guardrail_args), and a call the timeout layer
//     refused to start (too_many_abandoned);
//   - nothing landed: a typed error that is retryable (its author vouches
//     that the same call may succeed; a retry layer that gave up keeps that
//     answer in Retryable) and whose outcome is not unknown.
//
// Every other outcome keeps the slot: a success, a permanent failure, a
// refusal (an answer), a guardrail that blocked the result (the tool ran),
// an untyped error, a panic — and every call whose outcome is unknown,
// however retryable its error says it is: a timeout of any kind (the
// per-attempt timeout, the caller's deadline, a dependency's), an
// execution the timeout layer abandoned and that may still land, a
// connection reset or an upstream error after the request may have gone
// out, a cancellation. A payment tool that honours idempotency keys and
// times out may have paid: the model's next call carries a new key, so
// giving the slot back would let a run pay twice under two keys. An error
// the retry layer makes after its attempts (its budget or the run's
// attempts used up, a wait past the deadline) is as its cause, the last
// attempt's: a retry that stopped after a timeout keeps the slot.
//
// The last error speaks for the last attempt only. A retry layer inside
// this one repeats an idempotent call (the tool is Idempotent or honours
// keys) after a timeout or a reset, so a call of an idempotent tool that
// took more than one attempt keeps its slot whatever its last error says
// (toolmw.Call.Attempt tells the layer how many attempts the call made).
// A call that is not idempotent is repeated only after an error its
// maker made retryable for it, vouching that nothing landed.
//
// A call that finds its tool's slots all taken is refused at once, even
// when a call holding one is still in flight and may give it back: under
// 100 concurrent calls of a tool declared Once, exactly one runs.
//
// # One execution at a time
//
// An admitted call is marked single-execution in its context, and the
// hedge layer does not fan such a call out: with hedge inside this layer,
// a limited call is one execution, not an attempt and its hedge running
// side by side; with hedge outside, each execution it starts is a call of
// its own here and takes its own slot. So the limit holds in either order.
//
// # Per run
//
// The run is the [budget.Run] in the call's context ([budget.WithRun]);
// the counts hang off it and are dropped with it, so they end with the run
// without the loop saying so. A call of a limited tool that carries no run
// is refused (run-limit-exceeded/run_call_limit, with its own message):
// there is no run to count it in, and counting per process instead would
// let a long-lived process refuse the tool forever. Tools the layer has no
// limit for pass through untouched, run or not. Each layer made by New
// keeps its own counts: share one Middleware (or one middleware.Stack)
// among the tools of a loop.
//
// Calls are told apart by the tool's name ([toolmw.CallFrom]); a
// repeat of a call (the same call id) is a new call unless the dedupe layer
// outside this one answers it first.
//
// # Across replicas
//
// Without a [Store] the counts live in this process: a run whose calls
// several replicas serve is limited on each replica separately
// (budget.WithRunStore shares attempt caps, not these counts). With
// [WithStore] (adapters/redisstate implements it), the calls of a run named
// with budget.WithID are counted in the Store, so a limit holds for the
// run across the replicas serving it, exactly: Once holds once for the
// fleet. Each call of a limited tool in a named run is one round trip
// (Take), and a call that had no effect gives its slot back with one more
// (Release); a run without an id keeps in-process counts.
//
// When the Store fails or does not answer within the store timeout
// (store.WithTimeout given to WithStore; store.DefaultTimeout, 50 ms, by
// default; and the call's deadline), the call is counted in the
// replica's own count of the run, kept by run id (up to [MaxLocalRuns]
// runs), which also holds the calls the Store admitted on that replica; a
// call that count has no room for is refused without asking the Store.
// The failure is reported as a store.Error (Layer "runlimit", Op "take";
// to store.WithOnError given to WithStore), the call is marked degraded
// (toolmw.Call.Degraded, which spans and logs show), and the Store is
// left alone for store.Rest, a quarter of a second, during which calls count
// locally — only the part of the Store that failed, when its error says
// so (one node of a Redis Cluster). So during an outage each replica
// enforces the limit on its own: a run makes at most n calls of a tool
// per replica, not n in all, however the replica makes its Runs.
// [WithFailClosed] refuses such calls instead. A call whose context ends
// while the Store is asked does not run: it ends cancelled, or as a
// timeout when its deadline passed, and is not reported (the caller's
// end, not the Store's failure).
//
// An answer that never arrived leaves a Take's outcome unknown: the Store
// may apply it late, after the call was refused or counted locally. Every
// operation therefore carries the call's operation id, and the Store
// applies each op once: a call that did not run, or had no effect,
// releases its op (a late Take of it then takes nothing), and a call that
// ran on the replica's count records its op (counted once, whether or not
// its Take landed too). Those releases and records are sent at once and,
// while the Store does not answer, again after each rest for up to
// store.GiveUp, ten minutes; each failure is reported (Op "release" or
// "record"). So no slot is lost to a late answer,
// and once the Store is back its count holds every call that ran during
// the outage: the run does not run its Once tool again on any replica. A
// release or record dropped after ten minutes (reported with store.ErrDropped)
// leaves the Store short of that call: the bound is then the
// limit per replica again, for that run.
//
// A Store that answers with a count it cannot read (store.ErrCorrupt: on
// Redis, a field that is not a decimal count — "garbage", a negative
// number — or a key of another type) fails the call closed, whatever
// WithFailClosed says: run-limit-exceeded/run_calls_corrupt, the tool does
// not run, the call is reported (Refused), and the Store is not left
// alone (it answered). Counting locally instead would let each
// replica run the tool once more, and a count read as zero would open the
// limit. A party that can write to the Store can still lower a count to a
// smaller well-formed one, or delete it; that cannot be told from a run
// that made fewer calls, so the Store is trusted that far.
//
// # Where it sits
//
// Outside retry, so that a call's attempts are one call, and inside the
// observers, so a refused call is traced, logged and reported as a call;
// inside dedupe, so a repeat answered from the record takes no slot:
//
//	stack, err := middleware.Default().InsertBefore(middleware.Retry,
//		middleware.Layer{Name: "runlimit", Middleware: runlimit.New(runlimit.Once("cancel_booking"))})
//
// Inside retry each attempt would take a slot, and a transient failure
// would use up a once-per-run tool. It is not in middleware.Default: which
// tools are limited, and how much, is the application's to say.
//
// # Configuration
//
// New without limits switches the layer off (it returns the tool
// unchanged). A name that is not a tool name, a limit outside 1 to
// [MaxCalls], or one tool given two different limits makes New return a
// [toolmw.Reject] middleware, so toolmw.Wrap reports the
// tool-definition-invalid/option_invalid error at start-up; [Validate]
// reports the same error. So does an invalid store option given to
// WithStore (a negative store.WithTimeout).
//
// A Store of your own runs the conformance checks of package
// runlimittest (runlimittest.TestStore), as the Redis one does;
// runlimittest.MemStore is one in memory, for tests.
//
// # Concurrency
//
// The Middleware, the Tools it makes, an [Option] and [Validate] are safe
// for concurrent use. A limit holds exactly under concurrent calls; the
// layer's lock is held only to count, never across a tool call, and no
// Store operation spans a tool call.
package runlimit
