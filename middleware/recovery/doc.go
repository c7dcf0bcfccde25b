// Package recovery is the panic-recovery layer: a tool that panics ends its
// own call, not the agent.
//
//	recovery.New()                                  // the panic value is dropped
//	recovery.New(recovery.WithOnPanic(func(ctx context.Context, e recovery.PanicEvent) {
//		slog.DebugContext(ctx, "tool panicked", "tool", e.Tool, "call_id", e.CallID,
//			"value", e.Value, "stack", e.Stack) // ... or handed to a debug hook
//	}))
//
// A panic in the tool (or in a layer inside this one) becomes the error
// tool-failed/tool_panicked, permanent, with the fixed message "the tool
// panicked". The panic value may hold anything (arguments, tokens, a
// customer's data), so it never reaches the error, its message, its cause,
// taxonomy.InfoOf or toolmw.ForModel: it goes, with the goroutine's stack
// and the call's tool name, call id and attempt, in a [PanicEvent], only to
// the function of [WithOnPanic], which is meant for debug logs.
//
// Each call ends with exactly one outcome: the tool's result or error, or
// the panic error. The success path costs one deferred call.
//
// panic(nil) is a panic like any other: since Go 1.21 it panics with a
// *runtime.PanicNilError, which WithOnPanic's function receives. (Under the legacy
// GODEBUG=panicnil=1 that function is not called; the call still ends with the
// panic error.) runtime.Goexit is not a panic and is not stopped: the
// goroutine ends as Goexit asks, that function is not called, and no caller
// sees an outcome.
//
// A panic raised on another goroutine the tool started cannot be recovered
// here; it still crashes the program.
//
// # Configuration
//
// nil means the default: New(nil) and WithOnPanic(nil) recover panics
// without a report; WithClock(nil) stamps PanicEvent.Time with
// clock.System. No option value is invalid today; [Validate] is there
// so that a start-up check treats every layer alike, and never panics.
//
// # Concurrency
//
// Everything exported is safe for concurrent use: the Middleware [New]
// returns and the Tools it makes, an [Option], and [Validate]; a
// [PanicEvent] is a plain value. WithOnPanic's function runs on the panicking call's
// goroutine, so on many goroutines at once.
package recovery
