package genkit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"mime"
	"net/url"
	"strings"
	"sync"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/core/status"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// Wrapper runs the Genkit tools a generation calls — the application's
// own, defined with genkit.DefineTool or ai.NewTool, a plugin's, a
// prompt's — through a toolmw stack, as a Genkit middleware with a
// WrapTool hook: pass it to ai.WithUse. Tools from [New] are left to their
// box's own stack.
//
// Each tool name gets its own instance of the stack, made on the tool's
// first call and kept for the Wrapper's life, so per-tool state (a
// circuit breaker, a rate limit) spans generations. Each call goes
// through it with the tool request's ref as its toolmw call id, and comes
// back as a tool response: a result or a failure as toolmw.ForModel's
// text, never an error that fails the generation (Genkit's
// ai.ErrToolFailed). The stop and pause rules are [New]'s.
//
// A Wrapper is safe for concurrent use.
type Wrapper struct {
	box  *toolmw.Toolbox
	opts options

	mu    sync.Mutex
	known map[string]error // tool name → why it cannot be wrapped (nil: registered)
}

var _ ai.Middleware = (*Wrapper)(nil)

// Wrap returns a Genkit middleware that runs every tool call of a
// generation through mw (see [Wrapper]). A nil mw, or a middleware made by
// toolmw.Reject (an invalid layer option), is a tool-definition-invalid
// error, as is an invalid option.
//
// Genkit looks a called tool up by name before any WrapTool hook runs and
// fails the generation (ai.ErrToolNotFound) when it finds none, so a
// Wrapper alone cannot answer a call of a tool that does not exist; one
// of a registered tool the generation did not offer it answers
// tool-not-found. A [Tools] in the same generation (ai.WithUse(tools,
// wrapper)) answers both.
func Wrap(mw toolmw.Middleware, opts ...Option) (*Wrapper, error) {
	o := evaluateOptions(opts)
	switch {
	case o.err != nil:
		return nil, o.err
	case o.profileSet:
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			"adapters/genkit: Wrap: WithProfile is an option of New; wrapped tools keep the schemas Genkit has for them")
	case mw == nil:
		return nil, taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeMiddlewareNil, "adapters/genkit: Wrap: the middleware is nil")
	}
	// A middleware that refuses to wrap anything says so now, not at the
	// first call.
	if _, err := toolmw.Wrap(toolmw.Spec{Name: "probe"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, nil
	}, mw); err != nil {
		return nil, err
	}
	return &Wrapper{box: toolmw.NewToolbox(mw), opts: o, known: map[string]error{}}, nil
}

// Name returns the name Genkit knows the middleware by in its logs:
// "toolmw/wrap". It implements ai.Middleware.
func (w *Wrapper) Name() string { return "toolmw/wrap" }

// New returns the hooks of one generation; Genkit calls it once per
// genkit.Generate. It implements ai.Middleware: pass w to ai.WithUse
// rather than calling it.
func (w *Wrapper) New(ctx context.Context) (*ai.Hooks, error) {
	g := &wrapGen{w: w, offered: map[string]bool{}}
	return &ai.Hooks{WrapGenerate: g.wrapGenerate, WrapTool: g.wrapTool}, nil
}

// wrapGen is the state of one generation a Wrapper serves: the tools the
// model was offered.
type wrapGen struct {
	w *Wrapper

	mu      sync.Mutex
	offered map[string]bool
}

// wrapGenerate is the WrapGenerate hook: it notes the tools each turn
// offers the model, before the turn (and a resume's restarts) runs any.
func (g *wrapGen) wrapGenerate(ctx context.Context, p *ai.GenerateParams, next ai.GenerateNext) (*ai.ModelResponse, error) {
	if p != nil && p.Request != nil {
		g.mu.Lock()
		for _, d := range p.Request.Tools {
			if d != nil {
				g.offered[d.Name] = true
			}
		}
		g.mu.Unlock()
	}
	return next(ctx, p)
}

func (g *wrapGen) isOffered(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.offered[name]
}

// wrapCall is one call's way back into Genkit's chain, for the innermost
// tool of the stack (which is shared by every call of a tool name): the
// hook's params and next, and the interrupt the Genkit tool raised, if
// any.
type wrapCall struct {
	params *ai.ToolParams
	next   ai.ToolNext

	mu        sync.Mutex
	interrupt error
}

type wrapCallKey struct{}

// errInterrupted is what the stack sees of a Genkit tool that interrupted
// the generation (ToolContext.Interrupt): tool-cancelled, which no layer
// retries, replaces with a fallback or counts against a circuit, and which
// dedupe reads as an outcome unknown (the tool may have acted before it
// paused). The model never reads it: the Wrapper hands Genkit the
// interrupt itself.
var errInterrupted = taxonomy.New(taxonomy.KindCancelled, codeInterrupted, "the tool paused the generation")

const codeInterrupted = "tool_interrupted"

// wrapTool is the WrapTool hook.
func (g *wrapGen) wrapTool(ctx context.Context, p *ai.ToolParams, next ai.ToolNext) (*ai.MultipartToolResponse, error) {
	if p == nil || p.Tool == nil || p.Request == nil || ownAction(p.Tool) {
		return next(ctx, p)
	}
	name := p.Tool.Name()
	c := turn.Call{ID: p.Request.Ref, Name: name}
	switch {
	case !g.isOffered(name):
		c.Refused = turn.NotOffered(name)
	default:
		if err := g.w.register(name, p.Tool); err != nil {
			c.Refused = err
		}
	}
	if c.Refused == nil {
		args, err := json.Marshal(p.Request.Input)
		if err != nil {
			c.Refused = taxonomy.ArgsInvalid().WithTool(name)
		}
		c.Args = args
	}
	wc := &wrapCall{params: p, next: next}
	ctx = context.WithValue(ctx, wrapCallKey{}, wc)
	answers := turn.Run(ctx, g.w.box, []turn.Call{c}, turn.Options{MaxParallel: 1, CountCalls: g.w.opts.countCalls})
	if info := taxonomy.InfoOf(answers[0].Err); info.Kind == taxonomy.KindCancelled && info.Code == codeInterrupted {
		wc.mu.Lock()
		err := wc.interrupt
		wc.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	return decide(ctx, answers)
}

// ownAction reports whether tool is one of this package's (a Tools' box
// tool, or its answer to a tool not offered), which has its own stack.
func ownAction(tool ai.Tool) bool {
	d, ok := tool.(interface{ Desc() api.ActionDesc })
	return ok && d.Desc().Metadata[metaKey] != nil
}

// register adds the Genkit tool of name to the Wrapper's box once, under
// the stack, and returns why it cannot be wrapped, or nil.
func (w *Wrapper) register(name string, tool ai.Tool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err, ok := w.known[name]; ok {
		return err
	}
	var err error
	if !toolmw.ValidName(name) {
		// Failing closed: run unwrapped, it would pass every gate of the
		// stack.
		err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeNameInvalid,
			"the tool's name is not one toolmw takes (1 to 64 of a-z, A-Z, 0-9, _ and -): rename it to run it through the stack")
	} else {
		spec, ok := w.opts.specs[name]
		if !ok {
			spec = toolmw.Spec{Name: name}
		}
		if d := tool.Definition(); d != nil && spec.Description == "" {
			spec.Description = d.Description
		}
		err = w.box.Register(spec, innerTool)
	}
	w.known[name] = err
	return err
}

// innerTool is the innermost tool of every wrapped tool's stack: it calls
// on along Genkit's chain (the next hook, then the Genkit tool), with the
// arguments as the stack passes them, and returns the tool's response as a
// toolmw.Result.
func innerTool(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	c, ok := ctx.Value(wrapCallKey{}).(*wrapCall)
	if !ok {
		return toolmw.Result{}, taxonomy.Failure("outside_generation", "the wrapped Genkit tool was called outside a generation")
	}
	var input any
	if err := json.Unmarshal(args, &input); err != nil {
		return toolmw.Result{}, taxonomy.ArgsInvalid()
	}
	req := *c.params.Request
	req.Input = input
	resp, err := c.next(ctx, &ai.ToolParams{Request: &req, Tool: c.params.Tool})
	switch {
	case err == nil && resp == nil:
		return toolmw.Result{}, nil
	case err == nil:
		return resultOf(resp)
	}
	if interrupted, _ := ai.IsToolInterruptError(err); interrupted {
		c.mu.Lock()
		c.interrupt = err
		c.mu.Unlock()
		return toolmw.Result{}, errInterrupted
	}
	if _, typed := taxonomy.From(err); !typed && errors.Is(err, status.ErrInvalidInput) {
		// Genkit checked the arguments against the tool's schema: say so,
		// without its message (which quotes them).
		return toolmw.Result{}, taxonomy.ArgsInvalid()
	}
	return toolmw.Result{}, err
}

// resultOf returns a Genkit tool's response as a toolmw.Result: its
// output as text (a string) or JSON (anything else), and its content's
// text, data and media parts as parts after it. Other parts, and the
// response's metadata, are dropped.
func resultOf(resp *ai.MultipartToolResponse) (toolmw.Result, error) {
	var res toolmw.Result
	switch v := resp.Output.(type) {
	case nil:
	case string:
		res = toolmw.Text(v)
	default:
		r, err := toolmw.JSON(v)
		if err != nil {
			return toolmw.Result{}, err
		}
		res = r
	}
	var parts []toolmw.Part
	for _, p := range resp.Content {
		if part, ok := partOf(p); ok {
			parts = append(parts, part)
		}
	}
	if len(parts) > 0 {
		res = res.WithParts(parts...)
	}
	return res, nil
}

// partOf returns a Genkit part as a toolmw part: text, data (as JSON), or
// media (an image, audio or a file, by its type; bytes from a data URL, or
// the URL).
func partOf(p *ai.Part) (toolmw.Part, bool) {
	switch {
	case p == nil:
	case p.IsText():
		return toolmw.TextPart(p.Text), true
	case p.IsData():
		b, err := json.Marshal(p.Data)
		if err != nil {
			return toolmw.Part{}, false
		}
		return toolmw.Part{Kind: toolmw.PartJSON, Text: string(b)}, true
	case p.IsMedia():
		part := toolmw.Part{MIMEType: p.ContentType}
		if mt, data, ok := dataURL(p.Text); ok {
			if part.MIMEType == "" {
				part.MIMEType = mt
			}
			part.Data = data
		} else {
			part.URI = p.Text
		}
		mt, _, _ := mime.ParseMediaType(part.MIMEType)
		switch {
		case strings.HasPrefix(mt, "image/"):
			part.Kind = toolmw.PartImage
		case strings.HasPrefix(mt, "audio/"):
			part.Kind = toolmw.PartAudio
		default:
			part.Kind = toolmw.PartFile
		}
		return part, true
	}
	return toolmw.Part{}, false
}

// dataURL decodes a base64 data URL: its media type and bytes.
func dataURL(s string) (string, []byte, bool) {
	rest, ok := strings.CutPrefix(s, "data:")
	if !ok {
		return "", nil, false
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return "", nil, false
	}
	mt, isBase64 := strings.CutSuffix(meta, ";base64")
	if !isBase64 {
		text, err := url.PathUnescape(payload)
		if err != nil {
			return "", nil, false
		}
		return mt, []byte(text), true
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, false
	}
	return mt, data, true
}
