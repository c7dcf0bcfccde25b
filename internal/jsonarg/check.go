package jsonarg

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/toolmw/toolmw/taxonomy"
)

// checker walks a decoded JSON value against a schema, collecting field
// errors. Messages describe what was expected, never what was given.
type checker struct {
	loc  []any
	errs []taxonomy.FieldError
}

func (c *checker) fail(typ, msg string) {
	if len(c.errs) >= MaxFieldErrors {
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
	if len(c.errs) >= MaxFieldErrors {
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
	case kPtr:
		c.check(s.elem, v)
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
