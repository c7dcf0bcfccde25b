// Package schema renders the JSON Schema (2020-12) of a Go type by exactly
// the rules toolmw.Typed decodes with, checks schemas against what each
// model API accepts, and validates tool arguments against a schema.
//
// A [Schema] is rendered from the field model of the strict decoder behind
// toolmw.Typed (internal/jsonarg), so what a model is shown and what the
// decoder accepts cannot disagree: a field is required unless it is a
// pointer or tagged omitempty/omitzero; an optional field also accepts
// null; key names are encoding/json's; integers narrower than 64 bits and
// float32s carry their type's bounds, unsigned integers a minimum of 0 (a
// 64-bit range informs nothing, and the decoder enforces it anyway); a
// time.Time is a date-time string; a []byte a base64 string; a recursive
// type a $defs entry (the root itself, "#", also behind a pointer). A field's description is its `jsonschema` tag (its
// whole value, as the MCP Go SDK reads it) and its allowed values its
// `enum` tag (`enum:"economy,business"`), which the decoder enforces too.
// docs/schema.md lists every rule.
//
// A [Profile] is a model API's dialect: [Plain] (2020-12, what MCP
// publishes), [OpenAIStrict], [Anthropic], [Gemini]. [Schema.Render]
// renders for one; [Check] tells why an API would reject a hand-written
// schema, as a tool-definition-invalid error whose code names the reason
// (schema_ref_unsupported, schema_not_strict, …), naming the place by its
// JSON pointer and never quoting a value of the schema; [Adapt] returns a
// hand-written schema as one API is shown it (Gemini: without a root
// $schema, and nil, no parameters, for an object without properties).
//
// A [Validator], made once by [Compile] or [CompileContext] from a
// hand-written or remote schema, checks each call's arguments with
// github.com/santhosh-tekuri/jsonschema/v6. Its errors are value-free
// field errors of the form Typed reports ({type, loc, msg}), built from
// the kind and location of each failure, never from the validator's
// message, which quotes the input.
//
// # Bounded work
//
// No schema takes long to compile, and no call long to validate. Before a
// schema is compiled (by Compile, CompileContext and Check alike) it is
// held to [MaxSchemaBytes] (256 KiB), [MaxSchemaDepth] (64 levels),
// [MaxSchemaNodes] (512 objects and booleans: compiling takes time that
// grows with the square of their number), [MaxPatternBytes] (16 KiB of
// regular expressions) and [MaxSchemaNumberLen] (numbers of at most 64
// characters and 3 exponent digits); once compiled, to [MaxExpansion]: one
// value is checked against at most 1000 schemas at one place in the
// arguments, through $ref and the combinators, and no cycle of them stays
// in place. Past any of them the schema is refused, tool-definition-invalid
// with code schema_too_costly. Then each call: the validator reads no
// context, so [Validator.ValidateContext] first counts the steps the
// validation may take, every branch of every anyOf and oneOf included,
// against [MaxValidationSteps] plus [ValidationStepsPerByte] per byte of
// arguments, and at most [MaxValidationDepth] applications nested within
// one another (args_too_costly past either); the count stops when the call's
// context ends, and a validation large enough to matter runs on its own
// goroutine, which the count bounds, while the caller stops waiting when
// its context ends. docs/schema.md lists the bounds and why.
//
// Everything here is safe for concurrent use.
package schema
