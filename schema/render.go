package schema

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/toolmw/toolmw/internal/jsonarg"
	"github.com/toolmw/toolmw/taxonomy"
)

// Dialect is the $schema of a plain rendering.
const Dialect = "https://json-schema.org/draft/2020-12/schema"

// MaxInlineDepth bounds how many times a recursive type is inlined into
// itself where a profile accepts no references (Gemini): below that depth
// it is described as any object, which the decoder still checks.
const MaxInlineDepth = 3

// Schema is the JSON Schema of a Go type, rendered from the field model the
// strict decoder behind toolmw.Typed uses, so the two cannot disagree. Each
// profile's rendering is made once, on first use, and kept. A Schema is
// safe for concurrent use.
type Schema struct {
	typ   reflect.Type
	model *jsonarg.Model

	once    [numProfiles]sync.Once
	renders [numProfiles]json.RawMessage
	errs    [numProfiles]error
}

// For returns the Schema of T.
func For[T any]() *Schema { return Of(reflect.TypeFor[T]()) }

// Of returns the Schema of t.
func Of(t reflect.Type) *Schema {
	return &Schema{typ: t, model: jsonarg.For(t)}
}

// Type returns the Go type the schema describes.
func (s *Schema) Type() reflect.Type { return s.typ }

// Err reports a struct tag of the type that cannot be used (an enum value
// that does not fit its field) as a tool-definition-invalid error with
// code schema_tag_invalid, or nil. The decoder ignores such a tag.
func (s *Schema) Err() error {
	if err := s.model.Err(); err != nil {
		return definitionError(taxonomy.CodeSchemaTagInvalid, s.typ.String()+": "+err.Error())
	}
	return nil
}

// Render returns the schema as profile p's API accepts it, compact. An
// error is a tool-definition-invalid error whose code names what p cannot
// express (schema_not_strict for a map under OpenAIStrict, …). Under
// Gemini, a type without fields renders as nil, nil: the function takes no
// parameters, and its declaration leaves them out. The rendering is made
// once per profile; callers must not modify it.
func (s *Schema) Render(p Profile) (json.RawMessage, error) {
	if !p.valid() {
		return nil, definitionError(taxonomy.CodeOptionInvalid, "unknown schema profile")
	}
	s.once[p].Do(func() {
		s.renders[p], s.errs[p] = s.render(p)
	})
	return s.renders[p], s.errs[p]
}

// MustRender is Render that panics on an error; for tests and examples.
func (s *Schema) MustRender(p Profile) json.RawMessage {
	b, err := s.Render(p)
	if err != nil {
		panic(err)
	}
	return b
}

func (s *Schema) render(p Profile) (json.RawMessage, error) {
	// The arguments' root is never null: a pointer there is its element
	// (which may then be the root of a recursive type, "#").
	top := s.model.Root()
	for top.Kind == jsonarg.Ptr {
		top = top.Elem
	}
	r := renderer{profile: p, defs: map[*jsonarg.Node]string{}, recursive: recursiveNodes(s.model.Root())}
	root := notNull(r.node(top, 0))
	if p == Plain {
		root.keys = append([]string{"$schema"}, root.keys...)
		root.vals["$schema"] = Dialect
	}
	if len(r.defOrder) > 0 {
		defs := newObject()
		for _, n := range r.defOrder {
			defs.set(r.defs[n], r.defBodies[n])
		}
		root.set("$defs", defs)
	}
	out, err := transform(root, p)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	if p == Gemini {
		return Adapt(b, p)
	}
	if err := Check(b, p); err != nil {
		return nil, err
	}
	return b, nil
}

// renderer renders the nodes of one model. Recursive struct types become
// $defs (or, for Gemini, are inlined to MaxInlineDepth).
type renderer struct {
	profile   Profile
	recursive map[*jsonarg.Node]bool
	root      *jsonarg.Node
	defs      map[*jsonarg.Node]string
	defBodies map[*jsonarg.Node]*object
	defOrder  []*jsonarg.Node
	names     map[string]bool
	inlining  map[*jsonarg.Node]int
}

// node renders n at depth (how many structs enclose it). A recursive node
// becomes a reference ("#" for the root), or, for Gemini, is inlined up to
// MaxInlineDepth times.
func (r *renderer) node(n *jsonarg.Node, depth int) *object {
	if r.root == nil {
		r.root = n
	}
	if r.recursive[n] {
		if r.profile == Gemini {
			if r.inlining == nil {
				r.inlining = map[*jsonarg.Node]int{}
			}
			if r.inlining[n] >= MaxInlineDepth {
				return newObject().set("type", "object").set("description", "(the same structure, nested further)")
			}
			r.inlining[n]++
			defer func() { r.inlining[n]-- }()
			return r.body(n, depth)
		}
		if n == r.root && depth > 0 {
			return newObject().set("$ref", "#")
		}
		if n != r.root {
			return newObject().set("$ref", "#/$defs/"+r.define(n))
		}
	}
	return r.body(n, depth)
}

// body renders what n accepts.
func (r *renderer) body(n *jsonarg.Node, depth int) *object {
	o := newObject()
	switch n.Kind {
	case jsonarg.Any:
	case jsonarg.Bool:
		o.set("type", "boolean")
	case jsonarg.Int, jsonarg.Uint:
		// A 64-bit integer's bounds inform nothing (and a client that
		// reads numbers as float64 sees 9223372036854776000): only an
		// unsigned one's minimum and a narrower one's range are shown. The
		// decoder rejects what does not fit either way.
		lo, hi := n.IntBounds()
		o.set("type", "integer")
		switch {
		case n.Type.Bits() < 64:
			o.set("minimum", json.Number(lo)).set("maximum", json.Number(hi))
		case n.Kind == jsonarg.Uint:
			o.set("minimum", json.Number("0"))
		}
	case jsonarg.Float:
		// Every argument's number is within float64's range already; a
		// float32's range is shown.
		o.set("type", "number")
		if n.Type.Bits() < 64 {
			b := n.FloatBound()
			o.set("minimum", json.Number("-"+b)).set("maximum", json.Number(b))
		}
	case jsonarg.String:
		o.set("type", "string")
	case jsonarg.Bytes:
		o.set("type", "string").set("contentEncoding", "base64").set("pattern", jsonarg.Base64Pattern)
	case jsonarg.Slice:
		o.set("type", "array").set("items", r.node(n.Elem, depth))
	case jsonarg.Array:
		o.set("type", "array").set("items", r.node(n.Elem, depth)).
			set("minItems", json.Number(itoa(n.Len))).set("maxItems", json.Number(itoa(n.Len)))
	case jsonarg.Map:
		o.set("type", "object")
		if names := keyPattern(n.Key); names != "" {
			o.set("propertyNames", newObject().set("pattern", names))
		}
		o.set("additionalProperties", r.node(n.Elem, depth+1))
	case jsonarg.Struct:
		return r.structBody(n, depth)
	case jsonarg.Custom:
		switch {
		case n.Time:
			o.set("type", "string").set("format", "date-time")
		case n.Text:
			o.set("type", "string")
		}
	case jsonarg.Never:
		o.set("not", newObject())
	case jsonarg.Ptr:
		return orNull(r.node(n.Elem, depth))
	}
	if n.Nullable {
		o = orNull(o)
	}
	return o
}

// define returns the $defs name of the recursive struct n, rendering its
// body the first time.
func (r *renderer) define(n *jsonarg.Node) string {
	if name, ok := r.defs[n]; ok {
		return name
	}
	if r.names == nil {
		r.names = map[string]bool{}
		r.defBodies = map[*jsonarg.Node]*object{}
	}
	base := defName(n.Type)
	name := base
	for i := 2; r.names[name]; i++ {
		name = base + "_" + itoa(i)
	}
	r.names[name] = true
	r.defs[n] = name
	r.defOrder = append(r.defOrder, n)
	r.defBodies[n] = r.body(n, 1)
	return name
}

var nonName = regexp.MustCompile(`[^A-Za-z0-9_]+`)

func defName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer && t.Name() == "" {
		t = t.Elem()
	}
	name := strings.Trim(nonName.ReplaceAllString(t.Name(), "_"), "_")
	if name == "" {
		name = "object"
	}
	return name
}

func (r *renderer) structBody(n *jsonarg.Node, depth int) *object {
	o := newObject().set("type", "object")
	props := newObject()
	var required []any
	for i := range n.Fields {
		f := &n.Fields[i]
		if f.Node.Kind == jsonarg.Never {
			continue // cannot be set: not shown, and rejected if sent
		}
		fs := r.node(f.Node, depth+1)
		if f.Enum != nil {
			fs = withEnum(fs, f.Node, f.Enum)
		}
		if !f.Required {
			fs = orNull(fs)
		}
		if f.Description != "" {
			fs = withDescription(fs, f.Description)
		}
		props.set(f.Name, fs)
		if f.Required {
			required = append(required, f.Name)
		}
	}
	o.set("properties", props)
	if len(required) > 0 {
		o.set("required", required)
	}
	o.set("additionalProperties", false)
	return o
}

// withEnum applies an enum to the innermost scalar of s, which renders n.
func withEnum(s *object, n *jsonarg.Node, enum []any) *object {
	s = s.clone()
	target := s
	for {
		if items, ok := target.get("items"); ok {
			target = items.(*object)
			continue
		}
		if alts, ok := target.get("anyOf"); ok {
			target = alts.([]any)[0].(*object)
			continue
		}
		break
	}
	values := make([]any, 0, len(enum)+1)
	for _, e := range enum {
		values = append(values, enumValue(e))
	}
	if t, _ := target.get("type"); isNullPair(t) {
		values = append(values, nil)
	}
	target.del("minimum")
	target.del("maximum")
	target.set("enum", values)
	return s
}

func enumValue(e any) any {
	switch x := e.(type) {
	case int64:
		return json.Number(itoa64(x))
	case uint64:
		return json.Number(utoa(x))
	}
	return e
}

// withDescription returns s with a description.
func withDescription(s *object, d string) *object {
	s = s.clone()
	s.set("description", d)
	return s
}

// orNull returns s that also accepts null: "null" joins its type (and its
// enum), or, where s has no type of its own, an anyOf with null.
func orNull(s *object) *object {
	if len(s.keys) == 0 {
		return s // accepts anything already
	}
	if t, ok := s.get("type"); ok {
		s = s.clone()
		switch t := t.(type) {
		case string:
			s.set("type", []any{t, "null"})
		case []any:
			for _, have := range t {
				if have == "null" {
					return s
				}
			}
			s.set("type", append(append([]any{}, t...), "null"))
		}
		if e, ok := s.get("enum"); ok {
			s.set("enum", append(append([]any{}, e.([]any)...), nil))
		}
		return s
	}
	if a, ok := s.get("anyOf"); ok {
		for _, alt := range a.([]any) {
			if t, _ := alt.(*object).get("type"); t == "null" {
				return s
			}
		}
	}
	return newObject().set("anyOf", []any{s, newObject().set("type", "null")})
}

func isNullPair(t any) bool {
	l, ok := t.([]any)
	return ok && len(l) == 2 && l[1] == "null"
}

// notNull returns s without null among what it accepts: the arguments'
// root is never null (the decoder rejects it there).
func notNull(s *object) *object {
	if t, ok := s.get("type"); ok && isNullPair(t) {
		s = s.clone()
		s.set("type", t.([]any)[0])
		if e, ok := s.get("enum"); ok {
			l := e.([]any)
			s.set("enum", l[:len(l)-1])
		}
		return s
	}
	if a, ok := s.get("anyOf"); ok && len(s.keys) == 1 {
		if l := a.([]any); len(l) == 2 {
			if t, _ := l[1].(*object).get("type"); t == "null" {
				return l[0].(*object)
			}
		}
	}
	return s
}

// recursiveNodes returns the nodes that can contain themselves: for each
// cycle, the node where a depth-first walk from root closes it.
func recursiveNodes(root *jsonarg.Node) map[*jsonarg.Node]bool {
	rec := map[*jsonarg.Node]bool{}
	state := map[*jsonarg.Node]int{} // 1 on the path, 2 done
	var path []*jsonarg.Node
	var walk func(n *jsonarg.Node)
	walk = func(n *jsonarg.Node) {
		if n == nil {
			return
		}
		switch state[n] {
		case 1:
			// The cycle is path from n on: mark its first struct, which
			// names the $defs entry best, or n.
			mark := n
			for i := len(path) - 1; i >= 0; i-- {
				if path[i] == n {
					for _, c := range path[i:] {
						if c.Kind == jsonarg.Struct {
							mark = c
							break
						}
					}
					break
				}
			}
			rec[mark] = true
			return
		case 2:
			return
		}
		state[n] = 1
		path = append(path, n)
		walk(n.Elem)
		for i := range n.Fields {
			walk(n.Fields[i].Node)
		}
		path = path[:len(path)-1]
		state[n] = 2
	}
	walk(root)
	return rec
}

// keyPattern returns the pattern of a map's keys, or "" for any string.
func keyPattern(k *jsonarg.Node) string {
	switch k.Kind {
	case jsonarg.Int:
		lo, hi := k.IntBounds()
		return "^(?:" + intRange(hi, true) + "|-(?:" + intRange(lo[1:], false) + "))$"
	case jsonarg.Uint:
		_, hi := k.IntBounds()
		return "^(?:" + intRange(hi, true) + ")$"
	}
	return ""
}

// intRange returns a regular expression (without anchors) of the integers
// 0 (when zero is true) or 1 up to hi, in canonical decimal: no sign, no
// leading zero.
func intRange(hi string, zero bool) string {
	var alts []string
	first := "[1-9]"
	if zero {
		first = "[0-9]"
	}
	if len(hi) > 1 {
		alts = append(alts, first)
		switch {
		case len(hi) == 3:
			alts = append(alts, "[1-9][0-9]")
		case len(hi) > 3:
			alts = append(alts, "[1-9][0-9]{1,"+itoa(len(hi)-2)+"}")
		}
	}
	// Numbers of len(hi) digits up to hi: a prefix of hi, a smaller
	// digit, then any digits.
	for i := 0; i < len(hi); i++ {
		lo := byte('0')
		if i == 0 {
			lo = '1'
			if len(hi) == 1 && zero {
				lo = '0'
			}
		}
		top := hi[i]
		if i == len(hi)-1 {
			top++ // the last digit may equal hi's
		}
		if top <= lo {
			continue
		}
		alt := hi[:i] + digitClass(lo, top-1)
		if rest := len(hi) - i - 1; rest > 0 {
			alt += "[0-9]"
			if rest > 1 {
				alt += "{" + itoa(rest) + "}"
			}
		}
		alts = append(alts, alt)
	}
	return strings.Join(alts, "|")
}

func digitClass(lo, hi byte) string {
	if lo == hi {
		return string(lo)
	}
	return "[" + string(lo) + "-" + string(hi) + "]"
}

// Fields returns the JSON field names of a struct type, and those that are
// required; ok is false when the type is not a struct.
func (s *Schema) Fields() (names map[string]bool, required []string, ok bool) {
	root := s.model.Root()
	for root.Kind == jsonarg.Ptr {
		root = root.Elem
	}
	if root.Kind != jsonarg.Struct {
		return nil, nil, false
	}
	names = map[string]bool{}
	for _, f := range root.Fields {
		if f.Node.Kind == jsonarg.Never {
			continue
		}
		names[f.Name] = true
		if f.Required {
			required = append(required, f.Name)
		}
	}
	return names, required, true
}
