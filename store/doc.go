// Package store is what every layer that keeps its state in a shared store
// has in common: the options (how long an operation waits, whom to tell of
// a failure), the one error a failure is reported with, and the errors a
// store answers with.
//
// Eight ports take a store: breaker.Store, ratelimit.Store,
// runlimit.Store, spend.Store, approval.Store, dedupe.Store,
// budget.TokenStore and budget.RunStore; and one port of this package,
// [Results], is shared by two layers, the cache and the fallback.
// adapters/redisstate implements all of them on Redis, adapters/sqlstore
// the approval and dedupe stores on SQLite and PostgreSQL; each port has
// a conformance kit (breakertest, ratelimittest, runlimittest, spendtest,
// approvaltest, dedupetest, budgettest, and storetest for Results) that a
// store of your own can run.
//
// Every layer treats its store the same way:
//
//   - each operation is bounded by [WithTimeout] (default [DefaultTimeout])
//     and by the call's own deadline; a call whose own deadline passes
//     while the store is asked ends as a timeout, and the store is not
//     blamed;
//   - a store that fails or does not answer in time is reported to
//     [WithOnError] as an [Error] and left alone for [Rest]; the call is
//     decided on the replica's own state (and marked degraded:
//     toolmw.Call.Degraded names the layer), or refused where the layer
//     fails closed. An error of part of the store only ([Partial]) does
//     not rest the rest of it;
//   - an operation the store must learn even after an outage (a slot given
//     back, a call that ran without it, a spend settled) is kept and tried
//     again in the background, after each rest, for up to [GiveUp], at
//     most [MaxPending] of them; one given up is reported with
//     [ErrDropped];
//   - a store that answers with state it cannot parse wraps [ErrCorrupt].
//     The layers that count or spend (runlimit, spend, approval, and
//     budget's two stores) refuse that call — a count that cannot be read
//     may hide any number of calls — report it with Refused set, and do not
//     rest the store, which answered; so does dedupe, whose unreadable
//     record may hide a call that ran; breaker and ratelimit, whose state
//     only protects a dependency, decide on their own state as for an
//     outage; the cache and the fallback, which only read results back,
//     take such a value for none kept and report it, without resting the
//     store.
//
// A store is given with its options:
//
//	runlimit.WithStore(shared.RunCalls(), store.WithTimeout(100*time.Millisecond),
//		store.WithOnError(func(e store.Error) { storeErrors.Add(ctx, 1) }))
package store
