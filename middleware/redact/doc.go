// Package redact is the scrubbing layer: it scrubs the messages of the
// typed errors tool authors make, and optionally the results, so a card
// number or a token a tool put in its own words never reaches a span, a log,
// an event or the model.
//
//	redact.New()                                  // scrub.Default(), error messages only
//	redact.New(redact.WithKeyedHash(key))         // identifiers as stable pseudonyms
//	redact.New(redact.WithResults())              // ... and the results' content
//
// A tool author writes
//
//	return toolmw.Result{}, taxonomy.Refusal("card_declined", "card 4111 1111 1111 1111 declined")
//
// and the layer returns the same refusal with the message
// "card [REDACTED:card] declined": kind, code, tool, retryability,
// retry-after, field errors and cause are kept. With [WithKeyedHash] the
// card reads [REDACTED:card:1a2b3c4d], the same for the same value, so a
// reader can tell two customers apart without learning who they are.
//
// # What is rebuilt
//
//   - A *taxonomy.ToolError returned as it is: a copy with the scrubbed
//     message (and scrubbed field-error messages); its cause is unchanged.
//   - A typed error inside another error (fmt.Errorf("charging: %w", typed)),
//     or a typed error of another implementation of taxonomy.Error: when its
//     message or the text of the whole error needs scrubbing, the layer
//     returns a new *taxonomy.ToolError equal to the typed error
//     (taxonomy.InfoOf(err).Err()) with the scrubbed message, wrapping the
//     whole original error. The wrappers' text cannot be rebuilt scrubbed, so
//     it is dropped from Error(); errors.Is and errors.As still reach every
//     link. When nothing needs scrubbing the error is returned unchanged.
//   - An untyped error, including a cancellation, is returned unchanged: its
//     text is withheld by taxonomy.InfoOf and toolmw.ForModel, and the
//     classify layer translates it.
//
// The layer scrubs what tool authors wrote. Put it outside classify, whose
// map already scrubs what it makes, and inside the layers that report errors
// (tracing, logging, events).
//
// [WithResults] scrubs the result's Content too. A JSON result that is no
// longer valid JSON after scrubbing (a placeholder in place of a bare JSON
// value, such as a card number written as a number) is returned with JSON
// false, never unscrubbed.
//
// A result's parts follow the same switch. With [WithResults] the layer
// scrubs a text part's text and an embedded resource's text; a JSON part's
// strings, keys and values at any depth, keeping it valid JSON (each value
// read beside its key, so "password": "hunter2" is caught; a placeholder in
// place of a bare number becomes a JSON string, and the document is then
// rewritten compact); every part's name, URI, MIME type and annotations;
// and a kind the tool made up (not one of toolmw's), which is its text. It never reads the bytes of an image, audio, a file or a
// binary resource (Part.Data): they are the tool's binary output, which no
// text scrubber can read, and they reach the client as the tool made them.
// A tool that may put a secret in an image must not. Clean parts are
// returned as they are, the same slice; otherwise the result gets a new
// slice and the tool's is not changed.
//
// # The tool's session
//
// What a tool sends the client through the call's toolmw.Session
// (toolmw.ReportProgress, LogToClient, Elicit, Sample) goes from the tool
// out, as an error message does, and is scrubbed always, with or without
// [WithResults]: a progress message, a log line's logger name and data (a
// string as text, any other value encoded as JSON and scrubbed as a JSON
// part is, then passed on as a json.RawMessage), an elicitation's message
// (its schema is the tool's form and is sent as it is), and a sampling
// request's system prompt and messages. What comes back, the user's answer
// or the client model's completion, is returned as it is. Log data that does
// not encode as JSON is not sent; the tool gets an error. Without a Session
// in the context the tool gets the caller's context unchanged.
//
// This layer is the one place results are scrubbed; the result layer only
// checks them. Used together, put result inside redact: the tool's own
// output is checked (size, UTF-8, JSON), then scrubbed on its way out, so a
// redaction is never mistaken for a broken result.
//
// # Configuration errors
//
// A nil scrubber means the default, scrub.Default(). An option given a
// value it cannot use is a tool-definition-invalid/option_invalid error:
// [Validate] returns it, and [New] returns toolmw.Reject(err), so
// toolmw.Wrap reports it at start-up. A Scrubber comes from scrub.New,
// which returns a bad scrub option (an unknown family, a bad pattern) as
// its error rather than panicking.
//
// The success path without [WithResults] costs a look-up of the context's
// Session and a nil check: no allocation without a Session; with one, the
// wrapper and its context.
// Clean messages and results are returned as they are, without allocating.
package redact
