package jsonarg

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
)

// schemaKind is the JSON a Go type accepts.
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
	kPtr    // a pointer: null, or what elem accepts
)

// schema is the field model of one Go type, built once by schemaOf.
type schema struct {
	kind     schemaKind
	typ      reflect.Type // for kInt, kUint, kFloat bit sizes and kCustom
	nullable bool
	text     bool    // kCustom: a TextUnmarshaler, which wants a JSON string
	elem     *schema // kSlice, kArray, kMap values; kPtr's element
	key      *schema // kMap keys (kString, kInt, kUint or kCustom)
	length   int     // kArray
	fields   []field // kStruct
}

// field is one JSON field of a struct.
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
		// The element's schema is referred to, not copied: it may still be
		// under construction (a recursive type), and seen must map t to
		// the schema returned for it.
		s.kind, s.nullable, s.elem = kPtr, true, build(t.Elem(), seen)
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
