// Package retry provides the retry layer: it makes a call again when the
// failure says that may succeed, with jittered exponential backoff, within
// the context's deadline, a cap on any one wait, the run's attempt budget
// and a shared retry token budget.
//
//	tool := toolmw.MustWrap(spec, fn, retry.New(retry.WithMaxAttempts(3)))
//
// # What is retried
//
// After a failed attempt the layer asks [taxonomy.ShouldRetry] with the
// call's idempotency:
//
//   - a typed error is retried when it says it is retryable (a transient
//     failure, an idempotent timeout, rate-limited), after max(backoff, its
//     RetryAfter);
//   - an open breaker (circuit-open) ends the call at once, with the
//     breaker's error and its RetryAfter (the time until it lets a probe
//     through), with or without a deadline: sleeping out an open period
//     holds the call for nothing, since the breaker usually opens again.
//     Only when the breaker will let a probe through within this retry's
//     backoff ceiling (min(cap, base·2^(k-1)), the longest backoff the layer
//     would wait anyway; circuit_half_open carries no hint) is the wait
//     taken and the call retried;
//   - a refusal, a permission denial or any other non-retryable error is
//     returned at once, unchanged;
//   - a cancellation is never retried: the context's error comes back as is,
//     and a cancel during a backoff wait returns at once with
//     context.Canceled;
//   - an untyped error is retried only when the Call is idempotent
//     (toolmw.Spec.Idempotent): a call that may have had its side effect is
//     not made twice on a guess.
//
// When the attempts are used up ([WithMaxAttempts] counts attempts, not
// retries) the last error is returned with its kind, code and RetryAfter.
//
// # Final means final
//
// Whatever leaves the layer is its last word on the call: an error that
// [taxonomy.ShouldRetry] would still retry is marked with [taxonomy.Final],
// so a loop that follows the one retry rule does not multiply the attempts
// the layer already made. [taxonomy.InfoOf] still reports the underlying
// retryability (and final: true) for dashboards and records; an untyped
// error comes back as tool-failed/unmapped_failure wrapping it. A chain
// without a retry layer marks nothing, and the loop's ShouldRetry decides.
//
// # Failing closed
//
// The layer never sleeps through a wait it cannot use. Each of these ends
// the call at once with a typed, non-retryable error wrapping the last
// failure (errors.Is/As still reach it):
//
//   - the next wait would end at or past the context's deadline:
//     code retry_wait_past_deadline, the last failure's kind (a circuit-open
//     stays circuit-open), RetryAfter = the wait;
//   - the dependency asked for a RetryAfter longer than [WithMaxWait]
//     (default 30s; a server may ask for an hour): code retry_wait_too_long,
//     likewise, with or without a deadline;
//   - the run's cap of attempts for this tool is used up
//     ([budget.WithRun]): run-limit-exceeded/run_attempts_exhausted;
//   - the retry token budget is empty: retry-budget-exhausted.
//
// They are checked in that order, before a retry token is spent: a wait
// that is both past the deadline and over the cap is reported as past the
// deadline, since no cap would have made it fit.
//
// # Budgets
//
// When the context carries a run budget ([budget.RunFrom]), every attempt,
// the first included, takes one attempt from it under the tool's name.
//
// Every call deposits into the retry token budget, every retry withdraws one
// token, and after every attempt but a first one that succeeded the layer
// tells the budget how it ended ([budget.Retry.Observe]): a success, a
// failure, or a failure with a sign of overload — a timeout (tool-timeout,
// except the caller's own deadline_exceeded), a rate-limited answer (a
// local limiter, an upstream 429, a full bulkhead), or a retryable error
// carrying a RetryAfter (a push-back). An open breaker is none of these: it
// kept the attempt from the dependency. The default, adaptive budget
// refunds a retry that succeeded and charges an overloaded attempt twice,
// so retries mask independent faults yet stop while the dependency is
// overloaded; see package budget for the algorithm and its bounds.
//
// By default each wrapped tool gets its own adaptive budget
// ([budget.NewAdaptive]), made when the layer wraps it; pass one budget to
// several layers with [WithBudget] to share it across the tools of one
// dependency (budget.NewRetry for the fixed-ratio algorithm), or switch it
// off with [WithoutBudget].
//
// # Attempts
//
// Before each attempt the layer records its number with toolmw.SetAttempt,
// so the tool and every layer see it through toolmw.CallFrom, and layers
// outside the retry read the number of attempts made once the call returns.
//
// # Configuration
//
// Zero and nil option values mean the defaults. An unusable value (a
// negative number of attempts or duration, a backoff cap below its base) is
// a tool-definition-invalid/option_invalid error: [Validate] reports it, and
// [New] returns a toolmw.Reject middleware, so toolmw.Wrap reports it at
// start-up and never wraps a tool with a configuration nobody asked for.
package retry
