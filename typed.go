package toolmw

import (
	"context"
	"encoding"
	"encoding/json"
	"reflect"
	"sync"

	"github.com/toolmw/toolmw/internal/jsonarg"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

// DefaultMaxArgsBytes is the size cap on a call's arguments when
// [Spec.MaxArgsBytes] is zero, and of a Typed tool called without [Wrap]:
// 1 MiB. Longer arguments are rejected before they are read
// (tool-args-invalid, code args_too_large).
const DefaultMaxArgsBytes = jsonarg.DefaultMaxBytes

// Typed turns fn into a Tool that decodes its arguments strictly into In and
// encodes Out as the result.
//
// The arguments are read once, checked and decoded in the same pass.
// Invalid JSON, data after the value, object keys that match no field
// (exactly, case-sensitively), duplicate keys (also two keys of one
// object, at any depth, equal under Unicode simple case folding, such as
// "to" and "TO": encoding/json, which matches keys to struct fields that
// way, would read whichever came last), strings that are not valid
// UTF-8, values of the wrong type or out of range, values outside a field's
// enum and missing required fields are each reported as a
// [taxonomy.FieldError] of a tool-args-invalid error, all of them at once
// (up to 20), each with its location (["items", 2, "qty"]). The errors
// never contain the input: not its values, nor its keys: a key that is not
// one of the struct's own field names (a map key, an unknown key) appears
// in a location as "*". Arguments over the size cap ([DefaultMaxArgsBytes],
// or the spec's [Spec.MaxArgsBytes] under Wrap) are rejected unread with
// code args_too_large; a nil context is a tool-failed error with code
// context_nil.
//
// A struct field is required unless it is a pointer, or its json tag says
// omitempty or omitzero; an optional field also accepts null, which leaves
// it unset. Fields follow encoding/json's naming (the json tag, else the Go
// name, and its rules for embedded structs); "-" fields are ignored. A
// field JSON cannot set — a func, a chan, a complex number, a non-empty
// interface, a map whose keys JSON cannot spell, a field with the ",string"
// option — is not in the schema and takes no value, not even null
// (unsupported). JSON null is also accepted for pointers, slices, maps,
// empty interfaces and types with their own UnmarshalJSON. An integer field takes any number whose value is an
// integer in its range (2, 2.0 or 2e0). Types implementing json.Unmarshaler
// or encoding.TextUnmarshaler decode themselves; their errors are reported
// as value_error at their location. The full rules, and the bounds every
// number meets, are in docs/schema.md.
//
// The Tool carries the JSON Schema of In, rendered by package schema from
// the same rules: [Wrap] fills [Spec.InputSchema] with it, and a [Toolbox]
// lists it per model API. Descriptions come from a field's `jsonschema` tag
// (its whole value, as the MCP Go SDK reads it) and allowed values from its
// `enum` tag (`enum:"economy,business"`), which the decoder enforces too.
//
// A string Out is passed as text; a [Result] as is; a json.RawMessage as a
// JSON result; anything else is encoded with encoding/json as a JSON
// result, whose decoded value [Result.Structured] returns. When Out is a
// JSON object type — a struct, or a map with string keys, or a pointer to
// one, that does not encode itself (json.Marshaler,
// encoding.TextMarshaler) — the Tool also carries the JSON Schema of Out,
// rendered by the same rules: [Wrap] fills [Spec.OutputSchema] with it, a
// [Toolbox] lists it per model API, and the result layer checks results
// against it. A nil pointer or nil map Out encodes as null, which is no
// object: the result layer refuses it. The Tool is safe for concurrent use
// when fn is.
func Typed[In, Out any](fn func(ctx context.Context, in In) (Out, error)) Tool {
	t := &typed[In, Out]{fn: fn, model: jsonarg.For(reflect.TypeFor[In]())}
	tool := t.bind(DefaultMaxArgsBytes)
	typedCodes.Store(reflect.ValueOf(tool).Pointer(), struct{}{})
	return tool
}

// typed is the state of a Typed tool, shared by the Tools bound to it with
// different size caps.
type typed[In, Out any] struct {
	fn     func(ctx context.Context, in In) (Out, error)
	model  *jsonarg.Model
	once   sync.Once
	schema *schema.Schema
	outOne sync.Once
	out    *schema.Schema // nil when Out is not a JSON object type
}

// bind returns the Tool of t with the size cap maxBytes.
func (t *typed[In, Out]) bind(maxBytes int) Tool {
	return func(ctx context.Context, args json.RawMessage) (Result, error) {
		if len(args) == len(probeArgs) && len(args) > 0 && &args[0] == &probeArgs[0] {
			return Result{}, &probeReply{t}
		}
		if ctx == nil {
			return Result{}, errNilContext
		}
		var in In
		if err := t.model.DecodeValue(args, reflect.ValueOf(&in).Elem(), maxBytes); err != nil {
			return Result{}, err
		}
		out, err := t.fn(ctx, in)
		if err != nil {
			return Result{}, err
		}
		return encodeOut(out)
	}
}

func (t *typed[In, Out]) inputSchema() *schema.Schema {
	t.once.Do(func() { t.schema = schema.Of(reflect.TypeFor[In]()) })
	return t.schema
}

func (t *typed[In, Out]) outputSchema() *schema.Schema {
	t.outOne.Do(func() {
		if typ := reflect.TypeFor[Out](); objectType(typ) {
			t.out = schema.Of(typ)
		}
	})
	return t.out
}

// objectType reports whether values of t encode as JSON objects by the
// rules the schema renders: a struct or a map with string keys, or a
// pointer to one, that does not encode itself (json.Marshaler,
// encoding.TextMarshaler), and is not a [Result].
func objectType(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[Result]() || encodesItself(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Struct:
		return true
	case reflect.Map:
		return t.Key().Kind() == reflect.String && !encodesItself(t.Key())
	}
	return false
}

// encodesItself reports whether t, or a pointer to it, has its own JSON or
// text encoding.
func encodesItself(t reflect.Type) bool {
	marshaler := reflect.TypeFor[json.Marshaler]()
	text := reflect.TypeFor[encoding.TextMarshaler]()
	p := reflect.PointerTo(t)
	return t.Implements(marshaler) || p.Implements(marshaler) || t.Implements(text) || p.Implements(text)
}

// typedTool is what Wrap learns of a Typed tool.
type typedTool interface {
	inputSchema() *schema.Schema
	outputSchema() *schema.Schema
	bind(maxBytes int) Tool
}

// Wrap recognises a Typed tool by its code pointer (registered here by
// Typed), then asks it for its state by calling it with probeArgs, which a
// Typed tool answers without decoding or running anything. No other tool
// is ever called with probeArgs.
var (
	typedCodes sync.Map // code pointer of a Typed tool → struct{}
	probeArgs  = json.RawMessage(`{"toolmw":"probe"}`)
)

type probeReply struct{ t typedTool }

func (*probeReply) Error() string { return "toolmw: typed tool probe" }

// typedOf returns the state of tool when Typed made it.
func typedOf(tool Tool) (typedTool, bool) {
	if tool == nil {
		return nil, false
	}
	if _, ok := typedCodes.Load(reflect.ValueOf(tool).Pointer()); !ok {
		return nil, false
	}
	_, err := tool(context.Background(), probeArgs)
	if p, ok := err.(*probeReply); ok {
		return p.t, true
	}
	return nil, false
}

// InputSchemaOf returns the input schema of a tool made by [Typed], from
// which any profile's rendering is made ([schema.Schema.Render]), and
// false for any other tool (a Tool wrapped by a middleware included).
func InputSchemaOf(tool Tool) (*schema.Schema, bool) {
	t, ok := typedOf(tool)
	if !ok {
		return nil, false
	}
	return t.inputSchema(), true
}

// OutputSchemaOf returns the output schema of a tool made by [Typed] whose
// output type is a JSON object (a struct, or a map with string keys, or a
// pointer to one, that does not encode itself), and false for any other
// tool: another output type, a Tool wrapped by a middleware.
func OutputSchemaOf(tool Tool) (*schema.Schema, bool) {
	t, ok := typedOf(tool)
	if !ok || t.outputSchema() == nil {
		return nil, false
	}
	return t.outputSchema(), true
}

var errNilContext = taxonomy.New(taxonomy.KindFailed, taxonomy.CodeContextNil, "the tool was called with a nil context")

func encodeOut(out any) (Result, error) {
	switch v := out.(type) {
	case string:
		return Text(v), nil
	case Result:
		return v, nil
	case json.RawMessage:
		if !json.Valid(v) {
			return Result{}, taxonomy.ResultInvalid(taxonomy.CodeResultNotJSON, "the tool's output is not valid JSON")
		}
		return Result{Content: string(v), JSON: true}, nil
	}
	return JSON(out)
}
