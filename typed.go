package toolmw

import (
	"bytes"
	"context"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/toolmw/toolmw/taxonomy"
)

// Typed turns fn into a Tool that decodes its arguments strictly into In and
// encodes Out as the result.
//
// Decoding is strict: invalid JSON, data after the first JSON value, object
// keys that match no field (exactly, case-sensitively), values of the wrong
// type or out of range, and missing required fields are each reported as a
// [taxonomy.FieldError] of a tool-args-invalid error, all of them at once, each
// with its location (["items", 2, "qty"]). The errors never contain the input
// values, so they are safe to log and to show the model.
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
	sch := schemaOf(reflect.TypeFor[In]())
	return func(ctx context.Context, args json.RawMessage) (Result, error) {
		var in In
		if err := decodeStrict(args, sch, &in); err != nil {
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

// maxFieldErrors caps how many field errors one call reports.
const maxFieldErrors = 20

// maxLocKey caps the length of an object key echoed in a loc.
const maxLocKey = 64

func decodeStrict(args json.RawMessage, sch *schema, dst any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
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

type schemaKind int

const (
	kAny schemaKind = iota
	kBool
	kInt
	kUint
	kFloat
	kString
	kBytes
	kSlice
	kArray
	kMap
	kStruct
	kCustom // json.Unmarshaler or encoding.TextUnmarshaler
	kNever  // a type JSON cannot set (func, chan, complex, non-empty interface)
)

type schema struct {
	kind     schemaKind
	typ      reflect.Type // for kInt, kUint, kFloat bit sizes and kCustom
	nullable bool
	text     bool    // kCustom: a TextUnmarshaler, which wants a JSON string
	elem     *schema // kSlice, kArray, kMap values
	key      *schema // kMap keys (kString, kInt, kUint or kCustom)
	length   int     // kArray
	fields   []field // kStruct
}

type field struct {
	name     string
	required bool
	s        *schema
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessage      = reflect.TypeFor[json.RawMessage]()
)

func schemaOf(t reflect.Type) *schema {
	return build(t, map[reflect.Type]*schema{})
}

func build(t reflect.Type, seen map[reflect.Type]*schema) *schema {
	if s, ok := seen[t]; ok {
		return s
	}
	s := &schema{typ: t}
	seen[t] = s
	switch {
	case t == rawMessage:
		s.kind, s.nullable = kAny, true
		return s
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(jsonUnmarshaler):
		s.kind, s.nullable = kCustom, true
		return s
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textUnmarshaler):
		s.kind, s.text = kCustom, true
		return s
	}
	switch t.Kind() {
	case reflect.Bool:
		s.kind = kBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s.kind = kInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		s.kind = kUint
	case reflect.Float32, reflect.Float64:
		s.kind = kFloat
	case reflect.String:
		s.kind = kString
	case reflect.Pointer:
		inner := build(t.Elem(), seen)
		cp := *inner
		cp.nullable = true
		return &cp
	case reflect.Interface:
		if t.NumMethod() == 0 {
			s.kind, s.nullable = kAny, true
		} else {
			s.kind = kNever
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(jsonUnmarshaler) && !reflect.PointerTo(t.Elem()).Implements(textUnmarshaler) {
			s.kind, s.nullable = kBytes, true
			return s
		}
		s.kind, s.nullable, s.elem = kSlice, true, build(t.Elem(), seen)
	case reflect.Array:
		s.kind, s.length, s.elem = kArray, t.Len(), build(t.Elem(), seen)
	case reflect.Map:
		s.kind, s.nullable, s.elem = kMap, true, build(t.Elem(), seen)
		k := t.Key()
		switch {
		case k.Kind() == reflect.String:
			s.key = &schema{kind: kString}
		case reflect.PointerTo(k).Implements(textUnmarshaler):
			s.key = &schema{kind: kCustom, text: true, typ: k}
		case k.Kind() >= reflect.Int && k.Kind() <= reflect.Int64:
			s.key = &schema{kind: kInt, typ: k}
		case k.Kind() >= reflect.Uint && k.Kind() <= reflect.Uintptr:
			s.key = &schema{kind: kUint, typ: k}
		default:
			s.kind = kNever
		}
	case reflect.Struct:
		s.kind = kStruct
		s.fields = structFields(t, seen)
	default:
		s.kind = kNever
	}
	return s
}

// structFields lists the JSON fields of t, promoting the fields of embedded
// structs as encoding/json does (the shallower field wins).
func structFields(t reflect.Type, seen map[reflect.Type]*schema) []field {
	var out []field
	index := map[string]bool{}
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		var embedded []reflect.Type
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					if depth < 8 {
						embedded = append(embedded, et)
					}
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if index[name] {
				continue
			}
			index[name] = true
			optional := ft.Kind() == reflect.Pointer || hasOpt(opts, "omitempty") || hasOpt(opts, "omitzero")
			fs := build(ft, seen)
			if hasOpt(opts, "string") {
				fs = &schema{kind: kAny, nullable: true} // ",string" values are checked by the decoder
			}
			out = append(out, field{name: name, required: !optional && fs.kind != kNever, s: fs})
		}
		for _, et := range embedded {
			walk(et, depth+1)
		}
	}
	walk(t, 0)
	return out
}

func hasOpt(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// checker walks a decoded JSON value against a schema, collecting field
// errors. Messages describe what was expected, never what was given.
type checker struct {
	loc  []any
	errs []taxonomy.FieldError
}

func (c *checker) fail(typ, msg string) {
	if len(c.errs) >= maxFieldErrors {
		return
	}
	c.errs = append(c.errs, taxonomy.FieldError{Type: typ, Loc: append([]any{}, c.loc...), Msg: msg})
}

func (c *checker) at(elem any, fn func()) {
	c.loc = append(c.loc, elem)
	fn()
	c.loc = c.loc[:len(c.loc)-1]
}

func locKey(k string) string {
	if len(k) > maxLocKey {
		return k[:maxLocKey] + "…"
	}
	return k
}

func (c *checker) check(s *schema, v any) {
	if len(c.errs) >= maxFieldErrors {
		return
	}
	if v == nil {
		if !s.nullable {
			c.fail(typeName(s)+"_type", "Input should be "+expected(s)+", not null")
		}
		return
	}
	switch s.kind {
	case kAny:
	case kNever:
		c.fail("unsupported", "This field cannot be set")
	case kBool:
		if _, ok := v.(bool); !ok {
			c.fail("bool_type", "Input should be a valid boolean")
		}
	case kString:
		if _, ok := v.(string); !ok {
			c.fail("string_type", "Input should be a valid string")
		}
	case kBytes:
		str, ok := v.(string)
		if !ok {
			c.fail("bytes_type", "Input should be a base64-encoded string")
		} else if _, err := base64.StdEncoding.DecodeString(str); err != nil {
			c.fail("bytes_type", "Input should be a base64-encoded string")
		}
	case kInt, kUint, kFloat:
		n, ok := v.(json.Number)
		if !ok {
			c.fail(typeName(s)+"_type", "Input should be "+expected(s))
			return
		}
		c.checkNumber(s, string(n))
	case kSlice, kArray:
		arr, ok := v.([]any)
		if !ok {
			c.fail("array_type", "Input should be a valid array")
			return
		}
		if s.kind == kArray && len(arr) != s.length {
			c.fail("array_length", "Input should have exactly "+strconv.Itoa(s.length)+" items")
		}
		for i, e := range arr {
			c.at(i, func() { c.check(s.elem, e) })
		}
	case kMap:
		obj, ok := v.(map[string]any)
		if !ok {
			c.fail("object_type", "Input should be a valid object")
			return
		}
		for _, k := range sortedKeys(obj) {
			c.at(locKey(k), func() {
				c.checkKey(s.key, k)
				c.check(s.elem, obj[k])
			})
		}
	case kStruct:
		obj, ok := v.(map[string]any)
		if !ok {
			c.fail("object_type", "Input should be a valid object")
			return
		}
		known := make(map[string]bool, len(s.fields))
		for _, f := range s.fields {
			known[f.name] = true
			fv, present := obj[f.name]
			c.at(f.name, func() {
				switch {
				case present:
					c.check(f.s, fv)
				case f.required:
					c.fail("missing", "Field required")
				}
			})
		}
		for _, k := range sortedKeys(obj) {
			if !known[k] {
				c.at(locKey(k), func() { c.fail("extra_forbidden", "Extra inputs are not permitted") })
			}
		}
	case kCustom:
		if _, isString := v.(string); s.text && !isString {
			c.fail("string_type", "Input should be a valid string")
			return
		}
		raw, err := json.Marshal(v)
		if err == nil {
			err = json.Unmarshal(raw, reflect.New(s.typ).Interface())
		}
		if err != nil {
			c.fail("value_error", "Input is not a valid "+s.typ.String())
		}
	}
}

func (c *checker) checkKey(s *schema, k string) {
	switch s.kind {
	case kInt, kUint:
		c.checkNumber(s, k)
	case kCustom:
		if err := reflect.New(s.typ).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(k)); err != nil {
			c.fail("value_error", "Key is not a valid "+s.typ.String())
		}
	}
}

func (c *checker) checkNumber(s *schema, n string) {
	bits := s.typ.Bits()
	switch s.kind {
	case kInt:
		if _, err := strconv.ParseInt(n, 10, bits); err != nil {
			c.numberError(s, err)
		}
	case kUint:
		if _, err := strconv.ParseUint(n, 10, bits); err != nil {
			c.numberError(s, err)
		}
	case kFloat:
		if f, err := strconv.ParseFloat(n, bits); err != nil || math.IsInf(f, 0) {
			c.fail("float_overflow", "Input should be a finite number within the range of "+s.typ.Kind().String())
		}
	}
}

func (c *checker) numberError(s *schema, err error) {
	if errors.Is(err, strconv.ErrRange) {
		c.fail(typeName(s)+"_overflow", "Input should be within the range of "+s.typ.Kind().String())
		return
	}
	c.fail(typeName(s)+"_type", "Input should be "+expected(s))
}

func typeName(s *schema) string {
	switch s.kind {
	case kBool:
		return "bool"
	case kInt:
		return "int"
	case kUint:
		return "uint"
	case kFloat:
		return "float"
	case kString, kBytes:
		return "string"
	case kSlice, kArray:
		return "array"
	case kStruct, kMap:
		return "object"
	}
	return "value"
}

func expected(s *schema) string {
	switch s.kind {
	case kInt:
		return "a valid integer"
	case kUint:
		return "a valid non-negative integer"
	case kFloat:
		return "a valid number"
	case kBool:
		return "a valid boolean"
	case kString, kBytes:
		return "a valid string"
	case kSlice, kArray:
		return "a valid array"
	case kStruct, kMap:
		return "a valid object"
	}
	return "a valid value"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
