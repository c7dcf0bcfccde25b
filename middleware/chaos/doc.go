// Package chaos provides the chaos layer: fault injection, to rehearse
// failure. It makes a tool fail, hang, time out, panic or return a broken
// result — and a shared store fail or stall — at a rate, for the runs a
// test or a staging deployment chooses, so that an agent loop and the
// layers around its tools can be seen handling what production will one
// day send them.
//
//	stack, err := middleware.Default().InsertAfter(middleware.Classify,
//		middleware.Layer{Name: middleware.Chaos, Middleware: chaos.New(
//			chaos.WithSeed(42),
//			chaos.WithFault(chaos.Failure(taxonomy.New(taxonomy.KindRateLimited,
//				taxonomy.CodeUpstreamRateLimited, "too many requests").WithRetryAfter(time.Second)), 0.10),
//			chaos.WithFault(chaos.Latency(2*time.Second), 0.05, "search"),
//		)})
//	…
//	ctx = chaos.Enable(ctx) // this run only
//
// # Faults
//
// [WithFault] gives a fault and the share of calls it is injected into,
// for every tool or for the tools named:
//
//   - [Failure]: a typed error of any kind and code, with its retryability
//     and RetryAfter; the tool does not run;
//   - [Latency]: a delay before the tool runs; a context that ends first
//     ends the call with its error, as a tool that honours its context;
//   - [Timeout]: a wait, then the tool-timeout the timeout layer makes of
//     an attempt that outran its time (retryable only for an idempotent
//     call; an outcome that may have run); the tool does not run;
//   - [Panic]: a panic instead of the tool;
//   - [MalformedResult], [OversizedResult]: the tool runs, and a result
//     that is not UTF-8 nor JSON, or is too large, replaces its own.
//
// [WithStoreFault] and a [StoreFaults] do the same for the operations of
// the shared stores ([StoreFailure], or [Latency]: slow, or silent when
// the latency outlasts the operation's timeout), through the store ports:
// the engines' here, the layers' in package chaosstore.
//
// # Indistinguishable
//
// An injected failure is the real one it stands for: the same error
// value, kind, code, retryability and RetryAfter a tool or the timeout
// layer would return, with no mark on it. Every layer (classify, retry,
// breaker, the budgets, dedupe, the loop's ShouldRetry) treats it as it
// treats the real one, and the model is told the same. The one difference
// is a note in the call record: the layer calls toolmw.SetChaos, so
// toolmw.Call.Chaos names what was injected and the tracing layer marks
// the call's span with toolmw.chaos. Place the layer innermost (just
// inside classify, as above), where a fault reads as the tool's own; a
// timeout injected there passes the timeout layer unchanged.
//
// # Rates
//
// A rate is a share from 0 to 1 of the calls the layer is enabled for.
// The faults of one tool take disjoint shares of its calls, in the order
// given, so that a call gets at most one fault and the rates of a tool add
// up to at most 1 (past it is invalid). Each call draws a number in
// [0, 1); the fault whose share holds it is injected.
//
// A call drawn by its sequence (below) draws from a stratified sequence:
// each block of 1,024 consecutive calls of a tool visits the 1,024 strata
// of [0, 1) in a pseudo-random order, so a fault's share of any block is
// its rate to within a call or two, and over 10,000 calls within about 1%
// of the rate (TestRate: ±2% of the rate for 50 seeds). The order is
// random enough that a call after an injected one is injected at the rate,
// and runs of failures come as often as with independent draws
// (TestRunsOfFaults). A call drawn by its call id draws independently
// (a hash, splitmix64): over n calls its share is the rate within a few
// times sqrt(rate·(1−rate)/n), ±2 percentage points at 10,000 calls.
//
// # Determinism
//
// The draws depend on the seed ([WithSeed]; without one, New draws one at
// random) and on the call, never on time or scheduling:
//
//   - a call with a model's call id (toolmw.WithCallID) draws from the
//     seed, the tool, the run id, the call id and the attempt: the same
//     call gets the same fault in every run, whatever order concurrent
//     calls arrive in;
//   - a call without draws from the seed, the tool and its number among
//     the tool's enabled calls through the layer (each wrapped tool counts
//     its own): the n-th call of a tool gets the same fault in every run.
//     Under concurrency, which caller is the n-th is up to the scheduler,
//     but the sequence of faults per tool is the same.
//
// A store's operations draw from the seed, the layer, the operation and
// its number among that layer's operations of its kind.
//
// # Enabling
//
// A layer with faults injects only into the calls it is enabled for:
//
//   - [WithEnabled](true): every call (a staging deployment);
//   - [Enable](ctx): the calls made with ctx (a test, a run);
//   - [WithEnabledWhen](f): the calls f picks by run id, tool and attempt;
//
// and never into a call made with a [Disable] context, whatever the
// options say. Enable and Disable nest: the innermost wins.
//
// # What it never does
//
// It is never part of middleware.Default, and is off unless enabled: a
// layer without faults returns the tool unchanged, and one that nothing
// enables costs a function call and the load of one flag per call (about
// 2 ns, under the 5 ns BenchmarkChaosDisabled in bench/ holds it to);
// once the process has called Enable, such a layer also reads the call's
// context. A stack with a layer named middleware.Chaos says so in
// its String. It never changes the arguments, never runs a tool it made a
// call fail before (Failure, Timeout, Panic, a latency cut short), never
// leaves a goroutine or a timer behind, and never marks the errors it
// injects.
//
// # Configuration
//
// Zero and nil option values mean the defaults. An unusable value (a rate
// outside [0, 1], rates past 1 for one tool, a negative duration, the zero
// Fault, a store's fault given to WithFault) is a
// tool-definition-invalid/option_invalid error: [Validate] reports it,
// and [New] returns a toolmw.Reject middleware, so toolmw.Wrap reports it
// at start-up.
//
// # Concurrency
//
// Everything exported is safe for concurrent use: the Middleware New
// returns and the Tools it makes, a [StoreFaults] and the stores it wraps,
// [Enable] and [Disable]; a [Fault], a [Target] and an [Injection] are
// plain values. The callbacks ([WithEnabledWhen], [WithOnInject]) run on
// the caller's goroutine, possibly many at once.
package chaos
