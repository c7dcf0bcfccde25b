// Package ratelimit is the rate-limiting layer: a tool is not called faster
// than its upstream allows. It is built on golang.org/x/time/rate.
//
//	ratelimit.New(rate.Every(time.Second), 5)                       // per tool: 1/s, bursts of 5
//	ratelimit.New(10, 10, ratelimit.WithReject())                   // never wait
//	ratelimit.New(0, 0, ratelimit.WithShared(searchAPI))            // one limiter for every tool
//	ratelimit.New(5, 5, ratelimit.WithKey(upstreamOf))              // one limiter per upstream
//
// Each tool gets its own limiter, made when the layer wraps it; [WithShared]
// and [WithKey] share limiters between tools. WithKey keeps at most
// [DefaultMaxKeys] keys ([WithMaxKeys]); a new key beyond the bound drops
// the key used least recently, whose limiter starts full again on its next
// use.
//
// # Waiting
//
// A call takes a token. When one is free the tool runs at once. Otherwise
// the call reserves the next token and waits for its turn, unless the wait
// would end past the context's deadline or last longer than
// [WithMaxWait]: then it fails at once with rate-limited/rate_limited,
// retryable, RetryAfter the wait it would have needed, and takes nothing —
// the wait is decided from the limiter's tokens before anything is
// reserved, so however many calls are refused at once, the limiter admits
// its rate. If the context is cancelled while the call waits, the
// reservation is cancelled and the call returns context.Canceled; if its
// deadline passes meanwhile, tool-timeout/deadline_exceeded (not
// retryable), which also matches context.DeadlineExceeded. With
// [WithReject] a call never waits.
//
// A limiter that can never grant a token (a limit of 0 whose burst is used
// up) fails the call with rate-limited/rate_limited, not retryable, without
// a RetryAfter hint.
//
// # Across replicas
//
// [WithStore] keeps the limits in a [Store] shared by every replica
// (adapters/redisstate keeps them on Redis, by GCRA): the limit and burst hold
// across the fleet per tool name, or per key with [WithKey]. The Store
// decides each call in one round trip: admit now, admit after a wait (the
// slot is reserved; the call waits as above, within its deadline and
// [WithMaxWait]), or refuse with the time until a slot is free as
// RetryAfter. A reserved slot whose wait is cancelled is not given back:
// the limit is under-used, never exceeded.
//
// WithStore takes the options of package store after the Store:
//
//	ratelimit.WithStore(shared.RateLimits(), store.WithTimeout(100*time.Millisecond),
//		store.WithOnError(func(e store.Error) { storeErrors.Add(ctx, 1) }))
//
// A call never fails or waits past its deadline because the Store is slow
// or down: after the store timeout (store.WithTimeout, store.DefaultTimeout
// by default, bounded by the deadline) or an error, a local limiter of the
// same limit and burst decides (fail open; [WithFailClosed] refuses
// instead) and the call is marked degraded (toolmw.Call.Degraded is
// "ratelimit"), the failure is reported to store.WithOnError as a
// store.Error (Layer "ratelimit", Op "admit", Key the tool's name, Refused
// with WithFailClosed), and the Store is left alone for store.Rest before
// the next call tries it again. A Store's state that does not parse (an
// error wrapping store.ErrCorrupt) is such a failure too. While the Store
// is down each replica admits up to the whole limit on its own. Package
// ratelimittest has an in-memory Store for tests and the conformance
// checks every Store runs.
//
// # Time
//
// The clock of [WithClock] tells the limiter the time and makes the wait's
// timer, so tests are deterministic with a fake clock. The context's
// deadline is compared with that clock's time: a fake clock should start at
// time.Now(). With the default clock, package time, tests run the layer in
// a testing/synctest bubble, where waits take no real time.
//
// # Configuration errors
//
// Zero and nil mean the default: a burst of 0 is 1, WithMaxWait(0) sets no
// cap, WithShared(nil) and WithKey(nil) a limiter per tool, WithClock(nil)
// package time. A negative (or NaN) limit, a negative burst, or an option
// given a value it cannot use (a negative duration or count, an invalid
// store option given to WithStore) makes [New]
// return a [toolmw.Reject] middleware, so toolmw.Wrap reports the
// tool-definition-invalid/option_invalid error at start-up; [Validate]
// reports the same error without wrapping anything. Nothing panics. A limit
// of rate.Inf switches the layer off: New returns the tool unchanged
// (unless WithShared gives a limiter of its own). A limit of 0 lets the
// burst through, then nothing.
//
// # Concurrency
//
// Everything exported is safe for concurrent use: the Middleware [New]
// returns and the Tools it makes, an [Option], and [Validate].
package ratelimit
