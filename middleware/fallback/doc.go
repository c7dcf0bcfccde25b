// Package fallback provides the fallback layer: when a call fails because
// the tool cannot be reached just now — its circuit is open, it is
// rate-limited, it timed out — the caller gets a substitute instead of the
// error: the tool's last good result for the same arguments, or what a
// fallback function makes. Either is marked as a fallback in the result, so
// the model is not misled into taking it for a fresh answer.
//
//	search := toolmw.MustWrap(toolmw.Spec{Name: "search_flights", Idempotent: true}, fn,
//		fallback.New(fallback.WithLastGood(10*time.Minute), fallback.WithSharedResults()),
//		retry.New(), breaker.New())
//
// # What it replaces
//
// Only errors of the chosen kinds ([WithKinds]; by default [DefaultKinds]():
// circuit-open, rate-limited, tool-timeout), read with [taxonomy.InfoOf].
// Never a refusal, bad arguments, a denial, a definition error or the run's
// limit (WithKinds rejects those kinds), and never when the caller is gone:
// its context is done, the error is context.Canceled, or it is the caller's
// own deadline (tool-timeout/deadline_exceeded). The error is otherwise
// returned as it came.
//
// # What it serves
//
// With [WithLastGood], the layer remembers each success of a read — a call
// of a tool whose Spec declares it Idempotent ([toolmw.Spec.Idempotent]) —
// under a key made of the SHA-256 of the tool's name, its partition and
// its arguments' canonical JSON (object keys sorted, no spacing, numbers as
// written; arguments with a duplicate key, keys alike but for case, or a
// lone surrogate have none, and are neither kept nor served) — the rule
// the cache layer (middleware/cache) keys its results by — and serves it to a later
// call with the same key that fails with a chosen kind, if it is at most
// the TTL old (by [WithClock]'s clock). Any other tool is never remembered
// nor served, one that only honours idempotency keys
// ([toolmw.Spec.HonoursKeys]) included: Call.Idempotent is true for it, but
// it acts, and its last result is a receipt for an action, not a state.
// Without a last good result — none kept, too old, or not a read — the
// function of [WithFunc], if any, makes a substitute; its error is
// returned in place of the original (return the original to decline), and
// a panic in it becomes tool-failed/tool_panicked. With neither option,
// the layer returns each tool unchanged.
//
// # Whose results
//
// WithLastGood needs a choice of who may be served whose results, made at
// construction: [WithPartition] (a function of the call's context: a
// tenant, a user), so that one caller's result never reaches another, or
// [WithSharedResults], so that every caller of the tool shares its results
// for the same arguments — only for a tool whose answer depends on nothing
// but its arguments. Without either (or with both) the options are
// invalid, so a cache that could serve one user's balance to another is
// never the silent default. A call whose partition is "" is neither
// remembered nor served.
//
// # The mark
//
// [toolmw.Result] has no field for it, so the mark is in the content, in a
// documented form that [Parse] reads back. A text result gets a first line
//
//	[toolmw fallback source=last_good kind=circuit-open code=circuit_open age=42s] The tool is unavailable right now; this is its last good result for the same arguments, 42s old, not a fresh one.
//
// followed by the original content (a result of parts alone gets the line
// as its content; parts are kept after it, as they are); a JSON result
// stays one document,
//
//	{"toolmw_fallback":{"source":"last_good","kind":"circuit-open","code":"circuit_open","age_seconds":42,"note":"…"},"result":…}
//
// The mark holds the source, the kind and code of the error replaced and the
// age: never its message, its cause or the arguments. The layers outside
// see a success (a span's outcome is ok, no tool_error event); to count the
// fallbacks served, give [WithOnServe] a callback, which receives an
// [Event] with the tool, the call id and the mark.
//
// # Memory
//
// One cache per tool wrapped, bounded: at most [WithMaxEntries] results
// ([DefaultMaxEntries], 256) and [WithMaxBytes] bytes ([DefaultMaxBytes], 1
// MiB), each result counting its bytes, content and parts
// (toolmw.Result.Size), plus 128 bytes, and per part the size of a
// toolmw.Part and of its annotations; the result used
// least recently goes first, and a result larger than the byte bound is not
// kept. A key is 32 bytes whatever the arguments. Arguments over
// [MaxArgsBytes] (64 KiB) are not canonicalised: such calls are neither
// remembered nor served from the cache. An expired result is dropped when
// it is next looked up, or when the bounds push it out.
//
// # Shared with a cache and a fleet
//
// [WithStore] keeps the last good results in a store.Results as well,
// shared by every replica and by a cache layer given the same store
// (cache.WithStore): one keying rule, one entry per tool, partition and
// arguments, whichever layer wrote it. A cache layer inside this one tells
// it when the result it returned was served from a kept one: the result is
// then remembered with the time it was made, not as a new one, so that a
// result served again and again still ages and expires.
//
// # Where it sits
//
// Outside retry, so it serves a substitute only once the retries gave up
// (an open circuit, a rate limit or a timeout the retry layer could not get
// past), and inside the observers, which then see the call as served:
//
//	stack, err := middleware.Default().InsertBefore(middleware.Retry,
//		middleware.Layer{Name: middleware.Fallback, Middleware: fallback.New(fallback.WithLastGood(0), fallback.WithPartition(tenant))})
//
// Inside retry it would turn the first open-circuit refusal into a success
// and no retry would be made; outside the observers, they would report the
// failure while the model is shown the fallback. It is not in
// middleware.Default: what may stand in for a tool's answer, and for how
// long, is a decision per tool.
//
// # Configuration
//
// Zero and nil values are the defaults. A negative TTL or bound, a
// malformed kind, a kind that is never replaced, WithLastGood without
// one of WithPartition and WithSharedResults, or WithStore without
// WithLastGood or with an invalid store option makes New return a
// [toolmw.Reject] middleware: toolmw.Wrap reports the
// tool-definition-invalid/option_invalid error at start-up, as [Validate]
// does.
//
// # Concurrency
//
// The Middleware, the Tools it makes, an [Option], [Validate] and [Parse]
// are safe for concurrent use. The cache's lock is never held across a
// tool call, a store operation, the fallback function or the callback.
package fallback
