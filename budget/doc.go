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
// A [Retry] is a token bucket shared by the callers of a process or of one
// dependency, in the spirit of the SRE book's per-client retry budget, gRPC
// retry throttling and the AWS SDKs' retry quota. It has two parameters, the
// ratio (0.1) and the reserve (10 tokens), and two algorithms.
//
// Both start the bucket full at the reserve, never let it hold more or less
// than nothing, and keep this ledger:
//
//	a call (its first attempt)               +ratio   Deposit
//	a retry                                  −1       TryRetry; refused below 1
//
// The adaptive algorithm ([NewAdaptive], the retry layer's default) adds
// what the attempts taught it ([Retry.Observe]):
//
//	a retry that succeeded                   +1       its token refunded
//	a retry that failed, overloaded          −1       a second token, if there is one
//	a first attempt that failed, overloaded  −ratio   its call's deposit taken back
//	any other failure                         0       a failed retry keeps its price
//
// where overloaded means a sign that the dependency cannot take more load:
// the attempt timed out, was rate-limited, found a bulkhead full, or was
// told to come back later (a push-back RetryAfter). The retry layer reads
// those signs from the typed errors the layers below it return.
//
// Why each rule:
//
//   - The ratio bounds the damage: against a dependency that is 100% down no
//     retry ever succeeds, so nothing is refunded, and the attempts that
//     reach it never exceed (1 + ratio) × calls + reserve (1.10 × calls + 10),
//     whatever the call rate, where three attempts per call would triple the
//     load. Deposits count calls rather than successes (gRPC deposits on
//     success only), so a dead dependency still gets its 10% of probes and a
//     flaky one is not starved twice.
//   - The refund (as the AWS retry quota refunds a retry that succeeds)
//     makes a retry that worked free: it is evidence the dependency can take
//     it. Only failed retries are charged, so with independent failures of
//     probability p and three attempts a call spends p² + p³ tokens on
//     average against its 0.1 deposit: the budget does not bind below about
//     28% failures (at 20% it spends 0.048 and leaves every retry to the
//     attempt cap: 1 − 0.2³ = 99.2% of calls succeed, with 1.24 attempts
//     each, where the fixed ratio lets 88% succeed). Above that, retries
//     settle where failed retries are 10% of calls, so the load a failing
//     dependency sees is at most (1 + ratio) × calls + reserve plus the
//     retries it answered.
//   - The overload charges stop retries from feeding an overload. While
//     attempts time out or are pushed back, calls earn nothing and each
//     failed retry costs two tokens, so once the reserve is spent retries
//     stop until attempts come back healthy: an overload episode gets at
//     most the reserve in retries, plus what the calls and retries that
//     still succeed earn. This is what keeps a short overload from becoming
//     a metastable failure, where retries of timed-out work keep the
//     dependency overloaded after the trigger is gone (see bench/cmd/storm).
//     A plain failure, a fast error without a sign of overload, is charged
//     once, as in the fixed ratio: charging it more would starve the
//     independent faults the refund is there to mask.
//   - There is no per-second floor of free retries. Agent tools are often
//     called a few times a minute; a floor of, say, ten retries a second
//     would let every such call retry fully and the budget would never bind.
//     The fixed reserve plays the floor's role without depending on the call
//     rate.
//
// Attempt latency short of a timeout is not a sign the retry layer uses: it
// would have to read the clock twice on every successful call. A layer that
// measures latency anyway (a hedge) may report a slow attempt as
// [Overloaded].
//
// The fixed-ratio algorithm ([NewRetry], and the zero [Retry]) ignores
// Observe: retries never exceed reserve + ratio × calls, whatever happens.
// It is the hard cap for a dependency where even a retry that succeeds is
// load you cannot afford.
//
// # Across replicas
//
// A fleet of replicas may share one retry bucket and one count per named
// run. [WithTokenStore] keeps a [Retry]'s balance in a [TokenStore]: the
// ratio and reserve then bound the retries of the whole fleet, not of each
// replica. Deposits and charges are batched: a call's deposit is sent in
// the background once 10 ms have passed since the last send or ten tokens
// are queued, or with the next withdrawal, whichever comes first, so a
// replica holds back at most that much; each retry's withdrawal is one
// round trip. [WithRunStore] with [WithID] counts a
// run's attempts in a [RunStore], one round trip per [Run.Take], so a
// run's cap holds whichever replicas serve its calls. adapters/redisstate
// implements both on Redis.
//
// A store never blocks a call for long nor fails it: after its timeout
// (store.WithTimeout, default store.DefaultTimeout, 50 ms) or an error, the
// budget decides with its local state, which follows the last state the
// store gave, reports the fallback to store.WithOnError as a store.Error
// (Layer "retry_budget" or "run_budget"), and leaves the store alone for
// store.Rest, a quarter of a second, before trying it again. While it is
// down each replica has its own bucket and counts. [Retry.TryRetryContext]
// and [Run.TakeContext] return degraded for a decision made without the
// store; the retry and hedge layers then mark the call
// (toolmw.Call.Degraded names the budget), so tracing and logging show
// it. [Retry.TryRetry] and [Run.Take] take no context, so the timeout is
// their only bound on a store's round trip; TryRetryContext and
// TakeContext are bounded by the caller's context too. A store whose state
// does not parse (store.ErrCorrupt) fails closed: no retry is lent, no
// attempt taken; it is reported, and the store is not left alone.
// Package budgettest holds memory stores and the conformance checks a
// store of your own can run.
//
// # Deadlines
//
// [Remaining] and [WaitFits] do the deadline arithmetic: a wait that would
// end at or past the context's deadline is never started, since the attempt
// after it could not finish in time.
//
// # Configuration
//
// The zero [Run] and the zero [Retry] (a fixed-ratio one) are ready to use
// with the defaults, as are [NewRun], [NewAdaptive] and [NewRetry] without
// options. An option given 0 means its
// default, except [WithRatio], where 0 is a real ratio (never refill). A
// value an option cannot use (a negative cap or reserve, a ratio outside
// [0, 1], a negative store timeout) is ignored, the default kept, so the constructors always return a
// working budget; [ValidateRun] and [ValidateRetry] report it at start-up.
// Nothing here panics.
//
// This package does not import package toolmw (which imports it): it
// marks no call itself, and returns what the caller marks. Its errors are
// plain errors; the layers turn them into typed ones
// (tool-definition-invalid/option_invalid).
package budget
