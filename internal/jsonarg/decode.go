package jsonarg

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/toolmw/toolmw/taxonomy"
)

// MaxFieldErrors caps how many field errors one call reports: enough to fix
// a call in one round, few enough to keep the error small.
const MaxFieldErrors = 20

// DefaultMaxBytes is the size cap on a call's arguments when none is
// given: 1 MiB, far above what a model writes, far below what would hurt.
const DefaultMaxBytes = 1 << 20

// Decode checks args against m and, when they fit, decodes them into dst, a
// pointer to a value of m's type; dst is left untouched otherwise. Empty or
// blank args stand for {}. Arguments longer than maxBytes (DefaultMaxBytes
// when maxBytes ≤ 0) are rejected before they are read, with code
// args_too_large.
//
// The input is read once: it is checked and decoded in the same walk. Every
// mismatch is a taxonomy.FieldError of the tool-args-invalid error
// returned, all of them at once up to [MaxFieldErrors]: invalid JSON, data
// after the value, object keys that match no field (exactly,
// case-sensitively), duplicate keys (two keys of one object equal as they
// are or under Unicode simple case folding, as encoding/json matches keys
// to fields, at any depth), strings that are not valid UTF-8 (or
// hold a lone surrogate escape), values of the wrong type or out of range,
// numbers beyond the bounds of [MaxNumberLen], values outside a field's
// enum, missing required fields, and nesting deeper than [MaxDepth].
func (m *Model) Decode(args []byte, dst any, maxBytes int) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Type().Elem() != m.root.Type {
		return taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "value_error", Loc: []any{}, Msg: "Input could not be decoded"})
	}
	tmp := reflect.New(m.root.Type)
	if err := m.DecodeValue(args, tmp.Elem(), maxBytes); err != nil {
		return err
	}
	v.Elem().Set(tmp.Elem())
	return nil
}

// DecodeValue is Decode into v, a settable zero value of m's type, which is
// left partly set on failure.
func (m *Model) DecodeValue(args []byte, v reflect.Value, maxBytes int) error {
	if err := CheckSize(args, maxBytes); err != nil {
		return err
	}
	d := decoder{scanner: scanner{data: args}}
	if d.peek() == 0 {
		d.data, d.pos = []byte("{}"), 0
	}
	return d.run(func() {
		if d.peek() == 'n' {
			// The arguments are an object (or whatever the type is), never
			// null: no API sends null, and a schema's root is not nullable.
			d.literal("null")
			d.fail(typeName(m.root)+"_type", "Input should be "+expected(m.root)+", not null")
			return
		}
		d.value(m.root, v, nil, false)
	})
}

// Parse reads args as a generic JSON value, as a schema validator wants it
// (objects as map[string]any, numbers as json.Number), applying the checks
// every value gets: size, syntax, trailing data, Unicode, duplicate keys
// (case-folded ones included), number bounds and depth. Empty or blank
// args stand for {}.
func Parse(args []byte, maxBytes int) (any, error) {
	if err := CheckSize(args, maxBytes); err != nil {
		return nil, err
	}
	s := decoder{scanner: scanner{data: args}}
	if s.peek() == 0 {
		s.data, s.pos = []byte("{}"), 0
	}
	var v any
	err := s.run(func() { v = s.anyValue(true, true) })
	return v, err
}

// CheckSize returns an args_too_large error when args exceed maxBytes
// (DefaultMaxBytes when maxBytes ≤ 0).
func CheckSize(args []byte, maxBytes int) error {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if len(args) <= maxBytes {
		return nil
	}
	return taxonomy.New(taxonomy.KindArgsInvalid, taxonomy.CodeArgsTooLarge, "arguments exceed the size cap").
		WithFields(taxonomy.FieldError{Type: "too_large", Loc: []any{}, Msg: "Input should be at most " + strconv.Itoa(maxBytes) + " bytes"})
}

type decoder struct {
	scanner
}

// run runs walk over the whole input and turns what it found into an
// error: json_invalid alone for a syntax error, else the field errors.
func (d *decoder) run(walk func()) (err error) {
	defer func() {
		switch r := recover().(type) {
		case nil:
		case syntaxError:
			err = taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "json_invalid", Loc: []any{}, Msg: "Input is not valid JSON"})
		case tooDeep:
			err = d.fieldErrors()
		default:
			panic(r)
		}
	}()
	walk()
	if d.peek() != 0 {
		if !d.trailingIsJSON() {
			return taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "json_invalid", Loc: []any{}, Msg: "Input is not valid JSON"})
		}
		return taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "trailing_data", Loc: []any{}, Msg: "Input has data after the JSON value"})
	}
	return d.fieldErrors()
}

// trailingIsJSON reports whether what follows the value starts like a JSON
// value (trailing data) rather than garbage (invalid JSON).
func (d *decoder) trailingIsJSON() bool {
	switch c := d.peek(); {
	case c == '{', c == '[', c == '"', c == 't', c == 'f', c == 'n', c == '-', c >= '0' && c <= '9':
		return true
	}
	return false
}

func (d *decoder) fieldErrors() error {
	if len(d.errs) == 0 {
		return nil
	}
	fes := make([]taxonomy.FieldError, len(d.errs))
	for i, e := range d.errs {
		fes[i] = taxonomy.FieldError{Type: e.typ, Loc: e.loc, Msg: e.msg}
	}
	return taxonomy.ArgsInvalid(fes...)
}

// value reads one value of node n into v. enum, when not nil, restricts
// n's innermost scalar; nullOK says null is accepted (and leaves v as it
// is) whatever n accepts but Never: the value is an optional field's. A
// Never node (a type JSON cannot set) refuses every value, null included.
func (d *decoder) value(n *Node, v reflect.Value, enum []any, nullOK bool) {
	c := d.peek()
	if c == 'n' {
		d.literal("null")
		switch {
		case n.Kind == Never:
			// Not even null: the field is not in the schema, and an
			// optional field's null would otherwise pass for absent.
			d.fail("unsupported", "This field cannot be set")
		case n.Kind == Custom && n.Nullable:
			d.unmarshalJSON(n, v, []byte("null"))
		case n.Kind == Any && n.Type == rawMessage:
			v.SetBytes([]byte("null"))
		case n.Nullable:
			v.SetZero()
		case nullOK:
		default:
			d.fail(typeName(n)+"_type", "Input should be "+expected(n)+", not null")
		}
		return
	}
	switch n.Kind {
	case Any:
		if n.Type == rawMessage {
			raw := d.skip()
			v.SetBytes(append([]byte(nil), raw...))
			return
		}
		if x := d.anyValue(true, false); x != nil {
			v.Set(reflect.ValueOf(x))
		}
	case Ptr:
		if v.IsNil() {
			v.Set(reflect.New(n.Type.Elem()))
		}
		d.value(n.Elem, v.Elem(), enum, false)
	case Never:
		d.skip()
		d.fail("unsupported", "This field cannot be set")
	case Bool:
		if c != 't' && c != 'f' {
			d.skip()
			d.fail("bool_type", "Input should be a valid boolean")
			return
		}
		b := c == 't'
		if b {
			d.literal("true")
		} else {
			d.literal("false")
		}
		if enum != nil && !inEnum(enum, b) {
			d.failEnum(enum)
			return
		}
		v.SetBool(b)
	case Int, Uint, Float:
		if c != '-' && (c < '0' || c > '9') {
			d.skip()
			d.fail(typeName(n)+"_type", "Input should be "+expected(n))
			return
		}
		lit := d.number()
		if !d.checkNumber(lit) {
			return
		}
		d.setNumber(n, v, lit, enum)
	case String:
		s, ok := d.stringValue(c, "string_type", "Input should be a valid string")
		if !ok {
			return
		}
		if enum != nil && !inEnum(enum, s) {
			d.failEnum(enum)
			return
		}
		v.SetString(s)
	case Bytes:
		s, ok := d.stringValue(c, "bytes_type", "Input should be a base64-encoded string")
		if !ok {
			return
		}
		b, ok := decodeBase64(s)
		if !ok {
			d.fail("bytes_type", "Input should be a base64-encoded string")
			return
		}
		v.SetBytes(b)
	case Slice, Array:
		d.array(n, v, enum, c)
	case Map:
		d.object(n, v, c)
	case Struct:
		d.structValue(n, v, c)
	case Custom:
		if n.Time {
			if s, ok := d.stringValue(c, "datetime_type", "Input should be an RFC 3339 date-time string such as 2006-01-02T15:04:05Z"); ok {
				d.setTime(v, s)
			}
			return
		}
		if n.Text {
			s, ok := d.stringValue(c, "string_type", "Input should be a valid string")
			if !ok {
				return
			}
			if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
				d.fail("value_error", "Input is not a valid "+n.Type.String())
			}
			return
		}
		mark := d.nerrs
		raw := d.skip()
		if d.nerrs != mark {
			return
		}
		d.unmarshalJSON(n, v, raw)
	}
}

// stringValue reads a string value whose first byte is c. Another value
// is skipped and reported with code and msg; a string that is not valid
// UTF-8 (or holds a lone surrogate) is reported as string_unicode.
func (d *decoder) stringValue(c byte, code, msg string) (string, bool) {
	if c != '"' {
		d.skip()
		d.fail(code, msg)
		return "", false
	}
	raw, esc, valid := d.str()
	if !valid {
		d.fail("string_unicode", "Input should be valid UTF-8 without lone surrogates")
		return "", false
	}
	return unquote(raw, esc), true
}

func (d *decoder) unmarshalJSON(n *Node, v reflect.Value, raw []byte) {
	if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
		if n.Time {
			d.fail("datetime_type", "Input should be an RFC 3339 date-time string such as 2006-01-02T15:04:05Z")
			return
		}
		d.fail("value_error", "Input is not a valid "+n.Type.String())
	}
}

func (d *decoder) array(n *Node, v reflect.Value, enum []any, c byte) {
	if c != '[' {
		d.skip()
		d.fail("array_type", "Input should be a valid array")
		return
	}
	d.pos++
	d.enter()
	i := 0
	if n.Kind == Slice {
		v.Set(reflect.MakeSlice(n.Type, 0, 0))
	}
	var extra reflect.Value
	for more := d.first(']'); more; more = d.more(']') {
		d.push(i)
		switch {
		case n.Kind == Slice:
			if i == v.Cap() {
				v.Grow(1)
			}
			v.SetLen(i + 1)
			d.value(n.Elem, v.Index(i), enum, false)
		case i < n.Len:
			d.value(n.Elem, v.Index(i), enum, false)
		default:
			if !extra.IsValid() {
				extra = reflect.New(n.Type.Elem()).Elem()
			}
			extra.SetZero()
			d.value(n.Elem, extra, enum, false)
		}
		d.pop()
		i++
	}
	d.leave()
	if n.Kind == Array && i != n.Len {
		d.fail("array_length", "Input should have exactly "+strconv.Itoa(n.Len)+" items")
	}
}

func (d *decoder) object(n *Node, v reflect.Value, c byte) {
	if c != '{' {
		d.skip()
		d.fail("object_type", "Input should be a valid object")
		return
	}
	d.pos++
	d.enter()
	m := reflect.MakeMap(n.Type)
	elem := reflect.New(n.Type.Elem()).Elem()
	var seen keySet
	for more := d.first('}'); more; more = d.more('}') {
		raw, esc, valid := d.str()
		d.expect(':')
		d.push(Placeholder)
		k := unquote(raw, esc)
		key, keyOK := d.mapKey(n.Key, k, valid)
		if seen.add(k) {
			d.fail("duplicate_key", "Keys should be unique within an object")
			keyOK = false
		}
		elem.SetZero()
		d.value(n.Elem, elem, nil, false)
		if keyOK {
			m.SetMapIndex(key, elem)
		}
		d.pop()
	}
	d.leave()
	v.Set(m)
}

// mapKey converts a key to the map's key type, reporting why it cannot be.
func (d *decoder) mapKey(kn *Node, k string, valid bool) (reflect.Value, bool) {
	if !valid {
		d.fail("string_unicode", "Key should be valid UTF-8 without lone surrogates")
		return reflect.Value{}, false
	}
	key := reflect.New(kn.Type).Elem()
	switch kn.Kind {
	case String:
		key.SetString(k)
	case Int, Uint:
		if !canonicalInt(k) {
			d.fail(typeName(kn)+"_type", "Key should be "+expected(kn)+" in canonical decimal form")
			return key, false
		}
		if kn.Kind == Int {
			i, err := strconv.ParseInt(k, 10, kn.Type.Bits())
			if err != nil {
				d.fail("int_overflow", "Key should be within the range of "+kn.Type.Kind().String())
				return key, false
			}
			key.SetInt(i)
		} else {
			u, err := strconv.ParseUint(k, 10, kn.Type.Bits())
			if err != nil {
				if strings.HasPrefix(k, "-") {
					d.fail("uint_type", "Key should be a valid non-negative integer in canonical decimal form")
				} else {
					d.fail("uint_overflow", "Key should be within the range of "+kn.Type.Kind().String())
				}
				return key, false
			}
			key.SetUint(u)
		}
	case Custom:
		if err := key.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(k)); err != nil {
			d.fail("value_error", "Key is not a valid "+kn.Type.String())
			return key, false
		}
	}
	return key, true
}

// canonicalInt reports whether k is an integer as Go prints one: an
// optional minus, no plus, no leading zero, not "-0".
func canonicalInt(k string) bool {
	s := strings.TrimPrefix(k, "-")
	if s == "" || len(s) > 1 && s[0] == '0' || k == "-0" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (d *decoder) structValue(n *Node, v reflect.Value, c byte) {
	if c != '{' {
		d.skip()
		d.fail("object_type", "Input should be a valid object")
		return
	}
	d.pos++
	d.enter()
	var seenFew uint64
	var seenMany []bool
	if len(n.Fields) > 64 {
		seenMany = make([]bool, len(n.Fields))
	}
	has := func(i int) bool {
		if seenMany != nil {
			return seenMany[i]
		}
		return seenFew&(1<<i) != 0
	}
	seen := func(i int) bool {
		was := has(i)
		if seenMany != nil {
			seenMany[i] = true
		} else {
			seenFew |= 1 << i
		}
		return was
	}
	for more := d.first('}'); more; more = d.more('}') {
		raw, esc, valid := d.str()
		d.expect(':')
		i, known := n.index[string(raw)]
		if esc {
			i, known = n.index[unquote(raw, esc)]
		}
		if !valid || !known {
			d.push(Placeholder)
			if !valid {
				d.fail("string_unicode", "Key should be valid UTF-8 without lone surrogates")
			}
			d.skip()
			if valid {
				d.fail("extra_forbidden", "Extra inputs are not permitted")
			}
			d.pop()
			continue
		}
		f := &n.Fields[i]
		d.push(f.Name)
		// A field whose name folds together with another's ("to", "TO")
		// is a duplicate of it: encoding/json, reading the same object,
		// would set either from either key.
		dup := seen(i)
		for _, j := range n.folds[i] {
			dup = dup || has(j)
		}
		if dup {
			d.fail("duplicate_key", "Keys should be unique within an object")
			d.skip()
		} else {
			d.value(f.Node, fieldValue(v, f), f.Enum, !f.Required)
		}
		d.pop()
	}
	d.leave()
	for i := range n.Fields {
		f := &n.Fields[i]
		if f.Required && !has(i) {
			d.push(f.Name)
			d.fail("missing", "Field required")
			d.pop()
		}
	}
}

// fieldValue returns the field f of the struct v, allocating the embedded
// pointers on its way.
func fieldValue(v reflect.Value, f *Field) reflect.Value {
	if !f.viaPtr {
		return v.FieldByIndex(f.index)
	}
	for i, x := range f.index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

func inEnum(enum []any, v any) bool {
	for _, e := range enum {
		if e == v {
			return true
		}
	}
	return false
}

func (d *decoder) failEnum(enum []any) {
	var b strings.Builder
	b.WriteString("Input should be ")
	for i, e := range enum {
		switch {
		case i == 0:
		case i == len(enum)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		if s, ok := e.(string); ok {
			b.WriteString("'" + s + "'")
		} else {
			b.WriteString(strings.Trim(strconv.Quote(toString(e)), `"`))
		}
	}
	d.fail("enum", b.String())
}

func toString(e any) string {
	switch x := e.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// decodeBase64 decodes standard base64 with padding, as encoding/json
// decodes a []byte, except that line breaks are not skipped: the accepted
// text is exactly what the schema's pattern describes.
func decodeBase64(s string) ([]byte, bool) {
	if len(s)%4 != 0 {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
		case c == '=' && (i == len(s)-1 || i == len(s)-2 && s[len(s)-1] == '='):
		default:
			return nil, false
		}
	}
	b, err := base64.StdEncoding.DecodeString(s)
	return b, err == nil
}

// Base64Pattern is the regular expression of the strings a []byte field
// accepts: what decodeBase64 accepts.
const Base64Pattern = `^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$`

func typeName(n *Node) string {
	switch n.Kind {
	case Bool:
		return "bool"
	case Int:
		return "int"
	case Uint:
		return "uint"
	case Float:
		return "float"
	case String, Bytes:
		return "string"
	case Slice, Array:
		return "array"
	case Struct, Map:
		return "object"
	case Ptr:
		return typeName(n.Elem)
	}
	return "value"
}

func expected(n *Node) string {
	switch n.Kind {
	case Int:
		return "a valid integer"
	case Uint:
		return "a valid non-negative integer"
	case Float:
		return "a valid number"
	case Bool:
		return "a valid boolean"
	case String, Bytes:
		return "a valid string"
	case Slice, Array:
		return "a valid array"
	case Struct, Map:
		return "a valid object"
	case Ptr:
		return expected(n.Elem)
	}
	return "a valid value"
}
