package jsonarg

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Kind is the JSON a Go type accepts.
type Kind int

// The kinds of [Node].
const (
	Any    Kind = iota // any JSON value: an empty interface or json.RawMessage
	Bool               // true or false
	Int                // an integer within the bounds of Node.Type
	Uint               // a non-negative integer within the bounds of Node.Type
	Float              // a number within the bounds of Node.Type
	String             // a string
	Bytes              // a base64-encoded string ([]byte)
	Slice              // an array of Elem
	Array              // an array of exactly Len Elem
	Map                // an object whose keys are Key and whose values are Elem
	Struct             // an object of Fields and no other member
	Custom             // a json.Unmarshaler or encoding.TextUnmarshaler: decodes itself
	Never              // a type JSON cannot set (func, chan, complex, a non-empty interface)
	Ptr                // null, or what Elem accepts
)

// Node is the field model of one Go type: what JSON it accepts. Nodes are
// built once by [For], shared (a recursive type refers to its own Node)
// and never modified after: safe for concurrent use.
type Node struct {
	Kind     Kind
	Type     reflect.Type
	Nullable bool    // null is accepted (and sets nil)
	Text     bool    // Custom: an encoding.TextUnmarshaler, which wants a string
	Elem     *Node   // Slice, Array, Map values; Ptr's element
	Key      *Node   // Map keys: String, Int, Uint, or Custom (Text)
	Len      int     // Array
	Fields   []Field // Struct: in encoding/json's order
	// Time reports that Type is time.Time, whose JSON is an RFC 3339
	// date-time string (or null, which leaves it unset).
	Time bool

	index map[string]int // Struct: field name → position in Fields
	// folds lists, for each field whose name is equal under case folding
	// to another field's ("to" and "TO"), the positions of those others;
	// nil when no two names fold together (nearly always).
	folds map[int][]int
}

// Field is one JSON member of a struct.
type Field struct {
	Name        string
	Required    bool  // must be present; otherwise optional, and null means absent
	Node        *Node // the field's type
	Description string
	// Enum, when not nil, lists the values the field's innermost scalar
	// (through pointers, slices and arrays) may take: strings, int64,
	// uint64 or bool values, in the order of the tag.
	Enum []any

	index []int // reflect index path, through embedded structs
	// viaPtr reports that index passes through an embedded pointer, which
	// must be allocated when the field is set.
	viaPtr bool
}

// Tag names read from struct fields besides json.
const (
	// DescriptionTag is the tag whose whole value describes the field, as
	// the MCP Go SDK (google/jsonschema-go) reads it.
	DescriptionTag = "jsonschema"
	// EnumTag lists the values a field may take, comma-separated:
	// `enum:"economy,business,first"`. Values are parsed as the field's
	// type: strings as they are, integers in decimal, booleans as true or
	// false. A value cannot contain a comma.
	EnumTag = "enum"
)

// Model is the field model of one Go type, built by [For]. It is immutable
// and safe for concurrent use.
type Model struct {
	root *Node
	err  error
}

// For returns the field model of t. Build it once per type, not per call.
func For(t reflect.Type) *Model {
	b := builder{seen: map[reflect.Type]*Node{}}
	root := b.build(t)
	return &Model{root: root, err: b.err}
}

// Root returns the Node of the model's type.
func (m *Model) Root() *Node { return m.root }

// Err reports a struct tag of the type that cannot be used (an enum value
// that does not fit its field), or nil. Such a tag is ignored when
// decoding; toolmw.Wrap reports the error at start-up.
func (m *Model) Err() error { return m.err }

// Field returns the field called name and whether there is one.
func (n *Node) Field(name string) (*Field, bool) {
	i, ok := n.index[name]
	if !ok {
		return nil, false
	}
	return &n.Fields[i], true
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessage      = reflect.TypeFor[json.RawMessage]()
	timeType        = reflect.TypeFor[time.Time]()
)

type builder struct {
	seen map[reflect.Type]*Node
	err  error
}

func (b *builder) build(t reflect.Type) *Node {
	if n, ok := b.seen[t]; ok {
		return n
	}
	n := &Node{Type: t}
	b.seen[t] = n
	switch {
	case t == rawMessage:
		n.Kind, n.Nullable = Any, true
		return n
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(jsonUnmarshaler):
		n.Kind, n.Nullable, n.Time = Custom, true, t == timeType
		return n
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textUnmarshaler):
		n.Kind, n.Text = Custom, true
		return n
	}
	switch t.Kind() {
	case reflect.Bool:
		n.Kind = Bool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n.Kind = Int
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n.Kind = Uint
	case reflect.Float32, reflect.Float64:
		n.Kind = Float
	case reflect.String:
		n.Kind = String
	case reflect.Pointer:
		// The element's node is referred to, not copied: it may still be
		// under construction (a recursive type).
		n.Kind, n.Nullable, n.Elem = Ptr, true, b.build(t.Elem())
	case reflect.Interface:
		if t.NumMethod() == 0 {
			n.Kind, n.Nullable = Any, true
		} else {
			n.Kind = Never
		}
	case reflect.Slice:
		if e := t.Elem(); e.Kind() == reflect.Uint8 && !reflect.PointerTo(e).Implements(jsonUnmarshaler) && !reflect.PointerTo(e).Implements(textUnmarshaler) {
			n.Kind, n.Nullable = Bytes, true
			return n
		}
		n.Kind, n.Nullable, n.Elem = Slice, true, b.build(t.Elem())
	case reflect.Array:
		n.Kind, n.Len, n.Elem = Array, t.Len(), b.build(t.Elem())
	case reflect.Map:
		n.Kind, n.Nullable, n.Elem = Map, true, b.build(t.Elem())
		k := t.Key()
		switch {
		case k.Kind() == reflect.String && !reflect.PointerTo(k).Implements(textUnmarshaler):
			n.Key = &Node{Kind: String, Type: k}
		case reflect.PointerTo(k).Implements(textUnmarshaler):
			n.Key = &Node{Kind: Custom, Text: true, Type: k}
		case k.Kind() >= reflect.Int && k.Kind() <= reflect.Int64:
			n.Key = &Node{Kind: Int, Type: k}
		case k.Kind() >= reflect.Uint && k.Kind() <= reflect.Uintptr:
			n.Key = &Node{Kind: Uint, Type: k}
		default:
			n.Kind, n.Elem, n.Nullable = Never, nil, false
		}
	case reflect.Struct:
		n.Kind = Struct
		n.Fields = b.structFields(t)
		n.index = make(map[string]int, len(n.Fields))
		for i, f := range n.Fields {
			n.index[f.Name] = i
			for j := range i {
				if strings.EqualFold(n.Fields[j].Name, f.Name) {
					if n.folds == nil {
						n.folds = map[int][]int{}
					}
					n.folds[i] = append(n.folds[i], j)
					n.folds[j] = append(n.folds[j], i)
				}
			}
		}
	default:
		n.Kind = Never
	}
	return n
}

// candidate is a field found while walking a struct and its embedded
// structs, before encoding/json's dominance rules pick one per name.
type candidate struct {
	name   string
	tagged bool
	depth  int
	index  []int
	viaPtr bool
	sf     reflect.StructField
	opts   string
}

// structFields lists the JSON fields of t with encoding/json's rules: the
// json tag names a field (an invalid name is ignored), "-" skips it,
// embedded structs promote their fields, and of several fields with one
// name the shallowest wins, then the tagged one; a tie drops them all.
// Fields reached through an embedded pointer to an unexported struct are
// left out, as encoding/json cannot set them.
func (b *builder) structFields(t reflect.Type) []Field {
	type level struct {
		t      reflect.Type
		index  []int
		viaPtr bool
	}
	var cands []candidate
	current := []level{{t: t}}
	visited := map[reflect.Type]bool{}
	for depth := 0; len(current) > 0; depth++ {
		var next []level
		for _, lv := range current {
			if visited[lv.t] {
				continue
			}
			visited[lv.t] = true
			for i := 0; i < lv.t.NumField(); i++ {
				sf := lv.t.Field(i)
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTagName(name) {
					name = ""
				}
				index := append(slices.Clip(lv.index), i)
				ft := sf.Type
				if sf.Anonymous {
					et := ft
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
					if name == "" && et.Kind() == reflect.Struct {
						if ft.Kind() == reflect.Pointer && !sf.IsExported() {
							continue // encoding/json cannot allocate it
						}
						next = append(next, level{t: et, index: index, viaPtr: lv.viaPtr || ft.Kind() == reflect.Pointer})
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tagged := name != ""
				if name == "" {
					name = sf.Name
				}
				cands = append(cands, candidate{name: name, tagged: tagged, depth: depth, index: index, viaPtr: lv.viaPtr, sf: sf, opts: opts})
			}
		}
		current = next
	}
	// Dominance: per name, the shallowest; then the only tagged one.
	byName := map[string][]candidate{}
	var order []string
	for _, c := range cands {
		if _, ok := byName[c.name]; !ok {
			order = append(order, c.name)
		}
		byName[c.name] = append(byName[c.name], c)
	}
	var out []candidate
	for _, name := range order {
		cs := byName[name]
		minDepth := cs[0].depth
		for _, c := range cs {
			minDepth = min(minDepth, c.depth)
		}
		var top []candidate
		for _, c := range cs {
			if c.depth == minDepth {
				top = append(top, c)
			}
		}
		if len(top) > 1 {
			var tagged []candidate
			for _, c := range top {
				if c.tagged {
					tagged = append(tagged, c)
				}
			}
			if len(tagged) != 1 {
				continue
			}
			top = tagged
		}
		out = append(out, top[0])
	}
	// encoding/json orders fields by index sequence.
	slices.SortStableFunc(out, func(a, b candidate) int { return slices.Compare(a.index, b.index) })
	fields := make([]Field, 0, len(out))
	for _, c := range out {
		ft := c.sf.Type
		optional := ft.Kind() == reflect.Pointer || hasOpt(c.opts, "omitempty") || hasOpt(c.opts, "omitzero")
		fn := b.build(ft)
		if hasOpt(c.opts, "string") && quotable(ft) {
			// ",string" is not supported: the field cannot be set.
			fn = &Node{Kind: Never, Type: ft}
		}
		f := Field{
			Name:        c.name,
			Required:    !optional && fn.Kind != Never,
			Node:        fn,
			Description: c.sf.Tag.Get(DescriptionTag),
			index:       c.index,
			viaPtr:      c.viaPtr,
		}
		if tag, ok := c.sf.Tag.Lookup(EnumTag); ok {
			enum, err := parseEnum(tag, fn)
			if err != nil && b.err == nil {
				b.err = fmt.Errorf("field %s: %w", c.sf.Name, err)
			}
			f.Enum = enum
		}
		fields = append(fields, f)
	}
	return fields
}

// quotable reports whether encoding/json's ",string" option applies to t.
func quotable(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

// Scalar returns the node an enum of n applies to: n through pointers,
// slices and arrays.
func (n *Node) Scalar() *Node {
	for n.Kind == Ptr || n.Kind == Slice || n.Kind == Array {
		n = n.Elem
	}
	return n
}

func parseEnum(tag string, n *Node) ([]any, error) {
	s := n.Scalar()
	var out []any
	for _, v := range strings.Split(tag, ",") {
		switch s.Kind {
		case String:
			out = append(out, v)
		case Bool:
			b, err := strconv.ParseBool(v)
			if err != nil || (v != "true" && v != "false") {
				return nil, fmt.Errorf("enum value %q is not a boolean", v)
			}
			out = append(out, b)
		case Int:
			i, err := strconv.ParseInt(v, 10, s.Type.Bits())
			if err != nil {
				return nil, fmt.Errorf("enum value %q is not a %s", v, s.Type)
			}
			out = append(out, i)
		case Uint:
			u, err := strconv.ParseUint(v, 10, s.Type.Bits())
			if err != nil {
				return nil, fmt.Errorf("enum value %q is not a %s", v, s.Type)
			}
			out = append(out, u)
		default:
			return nil, fmt.Errorf("an enum applies to strings, integers and booleans, not %s", s.Type)
		}
	}
	return out, nil
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

// validTagName is encoding/json's rule for a json tag name.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// Bounds of the numbers Typed accepts. Every number in the arguments, of
// any field, has at most MaxNumberLen characters, an exponent of at most
// MaxExponentDigits digits and an absolute value of at most MaxFloat64Text
// (the largest float64, as Go prints it), so that any number can be held
// by a float64 and costs little to compare exactly.
const (
	MaxNumberLen      = 64
	MaxExponentDigits = 3
	MaxFloat64Text    = "1.7976931348623157e+308"
	MaxFloat32Text    = "3.4028234663852886e+38"
)

var (
	maxFloat64 = math.MaxFloat64
	maxFloat32 = float64(math.MaxFloat32)
)

// IntBounds returns the smallest and largest values of an Int or Uint
// node's type, in decimal.
func (n *Node) IntBounds() (lo, hi string) {
	bits := n.Type.Bits()
	if n.Kind == Uint {
		return "0", strconv.FormatUint(math.MaxUint64>>(64-bits), 10)
	}
	return strconv.FormatInt(math.MinInt64>>(64-bits), 10), strconv.FormatInt(math.MaxInt64>>(64-bits), 10)
}

// FloatBound returns the largest absolute value a Float node accepts, as
// the decimal text the decoder compares with.
func (n *Node) FloatBound() string {
	if n.Type.Bits() == 32 {
		return MaxFloat32Text
	}
	return MaxFloat64Text
}
