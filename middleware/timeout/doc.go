// Package timeout provides the per-attempt timeout layer.
//
//	tool := toolmw.MustWrap(spec, fn, retry.New(), timeout.New(2*time.Second))
//
// Placed inside the retry layer, it bounds each attempt; the retry layer
// then decides whether another attempt is worth making.
//
// # Semantics
//
// Each call gets a context whose deadline is d from now. A timeout never
// extends an earlier deadline of the caller: when the caller's deadline comes
// first (or at the same time), the tool is given the caller's context as is
// and no timer or context is made.
//
// By default the layer is cooperative: at the deadline the tool's context is
// cancelled and the layer waits for the tool to return. What the call then
// ends with:
//
//   - the tool returned an error after its attempt timed out (the caller's
//     context still live): tool-timeout with code timeout, wrapping the
//     tool's error. It matches context.DeadlineExceeded and
//     taxonomy.ErrTimeout, and is retryable only when the Call is
//     idempotent: a call that timed out may have had its side effect;
//   - the tool returned a result even though the deadline passed: that
//     result. The work was done and its side effect happened; throwing the
//     result away would only invite a second, duplicate call;
//   - the caller's context was cancelled: the caller's error,
//     context.Canceled, as is;
//   - the caller's deadline passed: tool-timeout with code
//     deadline_exceeded, not retryable (there is no time left to retry in);
//   - any other error: unchanged.
//
// # Abandoning a tool
//
// A tool that ignores its context would hold a cooperative call past its
// deadline. [WithAbandon] runs the tool on its own goroutine and returns at
// the deadline (or at the caller's cancel) without waiting. What the tool
// returns later is never silently dropped: it is passed to [WithOnLate],
// with the call and how late it came, and the goroutine then ends. The tool
// keeps running until it returns, so an abandoned call may still have its
// side effect, and a retry may overlap it; abandon only tools for which that
// is acceptable. In this mode a panic of the tool is re-raised in the
// caller's goroutine when the caller is still waiting, and reported as a
// late result when it was abandoned; a runtime.Goexit of the tool ends only
// its own goroutine, and the call as tool-failed/tool_exited.
//
// Abandoned executions are bounded: each holds a goroutine and whatever the
// tool holds. Any execution may be abandoned, so a call reserves a slot
// (atomically) before its execution starts and the slot is given back when
// the tool returns: at most [WithMaxAbandoned] executions (100 by default,
// per wrapped tool) run at once, awaited or abandoned, however many callers
// arrive together. While all the slots are taken, a new call is not started
// and ends at once as tool-failed/too_many_abandoned, retryable. In abandon
// mode the bound is thus also a cap on the tool's concurrent calls; set it
// above the concurrency the tool should serve.
//
// # Clock
//
// The layer reads the time and waits on its clock ([WithClock], default
// clock.System): the attempt's deadline is the clock's now plus d, it
// passes when that clock reaches it (with clock.System, by the monotonic
// clock and a timer of package time), and an abandoned call's lateness is
// measured on it. With a clock.Fake the attempt ends when the fake time is
// advanced past its deadline, and not before. The deadline is also the
// attempt context's Deadline, which code below the layer may compare with
// package time (a net.Conn, an http.Client, a context.WithTimeout of its
// own), and the caller's deadline, on package time, is compared with it:
// a fake clock should start near package time (clock.NewFake(time.Now())).
// Tests of the default clock run the layer in a testing/synctest bubble
// instead, where deadlines fire on the bubble's fake time and cost no real
// time:
//
//	synctest.Test(t, func(t *testing.T) {
//		_, err := timeout.New(2*time.Second)(slowTool)(ctx, nil) // returns at once, 2s later by time.Now
//	})
//
// # Configuration
//
// New(0) switches the layer off: it returns the tool unchanged. nil means
// the default: without WithAbandon the layer is cooperative, WithClock(nil)
// reads package time. A negative d makes New return a [toolmw.Reject]
// middleware, so toolmw.Wrap reports the
// tool-definition-invalid/option_invalid error at start-up; [Validate]
// reports the same error without wrapping anything. Nothing panics.
//
// # Concurrency
//
// Everything exported is safe for concurrent use: the Middleware [New]
// returns and the Tools it makes, an [Option], and [Validate]; a [Late] is
// a plain value.
package timeout
