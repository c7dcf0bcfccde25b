package eino

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sync"

	"github.com/cloudwego/eino/compose"
	einoschema "github.com/cloudwego/eino/schema"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// Middleware returns a tool-call middleware that runs every call of the
// user's own Eino tools through a toolmw stack, mw: for
// compose.ToolsNodeConfig.ToolCallMiddlewares, or as the WrapToolCall of an
// adk.AgentMiddleware. It covers the four kinds of Eino tool: invokable,
// streamable, enhanced invokable and enhanced streamable.
//
// Each tool is wrapped once, on its first call, by name
// (toolmw.Wrap(spec, tool, mw), the spec from [WithSpecs] or
// toolmw.Spec{Name: name}), so the stack's per-tool state (a breaker, a
// rate limit) is the tool's, whichever ToolsNode or run calls it; at most
// [WithMaxTools] names are kept. Each call carries Eino's call id
// (compose.ToolInput.CallID) as toolmw's call id, and follows the rules of
// the package doc: what the model is shown is toolmw.ForModel's text (a
// failure as a tool result, never the raw error); approval-pending pauses
// the graph (an Eino interrupt); another stop ends the run with a
// *turn.Stop. An Eino interrupt the tool itself returns passes through
// untouched (not retried, not shown to the model). Empty arguments reach
// the tool as {}.
//
// A streamable tool's stream is forwarded as it comes, and the stack's
// timeout covers it to its end (see Streams in the package doc).
//
// The tools of [New] must not be given this middleware too: they run
// through their box already.
//
// An invalid option or a nil mw is refused here, at start-up, as a
// tool-definition-invalid error (codes option_invalid, middleware_nil, or
// the spec's own). A tool toolmw.Wrap refuses when it is first called (a
// name toolmw does not take) ends the run of every call of it with its
// tool-definition-invalid error.
func Middleware(mw toolmw.Middleware, opts ...Option) (compose.ToolMiddleware, error) {
	o := evaluateOptions(opts)
	if o.err == nil && mw == nil {
		o.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeMiddlewareNil,
			"adapters/eino: Middleware: the middleware is nil")
	}
	if o.err != nil {
		return compose.ToolMiddleware{}, o.err
	}
	s := &stack{mw: mw, opts: o, d: dispatcher{countCalls: o.countCalls}, tools: make(map[string]*wrapped)}
	return compose.ToolMiddleware{
		Invokable:          s.invokable,
		Streamable:         s.streamable,
		EnhancedInvokable:  s.enhancedInvokable,
		EnhancedStreamable: s.enhancedStreamable,
	}, nil
}

// stack is one Middleware: the stack, and the tools it wrapped.
type stack struct {
	mw   toolmw.Middleware
	opts options
	d    dispatcher

	mu    sync.Mutex
	tools map[string]*wrapped
}

// wrapped is one tool name's stack, made on its first call.
type wrapped struct {
	once sync.Once
	tool toolmw.Tool
	err  error
}

// Call runs a call through the tool's stack: stack is a turn.Caller whose
// calls carry their invocation in the context.
func (s *stack) Call(ctx context.Context, name string, args json.RawMessage) (toolmw.Result, error) {
	tool, err := s.tool(name)
	if err != nil {
		return toolmw.Result{}, &defError{err}
	}
	return tool(ctx, args)
}

// tool returns the stack of the tool named name, wrapping it on its first
// call.
func (s *stack) tool(name string) (toolmw.Tool, error) {
	s.mu.Lock()
	w, ok := s.tools[name]
	if !ok {
		if len(s.tools) >= s.opts.maxTools {
			s.mu.Unlock()
			return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
				"adapters/eino: the middleware serves more tools than WithMaxTools allows")
		}
		w = new(wrapped)
		s.tools[name] = w
	}
	s.mu.Unlock()
	w.once.Do(func() {
		spec, ok := s.opts.specs[name]
		if !ok {
			spec = toolmw.Spec{Name: name}
		}
		w.tool, w.err = toolmw.Wrap(spec, inner, s.mw)
	})
	return w.tool, w.err
}

// defError is why a tool's stack could not be made (toolmw.Wrap's error,
// or the bound of WithMaxTools): the program's mistake, which ends the
// run.
type defError struct{ err error }

func (e *defError) Error() string { return e.err.Error() }
func (e *defError) Unwrap() error { return e.err }

// definitionError returns the definition error a call ended in, or nil.
func definitionError(a turn.Answer) error {
	var de *defError
	if errors.As(a.Err, &de) {
		return de.err
	}
	return nil
}

// invocation is one call of a user's tool, as the innermost toolmw.Tool
// finds it in its context: the Eino call, and the endpoint to make it
// with.
type invocation struct {
	input *compose.ToolInput

	invoke    compose.InvokableToolEndpoint
	stream    compose.StreamableToolEndpoint
	einvoke   compose.EnhancedInvokableToolEndpoint
	estream   compose.EnhancedStreamableToolEndpoint
	forward   *forwarder // for stream
	interrupt interrupted
}

// interrupted keeps an Eino interrupt the tool returned, for the endpoint
// to return once the stack is done.
type interrupted struct {
	mu  sync.Mutex
	err error
}

func (i *interrupted) set(err error) {
	i.mu.Lock()
	if i.err == nil {
		i.err = err
	}
	i.mu.Unlock()
}

func (i *interrupted) get() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.err
}

type invocationKey struct{}

// errInterrupted is what the stack sees of a call whose tool interrupted
// the graph: a cancellation, never retried nor counted as a failure.
var errInterrupted = taxonomy.New(taxonomy.KindCancelled, taxonomy.Declare("tool_interrupted"),
	"the tool paused the run (an Eino interrupt)")

// errNoInvocation answers a call of the innermost tool outside an Eino
// call, which cannot happen through Middleware.
var errNoInvocation = taxonomy.Failure(taxonomy.Declare("no_eino_call"), "the tool was called outside an Eino tool call")

// toolErr returns what the stack sees of an error of the user's tool: an
// Eino interrupt is kept for the endpoint and seen as errInterrupted; any
// other error is the tool's, for the stack to classify.
func (inv *invocation) toolErr(err error) error {
	if isInterrupt(err) {
		inv.interrupt.set(err)
		return errInterrupted
	}
	return err
}

// isInterrupt reports whether err is an Eino interrupt.
func isInterrupt(err error) bool {
	if _, ok := compose.IsInterruptRerunError(err); ok {
		return true
	}
	_, ok := compose.ExtractInterruptInfo(err)
	return ok
}

// inner is the tool every name is wrapped around: it makes the Eino call
// its context carries, with the arguments the stack passes.
func inner(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	inv, ok := ctx.Value(invocationKey{}).(*invocation)
	if !ok {
		return toolmw.Result{}, errNoInvocation
	}
	in := *inv.input
	in.Arguments = string(args)
	switch {
	case inv.invoke != nil:
		out, err := inv.invoke(ctx, &in)
		if err != nil {
			return toolmw.Result{}, inv.toolErr(err)
		}
		if out == nil {
			return toolmw.Result{}, nil
		}
		return toolmw.Text(out.Result), nil
	case inv.einvoke != nil:
		out, err := inv.einvoke(ctx, &in)
		if err != nil {
			return toolmw.Result{}, inv.toolErr(err)
		}
		if out == nil {
			return toolmw.Result{}, nil
		}
		return fromToolResult(out.Result), nil
	case inv.stream != nil:
		return inv.forward.run(ctx, inv, &in)
	default:
		return collectEnhanced(ctx, inv, &in)
	}
}

// run makes the call of inv through the stack and returns its answer and
// the error that ends it for Eino (see dispatcher.call): an interrupt of
// the tool's own first.
func (s *stack) run(ctx context.Context, inv *invocation) (turn.Answer, error) {
	ctx = context.WithValue(ctx, invocationKey{}, inv)
	a, err := s.d.call(ctx, s, inv.input.CallID, inv.input.Name, argsOf(inv.input.Arguments))
	if ierr := inv.interrupt.get(); ierr != nil {
		return a, ierr
	}
	if err == nil {
		err = definitionError(a)
	}
	return a, err
}

func (s *stack) invokable(next compose.InvokableToolEndpoint) compose.InvokableToolEndpoint {
	return func(ctx context.Context, input *compose.ToolInput) (*compose.ToolOutput, error) {
		a, err := s.run(ctx, &invocation{input: input, invoke: next})
		if err != nil {
			return nil, err
		}
		return &compose.ToolOutput{Result: a.Text}, nil
	}
}

func (s *stack) enhancedInvokable(next compose.EnhancedInvokableToolEndpoint) compose.EnhancedInvokableToolEndpoint {
	return func(ctx context.Context, input *compose.ToolInput) (*compose.EnhancedInvokableToolOutput, error) {
		a, err := s.run(ctx, &invocation{input: input, einvoke: next})
		if err != nil {
			return nil, err
		}
		return &compose.EnhancedInvokableToolOutput{Result: toolResult(a, s.opts.limits)}, nil
	}
}

func (s *stack) enhancedStreamable(next compose.EnhancedStreamableToolEndpoint) compose.EnhancedStreamableToolEndpoint {
	return func(ctx context.Context, input *compose.ToolInput) (*compose.EnhancedStreamableToolOutput, error) {
		a, err := s.run(ctx, &invocation{input: input, estream: next})
		if err != nil {
			return nil, err
		}
		return &compose.EnhancedStreamableToolOutput{
			Result: einoschema.StreamReaderFromArray([]*einoschema.ToolResult{toolResult(a, s.opts.limits)}),
		}, nil
	}
}

// collectEnhanced makes an enhanced streamable call and reads its stream
// to its end (or until ctx is done), as one result: the stack sees the
// whole output, and its timeout covers the stream.
func collectEnhanced(ctx context.Context, inv *invocation, in *compose.ToolInput) (toolmw.Result, error) {
	out, err := inv.estream(ctx, in)
	if err != nil {
		return toolmw.Result{}, inv.toolErr(err)
	}
	if out == nil || out.Result == nil {
		return toolmw.Result{}, nil
	}
	var chunks []*einoschema.ToolResult
	err = drain(ctx, out.Result, func(c *einoschema.ToolResult) bool {
		chunks = append(chunks, c)
		return true
	})
	if err != nil {
		return toolmw.Result{}, inv.toolErr(err)
	}
	whole, err := einoschema.ConcatToolResults(chunks)
	if err != nil {
		return toolmw.Result{}, taxonomy.ResultInvalid(taxonomy.CodeResultPartInvalid, "the tool's stream of results could not be joined")
	}
	return fromToolResult(whole), nil
}

// fromToolResult returns an Eino tool result as a toolmw result of parts:
// text as text parts, images, audio and files (a video as a file) with
// their bytes (Base64Data decoded) or their URL. A part of a type Eino
// does not define is dropped; one whose Base64Data does not decode keeps
// only its type.
func fromToolResult(r *einoschema.ToolResult) toolmw.Result {
	if r == nil {
		return toolmw.Result{}
	}
	parts := make([]toolmw.Part, 0, len(r.Parts))
	for _, p := range r.Parts {
		var kind toolmw.PartKind
		var common *einoschema.MessagePartCommon
		switch p.Type {
		case einoschema.ToolPartTypeText:
			parts = append(parts, toolmw.TextPart(p.Text))
			continue
		case einoschema.ToolPartTypeImage:
			if p.Image != nil {
				kind, common = toolmw.PartImage, &p.Image.MessagePartCommon
			}
		case einoschema.ToolPartTypeAudio:
			if p.Audio != nil {
				kind, common = toolmw.PartAudio, &p.Audio.MessagePartCommon
			}
		case einoschema.ToolPartTypeVideo:
			if p.Video != nil {
				kind, common = toolmw.PartFile, &p.Video.MessagePartCommon
			}
		case einoschema.ToolPartTypeFile:
			if p.File != nil {
				kind, common = toolmw.PartFile, &p.File.MessagePartCommon
			}
		}
		if common == nil {
			continue
		}
		part := toolmw.Part{Kind: kind, MIMEType: common.MIMEType}
		switch {
		case common.Base64Data != nil:
			if data, err := base64.StdEncoding.DecodeString(*common.Base64Data); err == nil {
				part.Data = data
			}
		case common.URL != nil:
			part.URI = *common.URL
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return toolmw.Result{}
	}
	return toolmw.Parts(parts...)
}
