package schema

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolmw/toolmw/internal/jsonarg"
	"github.com/toolmw/toolmw/taxonomy"
)

// The bounds on the work a schema may cause. A schema document past one of
// the first six is refused before it is compiled (tool-definition-invalid,
// code schema_too_costly), so that no schema takes long to compile and no
// call takes long to validate; the last two bound each call's validation.
const (
	// MaxSchemaBytes bounds the size of a schema document, in bytes.
	MaxSchemaBytes = 256 << 10
	// MaxSchemaDepth bounds how deeply a schema document nests: every
	// object and array counts one level, the document itself the first.
	MaxSchemaDepth = 64
	// MaxSchemaNodes bounds how many JSON objects and booleans a schema
	// document holds, anywhere in it: each may be a schema that the
	// validator compiles, and compiling takes time that grows with the
	// square of their number.
	MaxSchemaNodes = 512
	// MaxPatternBytes bounds the regular expressions of a schema
	// document (pattern values and patternProperties names), in bytes
	// all told.
	MaxPatternBytes = 16 << 10
	// MaxSchemaNumberLen bounds every number in a schema document as
	// arguments' numbers are bounded: at most 64 characters and at most 3
	// exponent digits, so comparing with one costs little.
	MaxSchemaNumberLen = jsonarg.MaxNumberLen
	// MaxExpansion bounds how many schemas one value is checked against
	// at one place in the arguments: the schema itself, and every schema
	// it applies there through $ref, $dynamicRef, $recursiveRef, allOf,
	// anyOf, oneOf, not, if, then, else and dependentSchemas, each path
	// counted. A cycle of these that never steps into the arguments is
	// refused too: it has no end.
	MaxExpansion = 1000

	// MaxValidationSteps is the budget of validating one call's
	// arguments, in steps, plus ValidationStepsPerByte for every byte of
	// them. A step is one schema applied to one value, or an equal share
	// of the larger work some keywords do (a pattern matched against a
	// long string, an enum compared, a dynamic reference resolved).
	// Arguments whose validation would take more are refused before the
	// validator runs: tool-args-invalid, code args_too_costly.
	MaxValidationSteps = 1 << 16
	// ValidationStepsPerByte is the budget each byte of arguments adds to
	// MaxValidationSteps: large arguments take longer, by a bounded
	// factor.
	ValidationStepsPerByte = 4
	// MaxValidationDepth bounds how many schema applications may nest
	// within one another while a call is validated (the validator recurses
	// once for each, on one goroutine's stack): past it, the arguments are
	// too costly (args_too_costly).
	MaxValidationDepth = 4096
	// inlineSteps is the work below which a validation runs on the
	// caller's goroutine; above it, the caller stops waiting when its
	// context ends.
	inlineSteps = 1 << 10
	// MaxConcurrentValidations bounds, per process, the validations that
	// run on goroutines of their own (those counted above inlineSteps):
	// the caller stops waiting for one at its context's end, and the
	// goroutine goes on until its bounded work is done. Past the bound a
	// call that needs one is refused at once, rate-limited/validation_busy,
	// retryable, and nothing runs; so callers whose deadlines pass cannot
	// pile up validations without end.
	MaxConcurrentValidations = 256
)

// costly is a schema_too_costly definition error.
func costly(msg string) error {
	return definitionError(taxonomy.CodeSchemaTooCostly, msg)
}

// measure checks a decoded schema document against the bounds that hold
// before it is compiled: depth, nodes, pattern bytes, numbers.
func measure(doc any) error {
	m := docMeter{}
	if err := m.walk(doc, 1, false); err != nil {
		return err
	}
	return nil
}

type docMeter struct {
	nodes    int
	patterns int
}

// walk measures v at depth (the document is at 1); keyed tells that v's
// members are names (of properties, definitions), not keywords, so that a
// property named "pattern" is not taken for a regular expression.
func (m *docMeter) walk(v any, depth int, keyed bool) error {
	switch x := v.(type) {
	case map[string]any:
		if depth > MaxSchemaDepth {
			return costly("the input schema nests more than " + itoa(MaxSchemaDepth) + " levels deep")
		}
		if m.nodes++; m.nodes > MaxSchemaNodes {
			return costly("the input schema holds more than " + itoa(MaxSchemaNodes) + " objects and booleans")
		}
		for k, sub := range x {
			switch k {
			case "pattern":
				if s, ok := sub.(string); ok && !keyed {
					if err := m.pattern(len(s)); err != nil {
						return err
					}
				}
			case "patternProperties":
				if pp, ok := sub.(map[string]any); ok && !keyed {
					for name := range pp {
						if err := m.pattern(len(name)); err != nil {
							return err
						}
					}
				}
			}
			// The members of these objects are names, not keywords.
			names := k == "properties" || k == "patternProperties" || k == "$defs" || k == "definitions" ||
				k == "dependentSchemas" || k == "dependencies" || k == "dependentRequired"
			if err := m.walk(sub, depth+1, names && !keyed); err != nil {
				return err
			}
		}
	case []any:
		if depth > MaxSchemaDepth {
			return costly("the input schema nests more than " + itoa(MaxSchemaDepth) + " levels deep")
		}
		for _, e := range x {
			if err := m.walk(e, depth+1, false); err != nil {
				return err
			}
		}
	case bool:
		if m.nodes++; m.nodes > MaxSchemaNodes {
			return costly("the input schema holds more than " + itoa(MaxSchemaNodes) + " objects and booleans")
		}
	case json.Number:
		if !boundedNumber(string(x)) {
			return costly("a number in the input schema has more than " + itoa(MaxSchemaNumberLen) + " characters or more than " +
				itoa(jsonarg.MaxExponentDigits) + " exponent digits")
		}
	}
	return nil
}

func (m *docMeter) pattern(n int) error {
	if m.patterns += n; m.patterns > MaxPatternBytes {
		return costly("the input schema's regular expressions exceed " + itoa(MaxPatternBytes) + " bytes in all")
	}
	return nil
}

// boundedNumber reports whether the JSON number lit has at most
// MaxSchemaNumberLen characters and at most jsonarg.MaxExponentDigits
// exponent digits.
func boundedNumber(lit string) bool {
	if len(lit) > MaxSchemaNumberLen {
		return false
	}
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		exp := strings.TrimLeft(lit[i+1:], "+-")
		if len(exp) > jsonarg.MaxExponentDigits {
			return false
		}
	}
	return true
}

// Type bits of a compiled schema's "type", in the meter's terms.
const (
	tNull = 1 << iota
	tBool
	tObject
	tArray
	tNumber // number or integer
	tString
)

// node is what the meter knows of one compiled schema.
type node struct {
	types   uint8 // 0: any
	integer bool  // "integer" without "number": a number needs a check
	fixed   int64 // the steps of applying it whatever the value: enum, const, required
	pattern int64 // the length of its pattern, 0 without one
	anchors []*jsonschema.Schema
}

// graph is what a Validator knows of its compiled schema to bound the work
// of validating: every schema reachable from the root, and the candidates
// of each dynamic reference.
type graph struct {
	nodes   map[*jsonschema.Schema]*node
	dynamic map[string][]*jsonschema.Schema // $dynamicAnchor name → schemas
	rec     []*jsonschema.Schema            // schemas with $recursiveAnchor
	uneval  bool                            // some schema has unevaluated*
}

// analyse walks the compiled schema, checks its expansion, and returns what
// the meter needs.
func analyse(ctx context.Context, root *jsonschema.Schema) (*graph, error) {
	g := &graph{nodes: map[*jsonschema.Schema]*node{}, dynamic: map[string][]*jsonschema.Schema{}}
	stack := []*jsonschema.Schema{root}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s == nil || g.nodes[s] != nil {
			continue
		}
		n := &node{}
		g.nodes[s] = n
		if len(g.nodes) > 4*MaxSchemaNodes {
			return nil, costly("the input schema compiles to more than " + itoa(4*MaxSchemaNodes) + " schemas")
		}
		if s.Types != nil {
			for _, t := range s.Types.ToStrings() {
				switch t {
				case "null":
					n.types |= tNull
				case "boolean":
					n.types |= tBool
				case "object":
					n.types |= tObject
				case "array":
					n.types |= tArray
				case "number", "integer":
					n.types |= tNumber
				case "string":
					n.types |= tString
				}
			}
			ts := s.Types.ToStrings()
			n.integer = contains(ts, "integer") && !contains(ts, "number")
		}
		if s.Enum != nil {
			n.fixed += compareCost(s.Enum.Values...)
		}
		if s.Const != nil {
			n.fixed += compareCost(*s.Const)
		}
		n.fixed += int64(len(s.Required))
		for _, r := range s.DependentRequired {
			n.fixed += int64(len(r))
		}
		n.fixed += int64(len(s.Dependencies) + len(s.DependentSchemas) + len(s.DependentRequired))
		if s.Pattern != nil {
			n.pattern = int64(len(s.Pattern.String()))
		}
		if s.DynamicAnchor != "" {
			g.dynamic[s.DynamicAnchor] = append(g.dynamic[s.DynamicAnchor], s)
		}
		if s.RecursiveAnchor {
			g.rec = append(g.rec, s)
		}
		if s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil {
			g.uneval = true
		}
		stack = append(stack, children(s)...)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The candidates of each dynamic reference, known now that every
	// anchor is.
	for s, n := range g.nodes {
		if d := s.DynamicRef; d != nil && d.Anchor != "" && d.Ref != nil && d.Ref.DynamicAnchor == d.Anchor {
			n.anchors = g.dynamic[d.Anchor]
		}
		if r := s.RecursiveRef; r != nil && r.RecursiveAnchor {
			n.anchors = g.rec
		}
	}
	// The expansion of every schema: itself and what it applies at the
	// same place, each path counted; a cycle has no end.
	exp := make(map[*jsonschema.Schema]int, len(g.nodes))
	const onPath = -1
	var expand func(s *jsonschema.Schema) (int, error)
	expand = func(s *jsonschema.Schema) (int, error) {
		switch e := exp[s]; {
		case e == onPath:
			return 0, costly("the input schema applies itself at the same place in the arguments through a cycle of references or combinators that never ends")
		case e > 0:
			return e, nil
		}
		exp[s] = onPath
		total := 1
		for _, c := range g.same(s) {
			e, err := expand(c)
			if err != nil {
				return 0, err
			}
			if total += e; total > MaxExpansion {
				return 0, costly("a value would be checked against more than " + itoa(MaxExpansion) +
					" schemas at one place in the arguments (through $ref and allOf, anyOf, oneOf, not, if/then/else)")
			}
		}
		exp[s] = total
		return total, nil
	}
	for s := range g.nodes {
		if _, err := expand(s); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// same returns the schemas s applies to the value it is applied to, at the
// same place: references (every candidate of a dynamic one) and
// combinators.
func (g *graph) same(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(c *jsonschema.Schema) {
		if c != nil {
			out = append(out, c)
		}
	}
	add(s.Ref)
	if s.DynamicRef != nil {
		add(s.DynamicRef.Ref)
	}
	add(s.RecursiveRef)
	if n := g.nodes[s]; n != nil {
		out = append(out, n.anchors...)
	}
	add(s.Not)
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	add(s.If)
	add(s.Then)
	add(s.Else)
	for _, c := range s.DependentSchemas {
		add(c)
	}
	for _, d := range s.Dependencies {
		if c, ok := d.(*jsonschema.Schema); ok {
			add(c)
		}
	}
	return out
}

// children returns every schema s refers to.
func children(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(c *jsonschema.Schema) {
		if c != nil {
			out = append(out, c)
		}
	}
	addAny := func(v any) {
		switch x := v.(type) {
		case *jsonschema.Schema:
			add(x)
		case []*jsonschema.Schema:
			out = append(out, x...)
		}
	}
	add(s.Ref)
	if s.DynamicRef != nil {
		add(s.DynamicRef.Ref)
	}
	add(s.RecursiveRef)
	add(s.Not)
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	add(s.If)
	add(s.Then)
	add(s.Else)
	add(s.PropertyNames)
	for _, c := range s.Properties {
		add(c)
	}
	for _, c := range s.PatternProperties {
		add(c)
	}
	addAny(s.AdditionalProperties)
	for _, d := range s.Dependencies {
		addAny(d)
	}
	for _, c := range s.DependentSchemas {
		add(c)
	}
	add(s.UnevaluatedProperties)
	add(s.Contains)
	addAny(s.Items)
	addAny(s.AdditionalItems)
	out = append(out, s.PrefixItems...)
	add(s.Items2020)
	add(s.UnevaluatedItems)
	add(s.ContentSchema)
	return out
}

// compareCost is the steps of comparing a value with each of values: a
// number is read into a big.Rat each time (a step), an object or array is
// walked (a step per value in it), strings, booleans and null are cheap (a
// step for 64 of them).
func compareCost(values ...any) int64 {
	var steps, cheap int64
	for _, v := range values {
		switch v.(type) {
		case map[string]any, []any:
			steps += size(v)
		case json.Number:
			steps++
		default:
			cheap++
		}
	}
	return steps + (cheap+63)/64
}

// size is the number of JSON values in v, v included.
func size(v any) int64 {
	switch x := v.(type) {
	case map[string]any:
		n := int64(1)
		for k, e := range x {
			n += int64(len(k)/16) + size(e)
		}
		return n
	case []any:
		n := int64(1)
		for _, e := range x {
			n += size(e)
		}
		return n
	case string:
		return 1 + int64(len(x)/16)
	}
	return 1
}

// meter counts, before the validator runs, an upper bound of the steps
// validating one document takes: it applies every schema the validator
// may apply, on every branch (the validator stops at the first matching
// alternative of an anyOf, the meter does not), and charges each keyword
// for the work it does. It stops at the budget, or when ctx ends.
type meter struct {
	ctx   context.Context
	g     *graph
	steps int64
	limit int64
	tick  int64
	err   error
}

// errTooCostly is the error of arguments whose validation would take more
// than the budget.
var errTooCostly = taxonomy.New(taxonomy.KindArgsInvalid, taxonomy.CodeArgsTooCostly,
	"validating the arguments against the tool's input schema would take more than the step budget").
	WithFields(taxonomy.FieldError{Type: "too_costly", Loc: []any{}, Msg: "Input is too costly to validate against the schema"})

func (m *meter) charge(n int64) bool {
	if m.err != nil {
		return false
	}
	m.steps += n
	if m.steps > m.limit {
		m.err = errTooCostly
		return false
	}
	if m.tick += n; m.tick >= 1024 {
		m.tick = 0
		if err := m.ctx.Err(); err != nil {
			m.err = ctxError(err)
			return false
		}
	}
	return true
}

// visit charges applying s to v: chain is how many applications enclose
// this one, same how many of them apply to v itself, depth how deep v is in
// the document.
func (m *meter) visit(s *jsonschema.Schema, v any, chain, same, depth int) bool {
	if chain > MaxValidationDepth {
		m.err = errTooCostly
		return false
	}
	n := m.g.nodes[s]
	if n == nil {
		n = &node{}
	}
	if !m.charge(1 + int64(same) + int64(depth/16) + n.fixed) {
		return false
	}
	if s.Bool != nil {
		return true
	}
	t := typeBit(v)
	if n.types != 0 && n.types&t == 0 {
		return true // a type mismatch ends the schema's checks
	}
	if n.integer && t == tNumber && !m.charge(1) {
		return false
	}
	here := func(c *jsonschema.Schema) bool {
		return c == nil || m.visit(c, v, chain+1, same+1, depth)
	}
	under := func(c *jsonschema.Schema, e any) bool {
		return c == nil || m.visit(c, e, chain+1, 0, depth+1)
	}
	if !here(s.Ref) {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		if m.g.uneval && !m.charge(int64(len(x))) {
			return false
		}
		for k, e := range x {
			if !m.charge(1) || !under(s.Properties[k], e) {
				return false
			}
			for re, c := range s.PatternProperties {
				if !m.charge(regexCost(len(k), len(re.String()))) || !under(c, e) {
					return false
				}
			}
			if c, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !under(c, e) {
				return false
			}
			if !under(s.PropertyNames, k) || !under(s.UnevaluatedProperties, e) {
				return false
			}
		}
		for k, d := range s.Dependencies {
			if c, ok := d.(*jsonschema.Schema); ok {
				if _, present := x[k]; present && !here(c) {
					return false
				}
			}
		}
		for k, c := range s.DependentSchemas {
			if _, present := x[k]; present && !here(c) {
				return false
			}
		}
	case []any:
		if m.g.uneval && !m.charge(int64(len(x))) {
			return false
		}
		if s.UniqueItems && !m.charge(size(x)) {
			return false
		}
		for i, e := range x {
			if !m.charge(1) {
				return false
			}
			switch items := s.Items.(type) {
			case *jsonschema.Schema:
				if !under(items, e) {
					return false
				}
			case []*jsonschema.Schema:
				if i < len(items) && !under(items[i], e) {
					return false
				}
			}
			if c, ok := s.AdditionalItems.(*jsonschema.Schema); ok && !under(c, e) {
				return false
			}
			if i < len(s.PrefixItems) && !under(s.PrefixItems[i], e) {
				return false
			}
			if !under(s.Items2020, e) || !under(s.Contains, e) || !under(s.UnevaluatedItems, e) {
				return false
			}
		}
	case string:
		if (s.MinLength != nil || s.MaxLength != nil) && !m.charge(1+int64(len(x)/16)) {
			return false
		}
		if n.pattern > 0 && !m.charge(regexCost(len(x), int(n.pattern))) {
			return false
		}
		if s.Format != nil {
			cost := 1 + int64(len(x)/8)
			if s.Format.Name == "regex" {
				cost = 1 + int64(len(x))
			}
			if !m.charge(cost) {
				return false
			}
		}
	case json.Number:
		// The number is read once (a big.Rat) and compared with each.
		if (s.Minimum != nil || s.Maximum != nil || s.ExclusiveMinimum != nil || s.ExclusiveMaximum != nil || s.MultipleOf != nil) &&
			!m.charge(1) {
			return false
		}
	}
	if d := s.DynamicRef; d != nil {
		if !m.charge(int64(chain)) || !here(d.Ref) {
			return false
		}
		for _, c := range n.anchors {
			if !here(c) {
				return false
			}
		}
	}
	if s.RecursiveRef != nil {
		if !m.charge(int64(chain)) || !here(s.RecursiveRef) {
			return false
		}
		for _, c := range n.anchors {
			if !here(c) {
				return false
			}
		}
	}
	if !here(s.Not) {
		return false
	}
	for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for _, c := range list {
			if !here(c) {
				return false
			}
		}
	}
	return here(s.If) && here(s.Then) && here(s.Else)
}

// regexCost is the steps of matching a string of n bytes with a regular
// expression of p bytes: linear in both (Go's regular expressions do not
// backtrack).
func regexCost(n, p int) int64 {
	return 1 + int64(n/16)*(1+int64(p/16))
}

func typeBit(v any) uint8 {
	switch v.(type) {
	case nil:
		return tNull
	case bool:
		return tBool
	case map[string]any:
		return tObject
	case []any:
		return tArray
	case string:
		return tString
	}
	return tNumber
}

// ctxError is the error of validation ended by its context: a deadline is
// a tool-timeout error with code deadline_exceeded (it matches
// context.DeadlineExceeded); a cancellation is returned as is.
func ctxError(err error) error {
	if err == context.DeadlineExceeded {
		return taxonomy.Timeout(taxonomy.CodeDeadlineExceeded, "the call's deadline passed while its arguments were validated", false).WithCause(err)
	}
	return err
}
