// Package breaker is the circuit-breaking layer: when a tool's dependency
// keeps failing, calls fail fast with a circuit-open error instead of
// waiting on a dead upstream, and after a pause one trial call (a probe)
// decides whether the dependency is back.
//
//	breaker.New()                                     // one breaker per tool
//	breaker.New(breaker.WithOpenFor(time.Minute))     // a longer pause
//	breaker.New(breaker.WithShared(payments))         // one breaker for every tool it wraps
//	breaker.New(breaker.WithKey(upstreamOf))          // one breaker per upstream
//	breaker.New(breaker.WithOnStateChange(func(e breaker.StateChangeEvent) {
//		log.Printf("breaker %s: %v -> %v", e.Name, e.From, e.To)
//	}))
//
// The layer is built on github.com/sony/gobreaker/v2, which never shows in
// its API: [State], [Counts] and [StateChangeEvent] are the package's own.
// A closed breaker with no failure since its last success cannot change on
// a success: with the default trip rule (and no [WithInterval]) such calls
// skip gobreaker's lock and clock reads, and only a fault is handed to it,
// so that a healthy tool's calls do not queue on one lock. The states,
// counts and RetryAfter are the same as with every call through gobreaker
// (a test replays random outcomes through both and compares them).
//
// # Defaults
//
// A breaker opens after 5 consecutive failures ([DefaultConsecutiveFailures];
// or use [WithFailureRatio]) that are not a fluke: at least 3 in 4 of the
// last 20 counted calls must have failed. A dead dependency fails every call
// and opens it after the 5; a dependency failing 20% of calls independently
// makes an occasional run of 5 failures, which must not black the tool out
// for a whole open period (the retry layer and its budget handle those). It
// stays open for 30 seconds ([DefaultOpenFor]),
// then lets 1 probe through ([DefaultProbes]); the probe's success closes it,
// its failure opens it again for another open period.
//
// # What counts as a failure
//
// Only dependency faults count against a breaker; see [IsFailure]:
//
//   - tool-failed, with any code and either retryability (an unavailable,
//     erroring or panicking dependency, an unmapped failure), except
//     upstream_bad_request: the dependency answered that the request was
//     malformed, which is the caller's fault;
//   - tool-timeout (a per-attempt timeout, or a timeout the dependency or
//     the network reported);
//   - an untyped error: nobody has said what it means, so it is treated as
//     the unmapped failure it would be classified as;
//   - a panic of the tool (gobreaker records it, and the panic goes on).
//
// Everything else is neutral: it neither counts as a failure nor as a
// success, so it never trips the breaker and never closes it. These are
// answers, not faults: tool-refused, tool-args-invalid, tool-not-permitted,
// tool-not-found, tool-result-invalid (the dependency answered; what it said
// is unfit), rate-limited (a local limiter's decision, or the dependency
// asking to slow down, which the retry layer honours through RetryAfter
// without blacking the tool out for an open period), circuit-open (an inner
// breaker's decision), retry-budget-exhausted, run-limit-exceeded,
// tool-definition-invalid and any kind this package does not know.
//
// Cancellation is always neutral: an error that is or wraps
// context.Canceled, and any error returned once the call's context is done
// (the caller cancelled or its own deadline passed, which says nothing about
// the dependency). A slow dependency trips the breaker through the timeout
// layer's per-attempt timeout, which ends inside the breaker while the
// caller's context is still live.
//
// [WithIsFailure] replaces the rule; cancellation stays neutral.
//
// # Errors
//
// An open breaker fails a call at once with circuit-open/circuit_open,
// retryable, with RetryAfter the time left until the breaker lets a probe
// through. A half-open breaker whose probes are all in flight fails a call
// with circuit-open/circuit_half_open, retryable, without a RetryAfter hint
// (the probe's outcome decides). Both wrap the gobreaker error
// (gobreaker.ErrOpenState, gobreaker.ErrTooManyRequests) as their cause.
//
// # Time
//
// gobreaker measures the open period with package time (time.Now) and cannot
// be given another clock. A breaker half-opens exactly [WithOpenFor] after
// it opened, when the RetryAfter of its circuit-open errors says. The clock
// of [WithClock] stamps state changes, records when a breaker opened and
// computes RetryAfter; a fake clock therefore drives RetryAfter but not the
// open period. Tests drive both with testing/synctest, whose fake time is
// what time.Now returns inside a bubble:
//
//	synctest.Test(t, func(t *testing.T) {
//		// ... trip the breaker ...
//		time.Sleep(breaker.DefaultOpenFor) // instant: the bubble's clock moves
//		// ... the next call is the probe ...
//	})
//
// # State changes
//
// [WithOnStateChange] observes every transition as a [StateChangeEvent]:
// the breaker's name, the states it left and entered, the counts that
// decided the change and its time. gobreaker reports a transition while
// holding its own lock; the breaker queues it and delivers it, in order,
// once gobreaker has returned, so the callback never runs under a lock and
// may call back into the breaker (for example [Breaker.State]). A
// transition is delivered by the goroutine of the call (or of the State
// call) that caused it, or that comes next.
//
// # Keys
//
// [WithKey] keeps one breaker per key, made on the key's first use. At most
// [DefaultMaxKeys] keys are kept ([WithMaxKeys]); a new key beyond the bound
// drops the key used least recently, whose breaker starts closed again on
// its next use.
//
// # Across replicas
//
// [WithStore] keeps a breaker's state in a [Store] shared by a fleet
// (adapters/redisstate has one on Redis): per name, the consecutive failures,
// the state, when the open period ends, and the probe lease.
//
//	breaker.New(breaker.WithStore(shared.Breakers()))
//
// No lock is held across a tool call: a replica reads the shared state
// before a call and caches it for [WithCachePeriod] (1 s by default), and
// reports the outcome after the call. A closed breaker with no failure
// costs one read per cache period and nothing per call; a fault costs one
// write, which may open the breaker for the fleet; an outage seen by one
// replica therefore opens the breaker on all within one cache period. An
// open breaker refuses calls with circuit-open, RetryAfter the time left of
// the shared open period, without asking the Store. Once it ends, exactly
// one replica takes the probe lease (atomically, with a TTL: the probe's
// deadline plus the store timeout, or the open period when it has none, so
// that a probe whose replica dies frees it); the others' calls fail with
// circuit_half_open until the probe reports. With [WithProbes] n, probes
// run one at a time and n successes in a row close the breaker. The
// fluke rule of
// [WithConsecutiveFailures] is judged by the replica that reports the
// fault, on its own recent calls; successes are shared only when the
// cached state counts failures, so failures on several replicas count as
// consecutive if no reported success came between them.
//
// WithStore takes the options of package store after the Store:
//
//	breaker.WithStore(shared.Breakers(), store.WithTimeout(100*time.Millisecond),
//		store.WithOnError(func(e store.Error) { storeErrors.Add(ctx, 1) }))
//
// When the Store fails or does not answer within its timeout
// (store.WithTimeout, store.DefaultTimeout by default, bounded by the
// call's deadline), the call goes through the replica's local in-process
// breaker instead (fail open) and is marked degraded
// (toolmw.Call.Degraded is "breaker"), the failure is reported to
// store.WithOnError as a store.Error (Layer "breaker"; Op "load",
// "acquire" or "report", the Store's method, and "load" for a call decided
// while the Store rests; Key the breaker's name), and the Store is left
// alone for store.Rest before it is asked again; once it answers, the
// shared state decides again. A Store's state that does not parse (an
// error wrapping store.ErrCorrupt) is such a failure too. A call is never
// failed, nor delayed past the store timeout, because of the Store.
// [Breaker.State] then reports the shared state as the replica last saw
// it, and [WithOnStateChange] the changes it sees.
// Package breakertest has an in-memory Store for tests and the conformance
// checks every Store runs.
//
// # Configuration errors
//
// Zero and nil mean the default: WithOpenFor(0) is the 30 s default,
// WithIsFailure(nil) is [IsFailure], WithShared(nil) a breaker per tool. A
// value an option cannot use (a negative duration or count, a ratio outside
// [0, 1], an invalid store option given to WithStore) makes [New] return a [toolmw.Reject] middleware, so toolmw.Wrap
// reports the tool-definition-invalid/option_invalid error at start-up and
// the mistake is never silently ignored; [Validate] reports the same error
// without wrapping anything. [NewBreaker] keeps the default for such a
// value and remembers the error: New with WithShared of that breaker is a
// Reject too. Nothing panics.
//
// # Concurrency
//
// Everything exported is safe for concurrent use: a [Breaker], the
// Middleware [New] returns and the Tools it makes, an [Option], [IsFailure]
// and [Validate]. [State], [Counts] and [StateChangeEvent] are plain values.
package breaker
