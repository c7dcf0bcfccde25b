package jsonarg

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"

	"github.com/toolmw/toolmw/taxonomy"
)

// MaxFieldErrors caps how many field errors one call reports: enough to fix
// a call in one round, few enough to keep the error small.
const MaxFieldErrors = 20

// maxLocKey caps the length of an object key echoed in a loc: keys come from
// the model and may be long.
const maxLocKey = 64

// Model is the field model of one Go type, built by [For]. It is immutable
// and safe for concurrent use.
type Model struct {
	root *schema
}

// For returns the field model of t. Build it once per type, not per call.
func For(t reflect.Type) *Model {
	return &Model{root: schemaOf(t)}
}

// Decode checks args against m and, when they fit, decodes them into dst, a
// pointer to a value of m's type. Empty or blank args stand for {}.
//
// Invalid JSON, data after the first JSON value, object keys that match no
// field (exactly, case-sensitively), values of the wrong type or out of
// range, and missing required fields are each a taxonomy.FieldError of the
// tool-args-invalid error returned, all of them at once up to a cap of
// [MaxFieldErrors].
func (m *Model) Decode(args []byte, dst any) error {
	return decodeStrict(args, m.root, dst)
}

func decodeStrict(args []byte, sch *schema, dst any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "json_invalid", Loc: []any{}, Msg: "Input is not valid JSON"})
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "trailing_data", Loc: []any{}, Msg: "Input has data after the JSON value"})
	}
	var c checker
	c.check(sch, v)
	if len(c.errs) > 0 {
		return taxonomy.ArgsInvalid(c.errs...)
	}
	if err := json.Unmarshal(args, dst); err != nil {
		// The walk above accepts only what encoding/json decodes; reaching
		// here means a case it does not model.
		return taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "value_error", Loc: []any{}, Msg: "Input could not be decoded"})
	}
	return nil
}
