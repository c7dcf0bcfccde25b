// Package state is where the layers publish their state — a breaker's
// state, a bulkhead's queue, a limiter's waits, a budget's balance, a
// store's failures — to be read when metrics are collected, not when calls
// run. It imports only the standard library and package scrub: the layers
// publish without linking OpenTelemetry, and middleware/tracing (RegisterStateMetrics)
// reads a [Registry] into observable OpenTelemetry instruments.
//
// A layer instance registers a reader with [Register] when it is made
// (when a middleware wraps a tool, or when a shared breaker, pool or
// budget is made). The registry holds the instance only by a weak pointer:
// an instance no longer reachable is collected as before, and its reader
// is removed then, so tools made per request do not accumulate. The reader
// runs at collection time only; the call path pays nothing beyond the
// atomic counters a layer keeps anyway.
//
// # Bounds
//
// Names (tool names, keys of keyed layers) and details are hostile: a key
// function may return anything. A [Registry] keeps at most MaxSeries (see
// [WithMaxSeries], default [DefaultMaxSeries]) distinct name–detail pairs
// per [Instrument], admitted first come, first served, for the registry's
// lifetime; what comes after is folded into one series named [Other]
// (both name and detail), so an instrument never reports more than
// MaxSeries+1 series. A name or detail is scrubbed (package scrub: a key
// may be a token) and then cut to [MaxNameLen] bytes of valid UTF-8, in
// that order, so no cut secret survives the scrubber. Series of one name from several instances are folded by the
// instrument's [Merge] (summed, or the highest or lowest taken).
//
// A counter is read from its instance: when the instance is collected, its
// series ends (a named series disappears; the [Other] series may fall).
// Read counters of instances made per request with that in mind.
//
// # Who publishes
//
// breaker, bulkhead, ratelimit, retry, hedge, runlimit, spend (per
// currency), cache, dedupe and fallback publish into [Default] from each
// instance; approval from each Desk, or, for the Desks sharing one
// approval.MemoryStore, from the store, so that they count together;
// budget's run budgets, and every store port through the one store guard,
// too. Other layers may publish later: an [Instrument] is only ever
// appended to.
package state
