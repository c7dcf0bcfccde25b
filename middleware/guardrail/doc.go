// Package guardrail provides the guardrail layer: named checks over a
// call's arguments, before the tool runs, and over its result, after it,
// any of which can block the call.
//
//	mw := guardrail.New(
//		guardrail.Args("no_card_numbers", noCardNumbers),   // before the call
//		guardrail.ArgStrings("no_emails", noEmails),         // each string of the arguments
//		guardrail.Result("no_internal_urls", noInternalURLs), // after it
//	)
//
// A check returns nil to let the call go on and an error to block it. A
// blocked call ends as guardrail-blocked, not retryable and final, with
// the guardrail's name in the error's record (InfoOf(err).Guardrail):
//
//   - guardrail_args: an argument guardrail blocked the call before the
//     tool ran; nothing ran.
//   - guardrail_result: a result guardrail blocked what the tool returned.
//     The tool DID run — whatever it does happened — and its result does
//     not enter the run: the model is told the guardrail blocked it, and
//     the content is withheld. It is not retried: running the tool again
//     would act again.
//
// Argument guardrails run in the order given, then the tool, then the
// result guardrails in the order given; the first that blocks ends the
// call. Result guardrails see only successes: a failure is returned as it
// is.
//
// # Checks read decoded content
//
// The arguments are attacker-controlled: a model (or whoever steers it)
// can write "4556" as "\u0034556", a key as "te\u0078t". A check never
// has to undo that. The layer reads the arguments once, and an [ArgsCheck]
// gets them as JSON with every string decoded, keys and values at any
// depth (no \uXXXX or \/ escape, no white space between tokens; only what
// JSON must escape stays escaped, in one form: \" \\ \b \f \n \r \t and
// \u00xx). A [ResultCheck] gets a JSON result the same way. [ArgStrings]
// and [ResultStrings] give a check each string on its own, decoded (every
// key and string value, every number as written, a text result whole), so
// a tab or a newline inside a value reaches it as itself. The tool gets the
// arguments as they were sent, and the run the tool's own result.
//
// A result's parts are read too. A ResultCheck gets each JSON part's
// document decoded as a JSON result's; ResultStrings gives each string of
// each part on its own: a text part's and an embedded resource's text
// whole, a JSON part's keys, strings and numbers decoded, and each part's
// name and URI, which the model is shown too. The bytes of an image, audio
// or a file are not text and are not given; the result layer bounds them
// and checks their MIME types.
//
// # Bounded work
//
// Reading is one pass, linear in the arguments' size, with no backtracking.
// Arguments over the spec's size cap (toolmw.Spec.MaxArgsBytes, 1 MiB by
// default) end the call unread as tool-args-invalid/args_too_large, as
// toolmw.Wrap would end it; arguments that are not JSON, or nest deeper
// than [MaxDepth] (256) levels, end as tool-args-invalid/args_invalid
// (json_invalid, too_deep): no check runs on content the layer cannot
// read, and the tool does not run. A JSON result that does not parse is
// read as text.
//
// # Nothing of the content leaks
//
// A guardrail's error message is fixed, made from its name alone ("the
// guardrail no_card_numbers blocked the call's arguments; nothing ran"),
// and names follow the rule of codes ([taxonomy.ValidCode]): a name says
// what is checked, it never quotes content. The check's own error often
// quotes what it found; it is not the blocked call's cause — the logging
// layer writes causes on its DEBUG line — and it reaches no span, log line,
// event, metric or the model. It goes only to the debug hook
// [WithOnBlock], with the panic value of a check that panicked.
//
// # Failing closed
//
// A check that panics blocks the call (the same kind and code; the hook
// gets the panic value): a guardrail that cannot decide never lets content
// through. A check that returns an error because the call's context ended
// (its error is, or wraps, the context's error while the context is done)
// ends the call as that cancellation — context.Canceled as is — or as
// tool-timeout/deadline_exceeded, not as a block; the check's error is
// dropped either way.
//
// # Not a permission
//
// The permit layer decides whether a call may run at all, from who and
// what is called (tool-not-permitted); a guardrail judges the content of
// the arguments and the result (guardrail-blocked). A loop tells the model
// different things: "not allowed" against "not with this content".
//
// # Where it sits
//
// Outside retry, so arguments are checked once per call, a blocked call is
// never retried, and the result checked is the call's final one; inside
// the observers, so a block is traced, logged and reported as the call's
// outcome; the tracing layer reads the guardrail's name and stage from the
// blocked call's error and adds the OpenTelemetry GenAI conventions'
// gen_ai.guardrail.result event to the call's span (this package imports
// no OpenTelemetry):
//
//	stack, err := middleware.Default().InsertBefore(middleware.Retry,
//		middleware.Layer{Name: middleware.Guardrail, Middleware: guardrail.New(guardrail.Args("no_card_numbers", noCards))})
//
// Results reach it after the redact layer (inside retry, near the tool):
// with redact.WithResults a result guardrail sees scrubbed content. It is
// not in middleware.Default: the checks are the application's.
//
// # Configuration
//
// New without guardrails switches the layer off (it returns the tool
// unchanged). A malformed or repeated name or a nil check makes New return
// a [toolmw.Reject] middleware, so toolmw.Wrap reports the
// tool-definition-invalid/option_invalid error at start-up; [Validate]
// reports the same error. WithOnBlock(nil) is the default, no hook.
//
// # Concurrency
//
// The Middleware, the Tools it makes, an [Option] and [Validate] are safe
// for concurrent use; the layer keeps no state between calls. Checks and
// the hook run on the call's goroutine and must be safe for concurrent
// use.
package guardrail
