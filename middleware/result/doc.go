// Package result is the result-checking layer: what a tool returns must be
// fit to enter the run before the model sees it.
//
//	result.New()                              // size, UTF-8, JSON if declared
//	result.New(result.WithMaxBytes(64 << 10)) // a tighter cap
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
// A result that passes is returned as it is: this layer only checks. To
// scrub secrets and identifiers out of results, use the redact layer with
// redact.WithResults inside this one (nearer the tool), so the cap holds
// for what leaves the chain: a placeholder such as [REDACTED:github_token]
// can be longer than what it replaces.
//
//	toolmw.Wrap(spec, tool, result.New(), redact.New(redact.WithResults()))
//
// The tool's error passes through untouched, with whatever result came with
// it.
//
// # Configuration errors
//
// An option given 0 means its default. An option given a value it cannot
// use (a negative size cap) is a tool-definition-invalid/option_invalid
// error: [Validate] returns it, and [New] returns toolmw.Reject(err), so
// toolmw.Wrap reports it at start-up; nothing is silently ignored.
package result
