// Package hedge provides the hedging layer: when an idempotent tool has not
// answered after a delay, a second attempt starts alongside the first, and
// whichever succeeds first wins.
//
//	tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, fn,
//		hedge.New(hedge.WithOnLate(report)))
//
// A tool whose latency has a heavy tail (a few calls many times slower than
// the median) makes an agent wait for its slowest calls. A hedge cuts that
// tail at the cost of a few extra calls: with the delay at the 95th
// percentile, at most about 5% of calls are hedged.
//
// # Semantics
//
// Only idempotent calls are hedged (toolmw.Call.Idempotent: the spec says
// Idempotent, or that the tool honours idempotency keys, in which case both
// attempts carry the same toolmw.Call.Key). Nor is a call that a layer
// outside admitted as a single execution: the runlimit layer marks the
// calls of a tool it limits, and the spend layer the calls it reserves a
// cost for, since a second execution beside the first would go past what
// they admitted (two executions on one reservation). Any other call passes
// through untouched, on the caller's goroutine. Outside those layers, the
// hedge layer is free to hedge: each execution it starts then passes
// through them on its own, and is counted or reserved as a call of its
// own. So the order of the layers cannot make a limit count one execution
// for two.
//
// An idempotent call runs on a goroutine of its own. If it has not returned
// after the delay, a hedge starts with the same arguments and context
// values. Then:
//
//   - the first success wins and is returned; the other attempt's context
//     is cancelled;
//   - a failure before the hedge started is returned at once (deciding what
//     to do with failures is the retry layer's job);
//   - once both run, a failure waits for the other attempt; when both fail,
//     the first failure is returned, unless it says nothing happened and
//     the other's outcome is unknown (taxonomy.NoEffect: a timeout, a
//     reset): then that one is, so a layer outside that counts executions
//     does not take a call that possibly ran for one that had no effect;
//   - the caller's cancel or deadline returns the context's error at once,
//     and cancels both attempts.
//
// What an attempt returns after the call was decided (the loser) is never
// silently lost: it is passed to the [WithOnLate] callback as a [Late], with
// how long after the decision it came, as the timeout layer reports an
// abandoned attempt. Without WithLate it is discarded: for an idempotent
// tool it holds nothing the winner did not. A panic of an attempt is
// re-raised on the caller's goroutine while the caller waits, and reported
// as a late outcome after.
//
// # Delay
//
// [WithDelay] fixes the delay. By default the layer tracks the latency of
// the tool's successful attempts (the last 512) and hedges at a percentile
// of them ([WithPercentile], default 0.95), recomputed every 32 samples;
// until it has 32 samples it does not hedge.
//
// The delay, the latencies and how late a loser came are read on the
// layer's clock ([WithClock], default clock.System): with a clock.Fake, a
// hedge starts when the fake time passes the delay, and not before.
//
// # Budgets
//
// A hedge is an extra attempt, and pays like a retry: it takes one attempt
// from the run budget in the context (budget.RunFrom), if any, and one
// token from a retry token budget; when either refuses, the call is not
// hedged and waits for its first attempt. By default each tool gets its own
// budget.Retry, into which every call deposits; [WithBudget] shares one —
// typically the retry layer's (retry.WithBudget) — into which the layer
// then only withdraws, the retry layer making the deposits. Losers still
// running are bounded ([WithMaxLosers], default 100 per tool): past the
// bound calls are not hedged.
//
// # Where it sits
//
// Inside retry, so each attempt the retry layer makes may be hedged and a
// hedge is never retried on its own; outside breaker, ratelimit and
// timeout, so each hedged attempt is counted, throttled and timed like any
// other (beside runlimit or spend, in either order: see Semantics):
//
//	stack, err := middleware.Default().InsertAfter(middleware.Retry,
//		middleware.Layer{Name: "hedge", Middleware: hedge.New()})
//
// It is not in middleware.Default: it adds load to a dependency to save
// latency, a trade only the user can make.
//
// # Configuration
//
// Zero and nil values are the defaults (WithClock(nil) reads package
// time). A negative delay or bound, or a
// percentile outside (0, 1), makes New return a [toolmw.Reject]
// middleware: toolmw.Wrap reports the tool-definition-invalid/option_invalid
// error at start-up, as [Validate] does.
//
// # Concurrency
//
// The Middleware, the Tools it makes, an [Option] and [Validate] are safe
// for concurrent use; [Late] is a plain value. The WithLate callback runs on
// the loser's goroutine, possibly on many at once, never under a lock.
package hedge
