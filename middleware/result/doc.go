// Package result is the result-checking layer: what a tool returns must be
// fit to enter the run before the model sees it.
//
//	result.New()                                          // size, UTF-8, JSON if declared
//	result.New(result.WithMaxBytes(64 << 10))             // a tighter cap
//	result.New(result.WithScrub(scrub.Default()))         // and redact secrets in the content
//
// A successful result is checked, in this order, and the first violation
// fails the call with tool-result-invalid (permanent) and its own code; the
// content is dropped:
//
//   - its content is at most the size cap, [DefaultMaxBytes] (1 MiB) unless
//     [WithMaxBytes] says otherwise, counted in bytes → result_too_large;
//   - its content is valid UTF-8 → result_not_utf8;
//   - when the result says it is JSON (Result.JSON) or the tool's spec
//     declares JSON results (Spec.ResultJSON), its content is one valid JSON
//     document → result_not_json.
//
// Then, with [WithScrub], secrets and identifiers in the content are replaced
// by the scrubber's placeholders; clean content is passed on as it is. A
// placeholder that replaces a bare JSON value (a card number written as a
// JSON number, say) leaves content that is no longer JSON: the result is
// then passed on with Result.JSON cleared, as text.
//
// The tool's error passes through untouched, with whatever result came with
// it.
//
// # Configuration errors
//
// An option given a value it cannot use (a size cap below 1) is ignored and
// the default stays; [Validate] reports it as a
// tool-definition-invalid/option_invalid error at start-up.
package result
