// Package bulkhead provides the bulkhead layer: at most n executions of a
// tool (or of a pool shared by several tools that call one upstream) run at
// once; further calls wait for a slot in the order they came.
//
//	tool := toolmw.MustWrap(spec, fn, bulkhead.New(4))
//
// # Semantics
//
// A call takes a slot before the tool runs and gives it back when the tool
// returns (or panics). While all n slots are taken, a call joins a queue and
// is given a slot in first-in, first-out order: a slot that comes free goes
// to the call that has waited longest, never to a newcomer. A call waits
//
//   - while its context allows: the caller's cancel ends the wait with
//     context.Canceled as is; the caller's deadline with
//     tool-timeout/deadline_exceeded, not retryable;
//   - at most [WithMaxWait] (default: no cap but the deadline): past it the
//     call ends as rate-limited/bulkhead_full, retryable — nothing ran;
//   - only when the queue has room ([WithMaxQueue], default
//     [DefaultMaxQueue] waiting calls): a call finding the queue full ends
//     at once as rate-limited/bulkhead_full.
//
// rate-limited is the kind because the loop acts on a full bulkhead as on
// a rate limit: nothing ran, try later. The breaker does not count it.
//
// # Per tool or per upstream
//
// Each tool the layer wraps gets its own n slots. To bound the calls that
// reach one upstream from several tools, give the layers a shared pool:
//
//	pool := bulkhead.NewPool(8)
//	mw := bulkhead.New(0, bulkhead.WithShared(pool)) // n is then the pool's
//
// # Adaptive limit
//
// [WithAdaptive] lets the limit follow the upstream instead of a number
// chosen in advance: additive increase, multiplicative decrease (AIMD) on
// the latency of the calls the pool lets run. Each limit's worth of calls
// in a row under the target latency raises the limit by one, up to Max; a
// call over the target, timed out or rate-limited by the upstream lowers it
// to 0.9 × itself, at least one less, not below Min, at most once per
// limit's worth of calls. An upstream that slows down as more calls reach it
// at once settles the limit around the concurrency it serves within the
// target:
//
//	pool := bulkhead.NewPool(8, bulkhead.WithAdaptive(bulkhead.Adaptive{
//		Min: 2, Max: 64, Target: 300 * time.Millisecond,
//	}))
//
// # Where it sits
//
// Not in middleware.Default: there is no limit that suits every tool. Put
// it inside retry, so a retry waits for a slot like a first call and a
// bulkhead_full is retried after backoff, and outside timeout, so the wait
// for a slot is not charged to the attempt's time:
//
//	stack, err := middleware.Default().InsertBefore(middleware.Timeout,
//		middleware.Layer{Name: middleware.Bulkhead, Middleware: bulkhead.New(4)})
//
// # Configuration
//
// New(0) without a pool switches the layer off (it returns the tool
// unchanged). A negative n, a negative maximum wait or queue length makes
// New return a [toolmw.Reject] middleware, so toolmw.Wrap reports the
// tool-definition-invalid/option_invalid error at start-up; [Validate]
// reports the same error. WithShared(nil) is the default, a pool per tool.
//
// # Concurrency
//
// Everything exported is safe for concurrent use: the Middleware, the
// Tools it makes, a [Pool], an [Option] and [Validate]. The layer holds its
// lock only to count slots and queue waiters, never across a tool call.
package bulkhead
