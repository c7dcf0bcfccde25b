package langchaingo

import (
	"context"
	"encoding/json"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// WrapInputSchema is the input schema of a tool made by [Wrap], as the layers
// see it: langchaingo tools take one free string, which Wrap passes as the
// arguments {"input": "…"}.
const WrapInputSchema = `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"],"additionalProperties":false}`

// Wrap runs t, a langchaingo tool of your own (a tools.Tool you wrote, or
// one of langchaingo's), through the toolmw stack mw, with the semantics of
// the box's tools ([Tools.Tools]): the returned tool has t's name and
// description; its Call passes the agent's input string to the stack as the
// JSON arguments {"input": "<the string>"} (so an approval's summary, a
// guardrail and the logs see it as that object), under a call id derived
// from the call; t receives the string exactly as the agent passed it
// (invalid UTF-8 excepted: JSON replaces it with U+FFFD). What t returns
// is a text result; its error goes to the layers as its error (an untyped
// error's text never reaches the model: it is shown as a failure whose
// text is withheld; return a taxonomy error to tell the model more). The
// returned tool answers with toolmw.ForModel's envelope and returns an
// error only when the run must end ([*Stop]).
//
// The layers see the tool under the toolmw Spec of [WithSpec]; by default
// its Name is t's name made valid for toolmw (each byte outside a-z, A-Z,
// 0-9, '_' and '-' replaced by '_', cut to 64 bytes; "tool" when empty:
// "DuckDuckGo Search" is seen as DuckDuckGo_Search) and its Description
// t's. It is not Idempotent, so the retry layer retries only its typed
// transient failures: declare Idempotent in WithSpec for a tool safe to
// repeat.
//
// Wrap takes [WithCallsCounted], [WithCallbacksHandler], [WithCallIDKey]
// and [WithSpec]. A nil t or mw, a layer of mw given an invalid option,
// and an invalid option are tool-definition-invalid errors.
func Wrap(t tools.Tool, mw toolmw.Middleware, opts ...Option) (tools.Tool, error) {
	o := evaluateOptions(opts)
	if o.err != nil {
		return nil, o.err
	}
	if o.newOnly != "" {
		return nil, optionError("Wrap: %s is an option of New", o.newOnly)
	}
	if t == nil {
		return nil, optionError("Wrap: the tool is nil")
	}
	if mw == nil {
		return nil, optionError("Wrap: the middleware is nil (toolmw.Chain() is the empty stack)")
	}
	var spec toolmw.Spec
	if o.spec != nil {
		spec = *o.spec
	}
	if spec.Name == "" {
		spec.Name = toolName(t.Name())
	}
	if spec.Description == "" {
		spec.Description = t.Description()
	}
	spec.InputSchema = json.RawMessage(WrapInputSchema)
	inner := func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		var in struct {
			Input string `json:"input"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			// Not reached: the schema check runs first.
			return toolmw.Result{}, taxonomy.ArgsInvalid()
		}
		out, err := t.Call(ctx, in.Input)
		if err != nil {
			return toolmw.Result{}, err
		}
		return toolmw.Text(out), nil
	}
	wrapped, err := toolmw.Wrap(spec, inner, mw)
	if err != nil {
		return nil, err
	}
	return &wrappedTool{
		name:        t.Name(),
		description: t.Description(),
		spec:        spec.Name,
		d:           dispatcher{box: single{name: spec.Name, tool: wrapped}, countCalls: o.countCalls, handler: o.handler, idKey: o.idKey},
	}, nil
}

// toolName makes a langchaingo tool's name a valid toolmw name.
func toolName(name string) string {
	if len(name) > 64 {
		name = name[:64]
	}
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "tool"
	}
	return string(b)
}

// single is one wrapped tool as a turn.Caller.
type single struct {
	name string
	tool toolmw.Tool
}

func (s single) Call(ctx context.Context, name string, args json.RawMessage) (toolmw.Result, error) {
	return s.tool(ctx, args)
}

// wrappedTool is a tool made by Wrap.
type wrappedTool struct {
	name, description string
	spec              string // the name the layers see
	d                 dispatcher
}

func (w *wrappedTool) Name() string        { return w.name }
func (w *wrappedTool) Description() string { return w.description }

// Call runs the wrapped tool through its stack; see [Wrap].
func (w *wrappedTool) Call(ctx context.Context, input string) (string, error) {
	args, err := json.Marshal(struct {
		Input string `json:"input"`
	}{input})
	if err != nil {
		return "", err // not reached: a struct of a string always encodes
	}
	return w.d.call(ctx, w.spec, args, input)
}
