package toolmw

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/toolmw/toolmw/internal/jsonarg"
	"github.com/toolmw/toolmw/taxonomy"
)

// Typed turns fn into a Tool that decodes its arguments strictly into In and
// encodes Out as the result.
//
// Decoding is strict: invalid JSON, data after the first JSON value, object
// keys that match no field (exactly, case-sensitively), values of the wrong
// type or out of range, and missing required fields are each reported as a
// [taxonomy.FieldError] of a tool-args-invalid error, all of them at once (up
// to 20), each with its location (["items", 2, "qty"]). The errors never
// contain the input values, so they are safe to log and to show the model;
// an object key in a location is cut to 64 bytes.
//
// A struct field is required unless it is a pointer, or its json tag says
// omitempty or omitzero. Fields follow encoding/json's naming (the json tag,
// else the Go name); "-" fields are ignored. JSON null is accepted only for
// pointers, slices, maps, interfaces and types with their own UnmarshalJSON.
// Types implementing json.Unmarshaler or encoding.TextUnmarshaler decode
// themselves; their errors are reported as value_error at their location.
//
// A string Out is passed as text; a [Result] as is; a json.RawMessage as a
// JSON result; anything else is encoded with encoding/json.
func Typed[In, Out any](fn func(ctx context.Context, in In) (Out, error)) Tool {
	model := jsonarg.For(reflect.TypeFor[In]())
	return func(ctx context.Context, args json.RawMessage) (Result, error) {
		var in In
		if err := model.Decode(args, &in); err != nil {
			return Result{}, err
		}
		out, err := fn(ctx, in)
		if err != nil {
			return Result{}, err
		}
		return encodeOut(out)
	}
}

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
