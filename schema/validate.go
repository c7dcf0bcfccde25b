package schema

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/toolmw/toolmw/internal/jsonarg"
	"github.com/toolmw/toolmw/taxonomy"
)

// schemaURL is where a compiled schema lives for the compiler: in memory.
const schemaURL = "mem://toolmw/input.json"

// noLoader refuses every URL a schema refers to: a schema from elsewhere
// (a remote MCP server's) must not make toolmw read files or the network.
type noLoader struct{}

func (noLoader) Load(string) (any, error) {
	return nil, errors.New("schemas may refer only to themselves")
}

// load reads a schema document, bounded: at most MaxSchemaBytes, decoded
// with numbers kept exact, then measured against the bounds that hold
// before it is compiled (measure).
func load(doc json.RawMessage) (any, error) {
	if len(doc) > MaxSchemaBytes {
		return nil, costly("the input schema is larger than " + itoa(MaxSchemaBytes) + " bytes")
	}
	root, err := decodeSchema(doc)
	if err != nil {
		return nil, err
	}
	if err := measure(root); err != nil {
		return nil, err
	}
	return root, nil
}

// compile compiles a decoded, measured schema document with the rules of
// the Validator: 2020-12 unless $schema says otherwise, formats asserted
// (date-time by RFC 3339, as Typed decodes a time.Time), no external
// references. Then it measures the compiled schema's expansion (analyse).
func compile(ctx context.Context, doc any) (*jsonschema.Schema, *graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, ctxError(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	c.RegisterFormat(&jsonschema.Format{Name: "date-time", Validate: func(v any) error {
		if s, ok := v.(string); ok && !jsonarg.ValidDateTime(s) {
			return errors.New("not an RFC 3339 date-time")
		}
		return nil
	}})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, nil, definitionError(taxonomy.CodeSchemaInvalid, "the input schema cannot be used")
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, nil, compileError(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, ctxError(err)
	}
	g, err := analyse(ctx, sch)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctxError(ctx.Err())
		}
		return nil, nil, err
	}
	return sch, g, nil
}

// compileError describes why the compiler refused a schema without quoting
// it: the compiler's own messages quote URLs, references and patterns the
// schema supplies. A place in the schema is named by its JSON pointer.
func compileError(err error) error {
	msg := "the input schema is not a valid JSON Schema"
	var (
		sve    *jsonschema.SchemaValidationError
		load   *jsonschema.LoadURLError
		scheme *jsonschema.UnsupportedURLSchemeError
		regex  *jsonschema.InvalidRegexError
		ptr    *jsonschema.JSONPointerNotFoundError
		anchor *jsonschema.AnchorNotFoundError
		dupID  *jsonschema.DuplicateIDError
		dupAn  *jsonschema.DuplicateAnchorError
		draft  *jsonschema.UnsupportedDraftError
		meta   *jsonschema.InvalidMetaSchemaURLError
		vocab  *jsonschema.UnsupportedVocabularyError
	)
	switch {
	case errors.As(err, &sve):
		msg += ": at " + metaPlace(sve.Err) + ": the value breaks the JSON Schema meta-schema"
	case errors.As(err, &load), errors.As(err, &scheme):
		msg += ": it refers to a document outside itself, which toolmw does not load"
	case errors.As(err, &regex):
		msg += ": at " + fragment(regex.URL) + ": a regular expression that cannot be compiled"
	case errors.As(err, &ptr), errors.As(err, &anchor):
		msg += ": a reference points to nothing in the schema"
	case errors.As(err, &dupID), errors.As(err, &dupAn):
		msg += ": two schemas have the same $id or anchor"
	case errors.As(err, &draft), errors.As(err, &meta), errors.As(err, &vocab):
		msg += ": its $schema names a dialect or vocabulary toolmw does not know"
	}
	return definitionError(taxonomy.CodeSchemaInvalid, msg)
}

// metaPlace is the JSON pointer, in the schema document, of the first
// place the meta-schema rejects.
func metaPlace(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "/"
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	var b strings.Builder
	for _, tok := range ve.InstanceLocation {
		b.WriteString("/" + pointerToken(tok))
	}
	return boundPointer(b.String())
}

// fragment is the JSON pointer a compiler URL ends with.
func fragment(url string) string {
	_, frag, _ := strings.Cut(url, "#")
	return boundPointer(frag)
}

// boundPointer keeps a pointer short, and says "/" for the root.
func boundPointer(p string) string {
	if p == "" {
		return "/"
	}
	if len(p) > 200 {
		i := 200
		for i > 0 && !utf8.RuneStart(p[i]) {
			i--
		}
		p = p[:i] + "…"
	}
	return p
}

// Validator checks a call's arguments against an input schema (one written
// by hand, or a remote MCP server's). Its errors are tool-args-invalid
// errors whose field errors have the form Typed's have, {type, loc, msg},
// built from the kind of each failure, never from the validator's message
// (which quotes the offending value); object keys that the schema does not
// declare appear in a loc as "*". A Validator is safe for concurrent use.
type Validator struct {
	sch   *jsonschema.Schema
	g     *graph
	names map[string]bool // every property name the schema declares
	steps int64           // the step budget without the per-byte share; 0: MaxValidationSteps
}

// Compile is [CompileContext] with a context that never ends.
func Compile(doc json.RawMessage) (*Validator, error) {
	return CompileContext(context.Background(), doc)
}

// CompileContext checks doc once, at start-up: it must be a valid JSON
// Schema (2020-12 unless its $schema says otherwise) of an object,
// referring to nothing outside itself, within the bounds on the work a
// schema may cause (MaxSchemaBytes, MaxSchemaDepth, MaxSchemaNodes,
// MaxPatternBytes, MaxSchemaNumberLen, checked before it is compiled, and
// MaxExpansion). Errors are tool-definition-invalid, with code
// schema_invalid, schema_not_object or schema_too_costly. Compiling takes
// tens of milliseconds at most; ctx is checked before and after: when it
// has ended, the error is a tool-timeout error with code deadline_exceeded
// (its deadline passed) or ctx's own error (it was cancelled). A nil ctx
// never ends.
func CompileContext(ctx context.Context, doc json.RawMessage) (*Validator, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxError(err)
	}
	root, err := load(doc)
	if err != nil {
		return nil, err
	}
	sch, g, err := compile(ctx, root)
	if err != nil {
		return nil, err
	}
	if err := objectRoot(root); err != nil {
		return nil, err
	}
	v := &Validator{sch: sch, g: g, names: map[string]bool{}}
	collectNames(root, v.names)
	return v, nil
}

func collectNames(v any, names map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			if k == "properties" || k == "patternProperties" || k == "dependentSchemas" || k == "dependentRequired" {
				if m, ok := sub.(map[string]any); ok {
					for name := range m {
						names[name] = true
					}
				}
			}
			if k == "required" {
				if l, ok := sub.([]any); ok {
					for _, e := range l {
						if s, ok := e.(string); ok {
							names[s] = true
						}
					}
				}
			}
			collectNames(sub, names)
		}
	case []any:
		for _, e := range x {
			collectNames(e, names)
		}
	}
}

// Validate is [Validator.ValidateContext] with a context that never ends.
func (v *Validator) Validate(args json.RawMessage, maxBytes int) error {
	return v.ValidateContext(context.Background(), args, maxBytes)
}

// ValidateContext checks args. Arguments over maxBytes (toolmw's default
// of 1 MiB when maxBytes ≤ 0) are rejected unread (code args_too_large);
// then the checks every argument gets, as Typed applies them (JSON syntax,
// one value, valid UTF-8, unique keys, number bounds, nesting depth), then
// the schema. Empty or blank args stand for {}.
//
// The work is bounded before the validator runs: the steps validating
// args may take are counted, every branch included, and arguments past
// the budget (MaxValidationSteps, plus ValidationStepsPerByte for each
// byte of args) are tool-args-invalid with code args_too_costly. The
// count stops when ctx ends; a validation large enough to matter runs on
// its own goroutine, whose work the count bounds, and the caller stops
// waiting for it when ctx ends. Ended by its context, validation returns a
// tool-timeout error with code deadline_exceeded (the deadline passed; it
// matches context.DeadlineExceeded) or ctx's own error (cancelled). A nil
// ctx never ends.
func (v *Validator) ValidateContext(ctx context.Context, args json.RawMessage, maxBytes int) error {
	if ctx == nil {
		ctx = context.Background()
	}
	doc, err := jsonarg.Parse(args, maxBytes)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return ctxError(err)
	}
	limit := v.steps
	if limit == 0 {
		limit = MaxValidationSteps
	}
	m := meter{ctx: ctx, g: v.g, limit: limit + ValidationStepsPerByte*int64(len(args))}
	if !m.visit(v.sch, doc, 0, 0, 0) {
		return m.err
	}
	if m.steps <= inlineSteps || ctx.Done() == nil {
		return v.check(doc)
	}
	// The validator reads no context: run it where the caller need not
	// wait for it past ctx's end. Its work is bounded by the count above,
	// so a goroutine left behind ends soon, and their number by
	// MaxConcurrentValidations; a panic in it is the caller's, if the
	// caller still waits.
	if !validations.take() {
		return errValidationBusy
	}
	type outcome struct {
		err   error
		panic any
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			validations.release()
			if r := recover(); r != nil {
				o.panic = r
			}
			done <- o
		}()
		if testHookCheck != nil {
			testHookCheck()
		}
		o.err = v.check(doc)
		if testHookChecked != nil {
			testHookChecked()
		}
	}()
	select {
	case o := <-done:
		if o.panic != nil {
			panic(o.panic)
		}
		return o.err
	case <-ctx.Done():
		return ctxError(ctx.Err())
	}
}

// validations counts the validations running on goroutines of their own,
// held to MaxConcurrentValidations.
var validations slots

// slots is a counter with a ceiling, taken and released without blocking.
type slots struct{ n atomic.Int64 }

func (s *slots) take() bool {
	for {
		n := s.n.Load()
		if n >= MaxConcurrentValidations {
			return false
		}
		if s.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (s *slots) release() { s.n.Add(-1) }

// errValidationBusy: MaxConcurrentValidations validations already run.
var errValidationBusy = taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeValidationBusy,
	"the process is validating as many large arguments as it may; nothing ran; try again")

// Test hooks around a validation on its own goroutine.
var testHookCheck, testHookChecked func()

// check runs the validator on the parsed document and turns its verdict
// into value-free field errors.
func (v *Validator) check(doc any) error {
	err := v.sch.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "value_error", Loc: []any{}, Msg: "Input does not match the schema"})
	}
	c := collector{names: v.names, doc: doc}
	c.collect(ve)
	if len(c.errs) == 0 {
		c.errs = append(c.errs, taxonomy.FieldError{Type: "value_error", Loc: []any{}, Msg: "Input does not match the schema"})
	}
	return taxonomy.ArgsInvalid(c.errs...)
}

// collector turns a validation error tree into value-free field errors.
type collector struct {
	names map[string]bool
	doc   any
	errs  []taxonomy.FieldError
}

func (c *collector) add(loc []any, typ, msg string) {
	if len(c.errs) >= jsonarg.MaxFieldErrors {
		return
	}
	for _, e := range c.errs {
		if e.Type == typ && e.Msg == msg && equalLoc(e.Loc, loc) {
			return
		}
	}
	c.errs = append(c.errs, taxonomy.FieldError{Type: typ, Loc: loc, Msg: msg})
}

func equalLoc(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// loc maps an instance location to a field error loc: array indices become
// ints, keys the schema declares stay, other keys become the placeholder.
func (c *collector) loc(path []string) []any {
	out := make([]any, 0, len(path))
	cur := c.doc
	for _, tok := range path {
		switch x := cur.(type) {
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return append(out, jsonarg.Placeholder)
			}
			out = append(out, i)
			cur = x[i]
		case map[string]any:
			if c.names[tok] {
				out = append(out, tok)
			} else {
				out = append(out, jsonarg.Placeholder)
			}
			cur = x[tok]
		default:
			return append(out, jsonarg.Placeholder)
		}
	}
	return out
}

func (c *collector) key(loc []any, name string) []any {
	l := append(append([]any{}, loc...), jsonarg.Placeholder)
	if c.names[name] {
		l[len(l)-1] = name
	}
	return l
}

func (c *collector) collect(e *jsonschema.ValidationError) {
	loc := c.loc(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Group, *kind.Schema, *kind.Reference, *kind.AllOf, nil:
		for _, cause := range e.Causes {
			c.collect(cause)
		}
	case *kind.AnyOf, *kind.OneOf:
		// Report the one alternative that came close, if there is one;
		// otherwise that none matched.
		var close []*jsonschema.ValidationError
		for _, cause := range e.Causes {
			if !wrongType(cause, len(e.InstanceLocation)) {
				close = append(close, cause)
			}
		}
		if _, one := k.(*kind.OneOf); one && len(e.Causes) == 0 {
			c.add(loc, "union_ambiguous", "Input matches more than one of the allowed forms")
			return
		}
		if len(close) == 1 {
			c.collect(close[0])
			return
		}
		c.add(loc, "union_mismatch", "Input should match one of the allowed forms")
	case *kind.Type:
		c.add(loc, typeError(k.Want), "Input should be "+article(k.Want))
	case *kind.Required:
		for _, name := range k.Missing {
			c.add(c.key(loc, name), "missing", "Field required")
		}
	case *kind.DependentRequired:
		for _, name := range k.Missing {
			c.add(c.key(loc, name), "missing", "Field required")
		}
	case *kind.Dependency:
		for _, name := range k.Missing {
			c.add(c.key(loc, name), "missing", "Field required")
		}
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			c.add(c.key(loc, name), "extra_forbidden", "Extra inputs are not permitted")
		}
	case *kind.PropertyNames:
		c.add(c.key(loc, k.Property), "invalid_key", "Key does not match the schema's property names")
	case *kind.Enum:
		c.add(loc, "enum", "Input should be one of the values the schema allows")
	case *kind.Const:
		c.add(loc, "const", "Input should be the value the schema fixes")
	case *kind.Format:
		c.add(loc, "format", "Input should be a valid "+k.Want+" string")
	case *kind.MinLength:
		c.add(loc, "string_too_short", "Input should have at least "+strconv.Itoa(k.Want)+" characters")
	case *kind.MaxLength:
		c.add(loc, "string_too_long", "Input should have at most "+strconv.Itoa(k.Want)+" characters")
	case *kind.Pattern:
		c.add(loc, "string_pattern_mismatch", "Input should match the pattern "+k.Want)
	case *kind.Minimum:
		c.add(loc, "greater_than_equal", "Input should be greater than or equal to "+k.Want.RatString())
	case *kind.Maximum:
		c.add(loc, "less_than_equal", "Input should be less than or equal to "+k.Want.RatString())
	case *kind.ExclusiveMinimum:
		c.add(loc, "greater_than", "Input should be greater than "+k.Want.RatString())
	case *kind.ExclusiveMaximum:
		c.add(loc, "less_than", "Input should be less than "+k.Want.RatString())
	case *kind.MultipleOf:
		c.add(loc, "multiple_of", "Input should be a multiple of "+k.Want.RatString())
	case *kind.MinItems:
		c.add(loc, "too_short", "Input should have at least "+strconv.Itoa(k.Want)+" items")
	case *kind.MaxItems:
		c.add(loc, "too_long", "Input should have at most "+strconv.Itoa(k.Want)+" items")
	case *kind.AdditionalItems:
		c.add(loc, "too_long", "Input should have at most "+strconv.Itoa(k.Count)+" items")
	case *kind.UniqueItems:
		c.add(loc, "unique_items", "Input should have unique items")
	case *kind.MinProperties:
		c.add(loc, "too_few_properties", "Input should have at least "+strconv.Itoa(k.Want)+" properties")
	case *kind.MaxProperties:
		c.add(loc, "too_many_properties", "Input should have at most "+strconv.Itoa(k.Want)+" properties")
	case *kind.Contains, *kind.MinContains, *kind.MaxContains:
		c.add(loc, "contains", "Input should contain the items the schema asks for")
	case *kind.FalseSchema:
		c.add(loc, "forbidden", "This value is not permitted")
	case *kind.Not:
		c.add(loc, "not", "Input should not match the excluded schema")
	case *kind.ContentEncoding, *kind.ContentMediaType, *kind.ContentSchema:
		c.add(loc, "content", "Input should have the content the schema describes")
	default:
		c.add(loc, "value_error", "Input does not match the schema")
	}
}

// wrongType reports whether e is nothing but a type mismatch at the
// instance location of depth n: an alternative that was never close.
func wrongType(e *jsonschema.ValidationError, n int) bool {
	switch e.ErrorKind.(type) {
	case *kind.Type, *kind.Const, *kind.Enum:
		return len(e.InstanceLocation) == n
	case *kind.Group, *kind.Schema, *kind.Reference:
		if len(e.Causes) == 1 {
			return wrongType(e.Causes[0], n)
		}
	}
	return false
}

func typeError(want []string) string {
	if len(want) == 0 {
		return "value_type"
	}
	switch want[0] {
	case "integer":
		return "int_type"
	case "number":
		return "float_type"
	case "boolean":
		return "bool_type"
	}
	return want[0] + "_type"
}

func article(want []string) string {
	var parts []string
	for _, w := range want {
		switch w {
		case "integer":
			parts = append(parts, "a valid integer")
		case "null":
			parts = append(parts, "null")
		case "array", "object":
			parts = append(parts, "a valid "+w)
		default:
			parts = append(parts, "a valid "+w)
		}
	}
	return strings.Join(parts, " or ")
}
