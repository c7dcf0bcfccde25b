// Package budget holds the arithmetic that keeps retries bounded: a run
// budget capping how many attempts one tool may use across a whole agent
// run, a retry token budget shared by a process or a dependency, and
// deadline helpers that tell whether a wait can still end in time.
//
// # Run budget
//
// An agent run puts a [Run] in its context with [WithRun]; every attempt of
// a tool, first attempts and retries alike, takes one from it with
// [Run.Take]. Once a tool has used its cap ([DefaultRunAttempts], 12)
// further attempts are refused, so one dependency failing on every call
// cannot eat the whole run. The retry middleware consults it on its own; a
// custom agent loop can call [RunFrom] and [Run.Take] directly.
//
// # Retry budget
//
// A [Retry] is a token bucket in the spirit of the SRE book's per-client
// retry budget and gRPC retry throttling. Every call deposits a fraction
// (the ratio, 10% by default) of a token; every retry withdraws a whole one.
// The bucket starts full at its reserve (10 tokens by default) and never
// holds more, so:
//
//   - a quiet tool may still retry: the reserve is there for it;
//   - against a dependency that is 100% down, the attempts that reach it
//     never exceed (1 + ratio) × calls + reserve, whatever the call rate,
//     where every caller retrying three times would triple the load;
//   - while a dependency keeps failing, the reserve is soon spent and
//     retries settle at the ratio: with the defaults, at most 10 extra
//     attempts in any 100 calls.
//
// Deposits count calls rather than successes (the SRE book's "retries at
// most 10% of requests", not gRPC's success-only deposits). With
// success-only deposits a dependency failing 20% of calls would get about
// ratio × 0.8 retries per call and a call success rate of 0.8/0.92 ≈ 87.0%;
// counting calls gives 0.8 + 0.8 × 0.1 = 88% at the same worst-case load
// bound, and a dead dependency still sees at most 10% extra.
//
// There is no per-second floor of free retries. Agent tools are often called
// a few times a minute; a floor of, say, ten retries a second would let every
// such call retry fully and the budget would never bind. The fixed reserve
// plays the floor's role without depending on the call rate.
//
// # Deadlines
//
// [Remaining] and [WaitFits] do the deadline arithmetic: a wait that would
// end at or past the context's deadline is never started, since the attempt
// after it could not finish in time.
//
// # Configuration
//
// The zero [Run] and the zero [Retry] are ready to use with the defaults, as
// are [NewRun] and [NewRetry] without options. An option given 0 means its
// default, except [WithRatio], where 0 is a real ratio (never refill). A
// value an option cannot use (a negative cap or reserve, a ratio outside
// [0, 1]) is ignored, the default kept, so the constructors always return a
// working budget; [ValidateRun] and [ValidateRetry] report it at start-up.
// Nothing here panics.
//
// This package imports only the standard library. Its errors are plain
// errors; the layers turn them into typed ones
// (tool-definition-invalid/option_invalid).
package budget
