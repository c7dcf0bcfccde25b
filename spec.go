package toolmw

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/toolmw/toolmw/internal/jsonarg"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
)

// Spec describes a tool to the model and to the layers.
//
// Wrap keeps its own copy.
type Spec struct {
	// Name is what the model calls the tool: 1 to 64 of a-z, A-Z, 0-9, '_'
	// and '-', the rule the major model APIs share.
	Name string
	// Description tells the model what the tool does.
	Description string
	// Idempotent declares that making the same call twice has the effect of
	// making it once. Only then (or with HonoursKeys) are untyped errors and
	// timeouts retried, and calls hedged.
	Idempotent bool
	// HonoursKeys declares that the tool sends its call's idempotency key
	// ([Call.Key]) upstream, typically as an Idempotency-Key header, and
	// that its supplier carries out a request whose key it has already seen
	// at most once. Repeating such a call is then as safe as repeating an
	// idempotent one: its untyped failures and timeouts are retried, and
	// [Call.Idempotent] reports true, for every layer that decides on it —
	// except a fallback's last-good cache, which serves reads only
	// (Idempotent): a key-honouring tool's last result is a receipt.
	// Declare it only when the supplier really deduplicates by key.
	HonoursKeys bool
	// InputSchema is the JSON Schema of the arguments (an object schema).
	// Wrap fills it for a tool made by [Typed] with the schema of its input
	// type ([schema.Plain]). Set by hand (a raw tool, a remote MCP server's
	// tool), it is checked once at Wrap — a valid JSON Schema of an object,
	// referring to nothing outside itself, within the bounds on the work a
	// schema may cause (schema_too_costly; see package schema) — and every
	// call's arguments are validated against it before the tool runs,
	// under the call's context and a step budget (tool-args-invalid, with
	// value-free field errors; args_too_costly past the budget). Set for a
	// Typed tool, it wins, and must agree with the input type: each
	// property a field, each required field required. Nil for a raw tool
	// that checks its own arguments: it takes any object
	// ([AnyObjectSchema]).
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema of the tool's structured output: its
	// JSON result, or its JSON part. Wrap fills it for a tool made by
	// [Typed] whose output type is a JSON object (a struct or a map with
	// string keys), from that type ([schema.Plain]); set by hand, it wins,
	// and is checked once at Wrap as InputSchema is: a valid JSON Schema of
	// an object, referring to nothing outside itself, within the bounds on
	// the work a schema may cause (tool-definition-invalid otherwise). It
	// is not checked against Profiles: no model API but MCP takes an output
	// schema, and a profile that cannot express it is shown none (see
	// [Toolbox.Definitions]). An adapter publishes it where the API has a
	// place for it (MCP's outputSchema), and the result layer checks
	// results against it, bounded as arguments are. Nil means the tool's
	// output has no declared shape.
	OutputSchema json.RawMessage
	// MaxArgsBytes caps the size of a call's arguments, checked before they
	// are read: 0 means [DefaultMaxArgsBytes] (1 MiB); a negative value is
	// a definition error. Larger arguments are tool-args-invalid with code
	// args_too_large.
	MaxArgsBytes int
	// Profiles lists the model APIs the tool will be offered to: Wrap
	// reports a schema that one of them would reject as a
	// tool-definition-invalid error at start-up, with a code naming why
	// (schema_ref_unsupported, schema_keyword_unsupported, …). See
	// [schema.Check]. Empty: no portability check.
	Profiles []schema.Profile
	// ResultJSON declares that the tool's results are JSON documents; the
	// result layer then checks that they are.
	ResultJSON bool
	// Type is the OpenTelemetry gen_ai.tool.type: "function" (the default
	// when empty), "extension" or "datastore".
	Type string
}

// ValidName reports whether name is a valid tool name: 1 to 64 bytes of
// a-z, A-Z, 0-9, '_' and '-'.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Validate reports what makes the spec unusable, as a
// tool-definition-invalid error, or nil: a bad name, a negative
// MaxArgsBytes, an unknown profile. The input schema is checked by Wrap,
// which knows the tool.
func (s Spec) Validate() error {
	if !ValidName(s.Name) {
		return definitionError(s.Name, taxonomy.CodeNameInvalid,
			fmt.Sprintf("tool name %s must match ^[a-zA-Z0-9_-]{1,64}$", quoteName(s.Name)))
	}
	if s.MaxArgsBytes < 0 {
		return definitionError(s.Name, taxonomy.CodeOptionInvalid, "MaxArgsBytes must not be negative, got "+strconv.Itoa(s.MaxArgsBytes))
	}
	for _, p := range s.Profiles {
		if p < 0 || p >= schema.Profile(len(schema.Profiles())) {
			return definitionError(s.Name, taxonomy.CodeOptionInvalid, "unknown schema profile "+p.String())
		}
	}
	return nil
}

// Wrap validates spec and tool at start-up and returns the tool decorated
// with mws (the first outermost). A bad name, a nil tool, a nil middleware
// or a layer given an invalid option (see [Reject]) is a
// tool-definition-invalid error, never a surprise mid-request; so is an
// input schema that cannot be used, or that one of spec.Profiles would
// reject.
//
// A tool made by [Typed] gives the spec its input schema, and its output
// schema when its output type is a JSON object; a spec's own OutputSchema
// is checked here as its own InputSchema is. A spec's own
// InputSchema is compiled once here ([schema.Compile]: a schema past the
// bounds on its work is schema_too_costly) and checks every call's
// arguments before the tool runs ([schema.Validator.ValidateContext], under
// the call's context and a step budget). Arguments over the size cap
// ([Spec.MaxArgsBytes]) are rejected unread. These checks run innermost,
// next to the tool, so every layer sees their errors as it sees the
// tool's, and a timeout layer's deadline bounds them.
//
// Each call through the returned Tool carries a [Call] in its context. A
// typed error of type *taxonomy.ToolError that leaves the chain without a
// tool name is given the spec's name. A nil context is a tool-failed error
// with code context_nil.
func Wrap(spec Spec, tool Tool, mws ...Middleware) (Tool, error) {
	t, _, err := wrap(spec, tool, mws)
	return t, err
}

// wrapped is what Wrap learns about a tool, kept by a Toolbox to describe
// it.
type wrapped struct {
	spec     Spec
	typed    *schema.Schema // the input schema of a Typed tool without its own
	typedOut *schema.Schema // the output schema of a Typed tool without its own

	mu      sync.Mutex
	adapted map[shownKey]adaptation // the spec's own schemas, per profile shown
}

func wrap(spec Spec, tool Tool, mws []Middleware) (Tool, *wrapped, error) {
	if err := spec.Validate(); err != nil {
		return nil, nil, err
	}
	if tool == nil {
		return nil, nil, definitionError(spec.Name, taxonomy.CodeToolNil, "tool function is nil")
	}
	for i, mw := range mws {
		if mw == nil {
			return nil, nil, definitionError(spec.Name, taxonomy.CodeMiddlewareNil, fmt.Sprintf("middleware %d is nil", i))
		}
		if err, ok := rejected(mw); ok {
			return nil, nil, named(err, spec.Name)
		}
	}
	if spec.Type == "" {
		spec.Type = "function"
	}
	w := &wrapped{}
	inner, err := prepare(&spec, tool, w)
	if err != nil {
		return nil, nil, named(err, spec.Name)
	}
	w.spec = spec
	sp := &w.spec
	next := Chain(mws...)(inner)
	return func(ctx context.Context, args json.RawMessage) (Result, error) {
		if ctx == nil {
			return Result{}, errNilContext.WithTool(sp.Name)
		}
		res, err := next(newCall(ctx, sp), args)
		if err != nil {
			err = atEdge(err, sp.Name)
		}
		return res, err
	}, w, nil
}

// prepare fills spec's input schema, checks it, and returns the tool with
// the argument checks it needs in front.
func prepare(spec *Spec, tool Tool, w *wrapped) (Tool, error) {
	maxBytes := spec.MaxArgsBytes
	if maxBytes == 0 {
		maxBytes = DefaultMaxArgsBytes
	}
	t, isTyped := typedOf(tool)
	var ts *schema.Schema
	if isTyped {
		ts = t.inputSchema()
		if err := ts.Err(); err != nil {
			return nil, err
		}
		if maxBytes != DefaultMaxArgsBytes {
			tool = t.bind(maxBytes)
		}
	}
	var v *schema.Validator
	switch {
	case spec.InputSchema != nil:
		var err error
		if v, err = schema.Compile(spec.InputSchema); err != nil {
			return nil, err
		}
		if isTyped {
			if err := agrees(spec.InputSchema, ts); err != nil {
				return nil, err
			}
		}
	case isTyped:
		plain, err := ts.Render(schema.Plain)
		if err != nil {
			return nil, err
		}
		spec.InputSchema = plain
		w.typed = ts
	}
	if err := prepareOutput(spec, t, isTyped, w); err != nil {
		return nil, err
	}
	for _, p := range spec.Profiles {
		var err error
		if w.typed != nil {
			_, err = w.typed.Render(p)
		} else if spec.InputSchema != nil {
			err = schema.Check(spec.InputSchema, p)
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case v != nil:
		return func(ctx context.Context, args json.RawMessage) (Result, error) {
			if err := v.ValidateContext(ctx, args, maxBytes); err != nil {
				return Result{}, err
			}
			return tool(ctx, args)
		}, nil
	case isTyped:
		return tool, nil // Typed checks the size and everything else itself
	}
	return func(ctx context.Context, args json.RawMessage) (Result, error) {
		if err := jsonarg.CheckSize(args, maxBytes); err != nil {
			return Result{}, err
		}
		return tool(ctx, args)
	}, nil
}

// prepareOutput checks spec's own output schema, or fills it with a Typed
// tool's (t's, when isTyped) when its output type is a JSON object.
func prepareOutput(spec *Spec, t typedTool, isTyped bool, w *wrapped) error {
	if spec.OutputSchema != nil {
		if _, err := schema.Compile(spec.OutputSchema); err != nil {
			return asOutput(err)
		}
		return nil
	}
	if !isTyped {
		return nil
	}
	out := t.outputSchema()
	if out == nil {
		return nil
	}
	if err := out.Err(); err != nil {
		return err
	}
	plain, err := out.Render(schema.Plain)
	if err != nil {
		return asOutput(err)
	}
	spec.OutputSchema = plain
	w.typedOut = out
	return nil
}

// asOutput returns err, an error of package schema about a schema it
// takes for an input schema, as one about the output schema. Its messages
// hold no value of the schema.
func asOutput(err error) error {
	te, ok := err.(*taxonomy.ToolError)
	if !ok || te.Kind() != taxonomy.KindDefinitionInvalid {
		return err
	}
	msg := strings.ReplaceAll(te.Message(), "input schema", "output schema")
	return te.WithMessage(strings.ReplaceAll(msg, "in the arguments", "in the result"))
}

// agrees checks an explicit input schema against a Typed tool's input
// type: every property it declares at the top level is a field of the
// type, and every required field of the type is required by it. Deeper
// levels are not compared: the decoder checks them on every call.
func agrees(doc json.RawMessage, ts *schema.Schema) error {
	var top struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(doc, &top); err != nil {
		return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaInvalid, "the input schema's properties or required list is malformed")
	}
	fields, required, ok := ts.Fields()
	if !ok {
		return nil
	}
	for name := range top.Properties {
		if !fields[name] {
			return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaTypeMismatch,
				fmt.Sprintf("the input schema declares property %s, which %s has no field for", quoteName(name), ts.Type()))
		}
	}
	req := map[string]bool{}
	for _, r := range top.Required {
		req[r] = true
	}
	for _, name := range required {
		if !req[name] {
			return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeSchemaTypeMismatch,
				fmt.Sprintf("field %q of %s is required, and the input schema does not require it", name, ts.Type()))
		}
	}
	return nil
}

// MustWrap is like Wrap but panics on a definition error; for package-level
// tool variables.
func MustWrap(spec Spec, tool Tool, mws ...Middleware) Tool {
	t, err := Wrap(spec, tool, mws...)
	if err != nil {
		panic(err)
	}
	return t
}

func definitionError(tool, code, msg string) error {
	e := taxonomy.New(taxonomy.KindDefinitionInvalid, code, msg)
	if ValidName(tool) {
		e = e.WithTool(tool)
	}
	return e
}

// quoteName returns a name as a definition error shows it: quoted when it
// may reach a sink as it is (at most MaxCallIDLen bytes of
// [A-Za-z0-9_.:-] in which the default scrubber finds nothing, wherever a
// secret would start: the rule of call ids, see SafeCallID), else only its
// length. A name may come from a remote server or a hand-written schema,
// and a token glued into one hides from a scrub of the whole.
func quoteName(s string) string {
	if safeToken(s) {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("(%d bytes, not shown: it holds other characters or what looks like a secret)", len(s))
}

// named returns err naming tool when it is a *taxonomy.ToolError that names
// none (and tool is a valid name).
func named(err error, tool string) error {
	if te, ok := err.(*taxonomy.ToolError); ok && te.Tool() == "" && ValidName(tool) {
		return te.WithTool(tool)
	}
	return err
}

// atEdge is what a Wrap'd tool returns for err: a *taxonomy.ToolError named
// after the tool, or err itself when it is untyped or a cancellation. A
// taxonomy.Error implemented elsewhere says whatever its maker put in it, so
// it leaves as the *taxonomy.ToolError of its normalised record (a built-in
// kind, a well-formed code, no tool name of its own, its message and field
// errors scrubbed) wrapping it.
func atEdge(err error, tool string) error {
	te, ok := err.(*taxonomy.ToolError)
	if !ok {
		foreign, typed := taxonomy.From(err)
		if !typed {
			return err
		}
		if _, native := foreign.(*taxonomy.ToolError); native {
			return err // a wrapper around one of ours: its own chain
		}
		info := taxonomy.InfoOf(err)
		info.Message = scrub.String(info.Message)
		for i := range info.Fields {
			info.Fields[i].Msg = scrub.String(info.Fields[i].Msg)
			for j, l := range info.Fields[i].Loc {
				if s, ok := l.(string); ok {
					info.Fields[i].Loc[j] = scrub.String(s)
				}
			}
		}
		te = info.Err().WithCause(err)
	}
	if te.Tool() == "" {
		te = te.WithTool(tool)
	}
	return te
}
