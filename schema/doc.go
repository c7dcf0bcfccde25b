// Package schema renders the JSON Schema (2020-12) of a Go type by exactly
// the rules toolmw.Typed decodes with, checks schemas against what each
// model API accepts, and validates tool arguments against a schema.
//
// A [Schema] is rendered from the field model of the strict decoder behind
// toolmw.Typed (internal/jsonarg), so what a model is shown and what the
// decoder accepts cannot disagree: a field is required unless it is a
// pointer or tagged omitempty/omitzero; an optional field also accepts
// null; key names are encoding/json's; integers carry their type's bounds;
// a time.Time is a date-time string; a []byte a base64 string; a recursive
// type a $defs entry. A field's description is its `jsonschema` tag (its
// whole value, as the MCP Go SDK reads it) and its allowed values its
// `enum` tag (`enum:"economy,business"`), which the decoder enforces too.
// docs/schema.md lists every rule.
//
// A [Profile] is a model API's dialect: [Plain] (2020-12, what MCP
// publishes), [OpenAIStrict], [Anthropic], [Gemini]. [Schema.Render]
// renders for one; [Check] tells why an API would reject a hand-written
// schema, as a tool-definition-invalid error whose code names the reason
// (schema_ref_unsupported, schema_not_strict, …).
//
// A [Validator], made once by [Compile] from a hand-written or remote
// schema, checks each call's arguments with
// github.com/santhosh-tekuri/jsonschema/v6. Its errors are value-free
// field errors of the form Typed reports ({type, loc, msg}), built from
// the kind and location of each failure, never from the validator's
// message, which quotes the input.
//
// Everything here is safe for concurrent use.
package schema
