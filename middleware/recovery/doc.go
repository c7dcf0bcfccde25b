// Package recovery is the panic-recovery layer: a tool that panics ends its
// own call, not the agent.
//
//	recovery.New()                                  // the panic value is dropped
//	recovery.New(recovery.WithHandler(logPanic))    // ... or handed to a debug hook
//
// A panic in the tool (or in a layer inside this one) becomes the error
// tool-failed/tool_panicked, permanent, with the fixed message "the tool
// panicked". The panic value may hold anything (arguments, tokens, a
// customer's data), so it never reaches the error, its message, its cause,
// taxonomy.InfoOf or toolmw.ForModel: it goes, with the goroutine's stack,
// only to the handler of [WithHandler], which is meant for debug logs.
//
// Each call ends with exactly one outcome: the tool's result or error, or
// the panic error. The success path costs one deferred call.
//
// panic(nil) is a panic like any other: since Go 1.21 it panics with a
// *runtime.PanicNilError, which the handler receives. (Under the legacy
// GODEBUG=panicnil=1 the handler is not called; the call still ends with the
// panic error.) runtime.Goexit is not a panic and is not stopped: the
// goroutine ends as Goexit asks, the handler is not called, and no caller
// sees an outcome.
//
// A panic raised on another goroutine the tool started cannot be recovered
// here; it still crashes the program.
package recovery
