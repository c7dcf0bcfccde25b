// Package ratelimit is the rate-limiting layer: a tool is not called faster
// than its upstream allows. It is built on golang.org/x/time/rate.
//
//	ratelimit.New(rate.Every(time.Second), 5)                       // per tool: 1/s, bursts of 5
//	ratelimit.New(10, 10, ratelimit.WithReject())                   // never wait
//	ratelimit.New(0, 0, ratelimit.WithShared(searchAPI))            // one limiter for every tool
//	ratelimit.New(5, 5, ratelimit.WithKey(upstreamOf))              // one limiter per upstream
//
// Each tool gets its own limiter, made when the layer wraps it; [WithShared]
// and [WithKey] share limiters between tools.
//
// # Waiting
//
// A call reserves a token. When one is free the tool runs at once. Otherwise
// the call waits for its turn, unless the wait would end past the context's
// deadline or last longer than [WithMaxWait]: then the reservation is
// cancelled (the limiter's tokens are as they were) and the call fails at
// once with rate-limited/rate_limited, retryable, RetryAfter the wait it
// would have needed. If the context is cancelled while the call waits, the
// reservation is cancelled too and the call returns context.Canceled; if its
// deadline passes meanwhile, tool-timeout/deadline_exceeded (not
// retryable), which also matches context.DeadlineExceeded. With
// [WithReject] a call never waits.
//
// A limiter that can never grant a token (a limit of 0 whose burst is used
// up) fails the call with rate-limited/rate_limited, not retryable, without
// a RetryAfter hint.
//
// # Time
//
// The clock of [WithClock] tells the limiter the time and makes the wait's
// timer, so tests are deterministic with a fake clock. The context's
// deadline is compared with that clock's time: a fake clock should start at
// time.Now().
//
// # Configuration errors
//
// A negative (or NaN) limit is treated as 0 and a burst below 1 as 1, so
// [New] always returns a working middleware (failing closed); an option
// given a value it cannot use is ignored. [Validate] reports both as a
// tool-definition-invalid/option_invalid error at start-up. A limit of
// rate.Inf switches the layer off: New returns the tool unchanged (unless
// WithShared gives a limiter of its own).
package ratelimit
