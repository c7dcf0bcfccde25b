// Package cache provides the cache layer: a call of a read is answered
// with the result kept for the same tool, partition and arguments, at
// most a TTL old, before the tool is called — failsafe-go's cachepolicy,
// for tool calls.
//
//	rates := toolmw.MustWrap(toolmw.Spec{Name: "exchange_rate", Idempotent: true}, fn,
//		cache.New(time.Minute, cache.WithSharedResults()), retry.New(), breaker.New())
//
// # What it serves
//
// Only reads: calls of a tool whose Spec declares it Idempotent
// ([toolmw.Spec.Idempotent]). Any other tool's calls pass through as they
// are, one that only honours idempotency keys ([toolmw.Spec.HonoursKeys])
// included: Call.Idempotent is true for it, but it acts, and its result is
// a receipt for an action, not a state. A read's result is kept under a
// key made of the tool's name, the call's partition and the SHA-256 of its
// arguments' canonical JSON (object keys sorted, no spacing, numbers as
// written), so the same arguments, however spaced or ordered, find it.
// Arguments with no canonical form (a duplicate key, keys alike but for
// case, a lone surrogate, not one JSON value) or over [MaxArgsBytes] (64
// KiB) have no key: such a call is a [Bypass], neither served nor kept.
//
// A call finds the result if it is at most the TTL old by [WithClock]'s
// clock, and is served a copy of it: the tool is not called, and no layer
// inside the cache runs. Otherwise (a miss) the tool is called and its
// success kept, made at the time it returned; an error is never kept, nor
// a substitute a fallback layer inside served (toolmw.Call.Fallback). A
// result kept is a copy too: neither the caller served nor the one that
// made it can change what is kept.
//
// # Whose results
//
// The layer needs a choice of who may be served whose results, made at
// construction: [WithPartition] (a function of the call's context: a
// tenant, a user), so that one caller's result never reaches another, or
// [WithSharedResults], so that every caller of the tool shares its results
// for the same arguments — only for a tool whose answer depends on nothing
// but its arguments. Without either, or with both, New returns a
// [toolmw.Reject] middleware: a cache that could serve one user's balance
// to another is never the silent default. A call whose partition is "" is
// a Bypass.
//
// # Misses of one key at once
//
// Calls of one key that miss while a first one is under way in the same
// layer wait for it instead of calling the tool too (a cache that expires
// under load would otherwise send every waiting caller to the dependency
// at once): when it succeeds, each is served a copy of its result (a
// [Hit] from [SourceInFlight]); when it fails or its result is not kept,
// each calls the tool itself, so that no call is given another's error —
// a cancellation, the other caller's deadline. A waiting call's own
// context still bounds its wait: its deadline ends it as
// tool-timeout/deadline_exceeded, its cancellation with its error. Calls
// in other processes do not wait for each other.
//
// # Seen from outside
//
// [WithOnLookup] gets a [Lookup] for each call of a read: hit (with the
// result's source and age), miss or bypass, never arguments or results.
// Each call of a read is noted in the call record with [toolmw.SetCache]
// ("hit", "miss" or "bypass"), so the observers outside show it: the
// tracing layer's span attribute toolmw.cache and its counter
// toolmw.cache.lookups (by tool and outcome), and the logging layer's
// cache field. A store that failed shows too: toolmw.Call.Degraded is
// "cache".
//
// # Memory and store
//
// One in-process cache per tool wrapped, bounded: at most
// [WithMaxEntries] results ([DefaultMaxEntries], 256) and [WithMaxBytes]
// bytes ([DefaultMaxBytes], 1 MiB), each result counting its content and
// parts (toolmw.Result.Size), 128 bytes, and per part the size of a
// toolmw.Part and of its annotations; the result used least recently goes
// first, and one larger than the byte bound is not kept. A key is 32
// bytes whatever the arguments. An expired result is dropped when it is
// next looked up, or when the bounds push it out.
//
// [WithStore] keeps results in a store.Results as well, shared by every
// replica and by a fallback layer given the same store
// (fallback.WithStore), which keys its last good results by the same rule:
// a result the cache kept is a last good result for the fallback, and the
// reverse. A call looks in the process's results first, then in the
// store; a result found there is kept in process too. The store is a read
// cache's: when it fails or is slow, calls miss (fail open) within the
// store timeout, and the failure is reported (see WithStore).
//
// # Where it sits
//
// Outside retry, breaker and rate limit, so that a hit costs none of
// their budget and is served even while the tool's circuit is open; inside
// the observers:
//
//	stack, err := middleware.Default().InsertBefore(middleware.Retry,
//		middleware.Layer{Name: middleware.Cache, Middleware: cache.New(time.Minute, cache.WithSharedResults())})
//
// With a fallback layer too, put the fallback outside the cache
// (InsertBefore(middleware.Cache, …)): it then serves a last good result
// once the cache missed and the tool failed, and it learns from the cache
// that a result served again is no new one (its age is the kept
// result's). Inside the cache it works too: the cache keeps no
// substitute.
//
// It is not in middleware.Default: how long a tool's answer may be
// repeated, and to whom, is a decision per tool.
//
// # Configuration
//
// Zero and nil values are the defaults; a TTL of 0 turns the layer off. A
// negative TTL or bound, an invalid store option, or neither (or both) of
// WithPartition and WithSharedResults makes New return a [toolmw.Reject]
// middleware: toolmw.Wrap reports the tool-definition-invalid/option_invalid
// error at start-up, as [Validate] does.
//
// # Concurrency
//
// The Middleware, the Tools it makes, an [Option] and [Validate] are safe
// for concurrent use. The layer's locks are never held across a tool
// call, a store operation or the callback.
package cache
