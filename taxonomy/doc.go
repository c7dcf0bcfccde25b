// Package taxonomy defines the typed errors every toolmw layer produces.
//
// A tool call ends in one of a small set of kinds (tool-failed, tool-refused,
// tool-timeout, circuit-open, …), each a stable kebab-case string, and a code:
// a snake_case reason chosen by whoever made the error
// (booking_not_cancellable, upstream_unavailable, unmapped_failure). Kinds and
// codes are public API: a consumer branching on a code is doing what the code
// is for. The built-in ones are listed by [Codes] and pinned by a golden file.
//
// # Making errors
//
// A tool author says what happened:
//
//	return toolmw.Result{}, taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
//	return toolmw.Result{}, taxonomy.Transient("supplier_unavailable", "supplier is down").WithRetryAfter(2 * time.Second)
//	return toolmw.Result{}, taxonomy.Failure("ledger_rejected", "ledger refused the entry")
//
// A failure is permanent unless its author says transient: an author who has
// not established that repeating the call does not repeat a side effect has
// not established that it is safe to retry. A refusal is an answer, not a
// fault, and is never retryable.
//
// A code is required and must be snake_case ([ValidCode]). An empty or
// malformed code does not panic and does not lose the error: the constructor
// keeps the kind and retryability the author asked for and replaces the code
// with [CodeInvalidCode], so the call still ends in a typed error and the
// mistake is visible in every dashboard. Tests can assert codes with
// [ValidCode] at start-up.
//
// # Matching
//
// Each kind has a sentinel, so errors.Is(err, taxonomy.ErrRefused) works
// anywhere in a wrapped chain. A timeout also matches
// context.DeadlineExceeded, and a cancellation matches context.Canceled.
// [From] finds the first typed error in a chain without allocating.
//
// # Retry rule
//
// [ShouldRetry] is the one rule every caller asks: cancellation never,
// a typed error as it says, an untyped error only when the caller says the
// tool is idempotent.
//
// # Did the call run?
//
// [EffectOf] is the one rule for what a call that ended in an error may
// have done: not started the tool ([EffectNotStarted]: a breaker, a
// limit, a permission), started it with nothing landed ([EffectNone]: a
// typed transient failure, whose maker vouches for it), or possibly acted
// ([EffectPossible]: a success, a permanent failure, a refusal, and every
// outcome the caller cannot know — a timeout of any kind, an abandoned
// execution, a reset after sending, a cancellation, an untyped error).
// [NoEffect] is its short form. The layers that admit a bounded number of
// executions (runlimit gives a slot back, spend refunds a reservation)
// decide on it, and so can anyone who must know whether a call possibly
// ran.
//
// # Crossing boundaries
//
// [InfoOf] turns any error into a JSON-safe [Info] record; an untyped error
// becomes tool-failed/unmapped_failure with its message withheld, since
// nobody vouched that it is free of secrets. [Info.Err] turns the record back
// into an equivalent typed error, and [Info.Problem] renders it as an
// RFC 9457 problem document.
//
// Three kinds carry a record of their own, set with a With method and
// bounded by it: approval-pending and approval-denied an [ApprovalInfo]
// (the request's id and a summary for the reviewer,
// [ToolError.WithApproval]), budget-exceeded a [SpendInfo] (limit, spent
// and left, [ToolError.WithSpend]), guardrail-blocked the guardrail's name
// ([ToolError.WithGuardrail]). A pending or denied approval is never
// retryable, whatever its maker says.
//
// This package imports only the standard library.
package taxonomy
