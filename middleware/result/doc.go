// Package result is the result-checking layer: what a tool returns must be
// fit to enter the run before the model sees it.
//
//	result.New()                              // caps, UTF-8, JSON, MIME types, output schema
//	result.New(result.WithMaxBytes(64 << 10)) // a tighter cap
//
// A successful result is checked, in this order, and the first violation
// fails the call with tool-result-invalid (permanent) and its own code; the
// content is dropped.
//
// A text result (no parts) is checked as it always was:
//
//   - its content is at most the size cap, [DefaultMaxBytes] (1 MiB) unless
//     [WithMaxBytes] says otherwise, counted in bytes → result_too_large;
//   - its content is valid UTF-8 → result_not_utf8;
//   - when the result says it is JSON (Result.JSON) or the tool's spec
//     declares JSON results (Spec.ResultJSON), its content is one valid JSON
//     document → result_not_json.
//
// A result with parts (toolmw.Result.Parts(); its content, when it has one,
// is its first part, as toolmw.Result.AllParts counts):
//
//   - its size ([toolmw.Result.Size]): by default, its bytes other than
//     binary data (content, text, names, URIs, MIME types) are at most
//     [DefaultMaxBytes], as a text result's, and the whole, binary data
//     included, at most [DefaultMaxBinaryBytes] (32 MiB); [WithMaxBytes]
//     replaces both with one cap of the whole → result_too_large;
//   - each part in order: a known kind → result_part_invalid; at most
//     [WithMaxPartBytes] ([DefaultMaxPartBytes], 16 MiB) → result_too_large;
//     its text, name, URI and MIME type valid UTF-8 (never its binary data)
//     → result_not_utf8; for an image, audio, a file, or an embedded
//     resource with binary data, a MIME type on the allow-list
//     ([DefaultMIMETypes], or [WithMIMETypes]; an empty or malformed MIME
//     type is on none) → result_part_invalid; a JSON part one valid JSON
//     document → result_not_json;
//   - content beside parts, when the result or the spec says it is JSON, is
//     one valid JSON document → result_not_json. A result of parts alone is
//     held to Spec.ResultJSON by its JSON parts.
//
// So a 50 MiB image is refused by default (result_too_large), and an SVG
// (which can carry script) unless the allow-list names it.
//
// Then, when the tool's spec has an output schema (toolmw.Spec.OutputSchema:
// set by hand, or by toolmw.Wrap for a Typed tool whose output is a JSON
// object), its structured output — the content of a JSON result, and every
// JSON part — must match it → result_schema_mismatch, with value-free field
// errors of the form argument errors have (a key the schema does not
// declare shows as "*"). A result with no JSON document does not match. The
// check is bounded as argument validation is (schema.Validator): past its
// step budget the result is refused (result_schema_mismatch); when the
// call's context ends first, the error is the context's (a tool-timeout
// with code deadline_exceeded for a deadline). The schema is compiled on
// the first call that needs it, and kept.
//
// Errors name a part by its index, never by what it holds: not its MIME
// type, name, URI or text. A result that passes is returned as it is: this
// layer only checks. To scrub secrets and identifiers out of results, use
// the redact layer with redact.WithResults inside this one (nearer the
// tool), so the cap holds for what leaves the chain: a placeholder such as
// [REDACTED:github_token] can be longer than what it replaces.
//
//	toolmw.Wrap(spec, tool, result.New(), redact.New(redact.WithResults()))
//
// The tool's error passes through untouched, with whatever result came with
// it.
//
// # Configuration errors
//
// An option given 0 means its default. An option given a value it cannot
// use (a negative size cap, a MIME type pattern that is not type/subtype,
// type/* or */*) is a tool-definition-invalid/option_invalid error:
// [Validate] returns it, and [New] returns toolmw.Reject(err), so
// toolmw.Wrap reports it at start-up; nothing is silently ignored.
package result
