package toolmw

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw/taxonomy"
)

// Spec describes a tool to the model and to the layers.
//
// It is a plain value, safe to read from many goroutines; do not modify one that is shared. Wrap keeps its own copy.
type Spec struct {
	// Name is what the model calls the tool: 1 to 64 of a-z, A-Z, 0-9, '_'
	// and '-', the rule the major model APIs share.
	Name string
	// Description tells the model what the tool does.
	Description string
	// Idempotent declares that making the same call twice has the effect of
	// making it once. Only then are untyped errors and timeouts retried.
	Idempotent bool
	// InputSchema is the JSON Schema of the arguments, passed to the model
	// as is; nil when the tool takes none or the loop supplies it.
	InputSchema json.RawMessage
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
// tool-definition-invalid error, or nil.
func (s Spec) Validate() error {
	if !ValidName(s.Name) {
		return definitionError(s.Name, taxonomy.CodeNameInvalid,
			fmt.Sprintf("tool name %q must match ^[a-zA-Z0-9_-]{1,64}$", truncate(s.Name, 80)))
	}
	return nil
}

// Wrap validates spec and tool at start-up and returns the tool decorated
// with mws (the first outermost). A bad name, a nil tool, a nil middleware
// or a layer given an invalid option (see [Reject]) is a
// tool-definition-invalid error, never a surprise mid-request.
//
// Each call through the returned Tool carries a [Call] in its context. A
// typed error of type *taxonomy.ToolError that leaves the chain without a
// tool name is given the spec's name.
func Wrap(spec Spec, tool Tool, mws ...Middleware) (Tool, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if tool == nil {
		return nil, definitionError(spec.Name, taxonomy.CodeToolNil, "tool function is nil")
	}
	for i, mw := range mws {
		if mw == nil {
			return nil, definitionError(spec.Name, taxonomy.CodeMiddlewareNil, fmt.Sprintf("middleware %d is nil", i))
		}
		if err, ok := rejected(mw); ok {
			if te, ok := err.(*taxonomy.ToolError); ok && te.Tool() == "" && ValidName(spec.Name) {
				err = te.WithTool(spec.Name)
			}
			return nil, err
		}
	}
	if spec.Type == "" {
		spec.Type = "function"
	}
	sp := &spec
	next := Chain(mws...)(tool)
	return func(ctx context.Context, args json.RawMessage) (Result, error) {
		res, err := next(newCall(ctx, sp), args)
		if err != nil {
			if te, ok := err.(*taxonomy.ToolError); ok && te.Tool() == "" {
				err = te.WithTool(sp.Name)
			}
		}
		return res, err
	}, nil
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

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
