// Package logging writes one zerolog line per finished tool call, with the
// error's kind and code but never its text above DEBUG.
//
// It is the only toolmw package that imports zerolog.
//
// # Lines
//
// [New] writes, when a call returns, one line with the message "tool call"
// and the fields
//
//	tool         the tool's name ("" when the context carries no toolmw.Call)
//	call_id      the model's call id, when known (toolmw.WithCallID)
//	outcome      ok, failed, declined (the tool refused), refused (not permitted), timed_out, cancelled
//	kind, code   the taxonomy kind and code, on error
//	retryable    whether the error is retryable, on error
//	attempts     the attempts made, read from the Call once the call returned, when known
//	duration_ms  the call's duration in milliseconds (fractional)
//
// A success is written at DEBUG ([WithSuccessLevel] for INFO). A failure is
// written at the level [DefaultLevel] gives its kind, or the one
// [WithLevel] sets:
//
//   - INFO: a refusal and a cancellation. They are answers and the caller's
//     own decisions, not faults.
//   - WARN: what is expected to pass or is the model's or a policy's doing:
//     retryable failures, timeouts, an open circuit, rate limits, exhausted
//     retry budgets and run limits, permission denials, invalid arguments,
//     unknown tools.
//   - ERROR: what someone has to fix: permanent failures (an unmapped error,
//     a panic), invalid results, definition errors.
//
// # Message text only at DEBUG
//
// An error's text may hold secrets (a token in a URL, a customer's e-mail
// address): the text of an untyped error, the cause of a typed one, and even
// a typed error's own message. The line above carries identifiers and
// numbers only. The error's text goes on a second line, "tool call error
// detail", written at DEBUG only, with the fields tool, call_id, code, error
// (err.Error()) and cause (the text of the typed error's cause, when it has
// one). Enable DEBUG only where those may be read.
//
// A test parses this package's source with go/ast and fails when an event
// that may be written above DEBUG gets an error, a field whose key names
// text (message, error, cause, …), a non-constant message, or a value that
// mentions Error, Message, Unwrap, Cause, Fields, fmt or errors; the rule is
// stated precisely in rule_test.go.
//
// # Cost
//
// With a logger whose level is above ERROR, such as zerolog.Nop(), New
// returns the tool unchanged; with the global level above ERROR a call
// costs one atomic load. Otherwise a call that writes nothing costs two
// clock readings.
//
// A panic passing through the layer is logged as tool-failed/tool_panicked
// at ERROR (without the panic value) and goes on.
package logging
