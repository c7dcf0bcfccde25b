// Package logging writes one log line per finished tool call, with the
// error's kind and code but never its text above DEBUG, to zerolog or to
// log/slog: both are served natively, with the same lines.
//
//	logging.New(zerologLogger, opts...)  // github.com/rs/zerolog, without allocating
//	logging.NewSlog(slogLogger, opts...) // log/slog, any slog.Handler
//
// The options are the same for both, and levels are slog levels
// (slog.LevelDebug, slog.LevelInfo, …) whichever library writes the line;
// for zerolog a level below DEBUG is TRACE. It is the only toolmw package
// that imports zerolog.
//
// # Lines
//
// [New] and [NewSlog] write, when a call returns, one line with the message
// "tool call" and the fields
//
//	tool         the tool's name ("" when the context carries no toolmw.Call)
//	call_id      the model's call id (toolmw.WithCallID), left out when empty
//	outcome      ok, failed, refused (the tool said no), not_permitted, timed_out, cancelled
//	kind, code   the taxonomy kind and code, on error
//	retryable    whether the error is retryable, on error
//	attempts     the attempts made, read from the Call once the call returned, when known
//	fallback     what stood in for the tool's result (toolmw.SetFallback), when something did
//	cache        what a cache layer found (toolmw.SetCache): hit, miss or bypass, when one looked
//	degraded     the layer that fell back from its shared store to local state (toolmw.SetDegraded)
//	parts        the number of parts of a successful result with parts (toolmw.Result.AllParts)
//	part_info    the first 8 of them described, "image image/png 48213 bytes; text 12 bytes; +2 more":
//	             kind, MIME type and size only, never their text, JSON, names, URIs or bytes
//	duration_ms  the call's duration in milliseconds (fractional)
//
// Each library spells the level and the message its own way (zerolog
// "level":"info" and "message", slog "level":"INFO" and "msg", and slog
// adds "time", from the layer's clock); the other keys and values are the
// same, as TestBackendsWriteTheSameLines checks.
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
// [LevelOff] writes no line. A success is never logged above INFO nor a
// failure above ERROR (a log line never stops the program): such a level is
// an invalid option value.
//
// # Message text only at DEBUG, and scrubbed there too
//
// An error's text may hold secrets (a token in a URL, a customer's e-mail
// address): the text of an untyped error, the cause of a typed one, and even
// a typed error's own message. The line above carries identifiers and
// numbers only. The error's text goes on a second line, "tool call error
// detail", written at DEBUG only, with the fields tool, call_id (left out
// when empty), code, error (err.Error()) and cause (the text of the typed
// error's cause, when it has one). Both texts are scrubbed first, with the
// default scrubber of package scrub or the one [WithScrubber] sets, so no
// line at any level holds a secret the scrubber knows; a logger made the
// usual way (zerolog.New(w) is at DEBUG) shows "[REDACTED:github_token]"
// where the token was. Enable DEBUG only where the rest of the text may be
// read.
//
// A test parses this package's source with go/ast and fails when a zerolog
// event or a slog record that may be written above DEBUG gets an error, a
// field whose key names text (message, error, cause, …), a slog attribute
// that could hold any value (slog.Any, slog.Group, a key-value pair), a
// non-constant message, or a value that mentions Error, Message, Unwrap,
// Cause, Fields, fmt or errors; the rule is stated precisely in
// rule_test.go. Canary tests plant secrets in every way a tool can fail and
// check, for both libraries, that none appears at any level.
//
// # Options
//
// One configuration rule, as everywhere in toolmw: nil or zero means the
// default (a nil Option, WithClock(nil), WithScrubber(nil)); an invalid
// value (a level out of range, a malformed kind) is a tool-definition-invalid
// error with code option_invalid, reported by [Validate] and by toolmw.Wrap:
// New and NewSlog then return toolmw.Reject(err), never panic.
// middleware.Validate reports it for the default stack too.
//
// # Cost
//
// With a zerolog logger whose level is above ERROR, such as zerolog.Nop(),
// or a slog logger on slog.DiscardHandler, the constructors return the tool
// unchanged; with zerolog's global level above ERROR a call costs one
// atomic load. Otherwise a call that writes nothing costs a clock reading
// and, with slog, a call of the handler's Enabled. zerolog writes a line
// without allocating (the description of a result's parts, part_info, is
// made for the line); slog's JSON handler allocates a few times per line.
// bench/logging_test.go measures the two side by side.
//
// A panic passing through the layer is logged as tool-failed/tool_panicked
// at ERROR (without the panic value) and goes on.
//
// # Concurrency
//
// Options, the Middleware the constructors return and the Tools it makes
// are safe for concurrent use; the zerolog writer or the slog handler must
// be too, as each library requires.
package logging
