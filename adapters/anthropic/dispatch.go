package anthropic

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/turn"
)

// Answer is how one of the model's tool calls ended.
type Answer struct {
	// ToolUseID is the id of the model's tool_use block exactly as it sent
	// it: the tool_result must carry it. (The layers see it through
	// toolmw.WithCallID, as toolmw.SafeCallID makes it.)
	ToolUseID string
	// Name is the tool the model asked for.
	Name string
	// Result is what the tool returned; meaningful when Err is nil.
	Result toolmw.Result
	// Err is why the call failed, a typed error that taxonomy.InfoOf
	// reads, or the context's error for a call cancelled before it
	// started; nil when the call succeeded. It is for the loop, never for
	// the model.
	Err error
	// Text is what the model is shown: toolmw.ForModel(Result, Err), the
	// result or the failure wrapped as untrusted data, never the raw error.
	Text string
}

// IsError reports whether the tool_result says the call failed: whenever
// Err is set, refusals included.
func (o Answer) IsError() bool { return o.Err != nil }

// Turn is the outcome of one reply's tool_use blocks, in the order the
// model wrote them, and the tool_result blocks to send back.
//
// A Turn is not modified after the dispatcher returns it; it is safe to
// read from many goroutines.
type Turn struct {
	// Calls holds one outcome per tool_use block of the reply, in the
	// model's order. Empty when the reply asked for no tool: the model's
	// answer is final.
	Calls []Answer
}

// Blocks returns the answers as tool_result blocks, one per call in the
// model's order, each with the tool_use id and is_error set (true or
// false) from the outcome. The Messages API wants them first in the next
// user message; add other content after them.
//
// A failed call, and a result the API takes no media of (a text result, or
// parts that are all text, audio or links), is one text block of its Text.
// A result with an image or a document the API takes has one content block
// per part in order (the package doc says which parts go as media): text
// and JSON parts as text blocks wrapped as untrusted data
// (toolmw.ForModelParts), images as image blocks (base64 with the media
// type, or a URL source), PDFs as document blocks (base64, or a URL
// source) and plain-text files as text documents, wrapped as untrusted
// data too, both titled with the file's name; every other part as a text
// block holding toolmw.ForModel's descriptor of it.
func (t *Turn) Blocks() []anthropic.ContentBlockParamUnion {
	if t == nil {
		return nil
	}
	media := turn.NewMedia(limits)
	out := make([]anthropic.ContentBlockParamUnion, len(t.Calls))
	for i, c := range t.Calls {
		out[i] = anthropic.NewToolResultBlock(c.ToolUseID, c.Text, c.IsError())
		if c.Err == nil {
			if blocks, ok := media.Blocks(c.Result); ok {
				out[i].OfToolResult.Content = resultContent(blocks)
			}
		}
	}
	return out
}

// limits are the Messages API's bounds on a turn's media: an image of at
// most 5 MB in base64, and a request of at most 32 MB.
var limits = turn.MediaLimits{Image: 5 << 20, Document: 30 << 20, Total: 30 << 20, PlainText: true}

// resultContent returns blocks as tool_result content blocks.
func resultContent(blocks []turn.Block) []anthropic.ToolResultBlockParamContentUnion {
	out := make([]anthropic.ToolResultBlockParamContentUnion, len(blocks))
	for i, b := range blocks {
		switch b.Kind {
		case turn.BlockImage:
			img := &anthropic.ImageBlockParam{}
			if b.URL != "" {
				img.Source.OfURL = &anthropic.URLImageSourceParam{URL: b.URL}
			} else {
				img.Source.OfBase64 = &anthropic.Base64ImageSourceParam{Data: b.Data, MediaType: anthropic.Base64ImageSourceMediaType(b.MIMEType)}
			}
			out[i] = anthropic.ToolResultBlockParamContentUnion{OfImage: img}
		case turn.BlockPDF, turn.BlockPlainText:
			doc := &anthropic.DocumentBlockParam{}
			switch {
			case b.Kind == turn.BlockPlainText:
				doc.Source.OfText = &anthropic.PlainTextSourceParam{Data: b.Text}
			case b.URL != "":
				doc.Source.OfURL = &anthropic.URLPDFSourceParam{URL: b.URL}
			default:
				doc.Source.OfBase64 = &anthropic.Base64PDFSourceParam{Data: b.Data}
			}
			if b.Name != "" {
				doc.Title = anthropic.String(b.Name)
			}
			out[i] = anthropic.ToolResultBlockParamContentUnion{OfDocument: doc}
		default:
			out[i] = anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: b.Text}}
		}
	}
	return out
}

// Message returns the user message that answers the turn: its tool_result
// blocks. Send it only when the turn had calls.
func (t *Turn) Message() anthropic.MessageParam {
	return anthropic.NewUserMessage(t.Blocks()...)
}

// Call runs the tool_use blocks of a Messages API reply (Message.Content)
// through the box and returns their outcomes; other blocks are skipped.
//
// The calls run at once, at most [WithMaxParallel] at a time, each with
// the block's id in its context (toolmw.WithCallID); their outcomes come
// back in the model's order. Every call draws on the run budget ctx
// carries (put one there with budget.WithRun before the loop's first
// turn, so that it spans the run). A call of a tool the box did not offer
// (or of a toolset member) is answered as tool-not-found without calling
// the box; an empty input is read as {}.
//
// The Turn always holds an outcome for every call, so the conversation
// stays well-formed whatever happens. The error is nil, or a *[Stop]
// saying why the loop should not go on: ctx is done, every call was
// refused by the run budget, or every call found its circuit open. A
// panic in a tool is re-raised in the caller's goroutine once the turn's
// other calls have returned; a tool that calls runtime.Goexit ends its
// call as tool-failed/tool_exited.
func (t *Tools) Call(ctx context.Context, blocks []anthropic.ContentBlockUnion) (*Turn, error) {
	var cs []turn.Call
	for _, b := range blocks {
		if b.Type != "tool_use" {
			continue
		}
		c := turn.Call{ID: b.ID, Name: b.Name}
		switch {
		case b.ToolsetName != "" || !t.offered[b.Name]:
			c.Refused = turn.NotOffered(b.Name)
		case len(bytes.TrimSpace(b.Input)) == 0:
			c.Args = json.RawMessage(`{}`)
		default:
			c.Args = b.Input
		}
		cs = append(cs, c)
	}
	return t.dispatch(ctx, cs)
}

// dispatch runs cs through the box (see turn.Run for how) and reports
// whether the run should stop.
func (t *Tools) dispatch(ctx context.Context, cs []turn.Call) (*Turn, error) {
	answers := turn.Run(ctx, t.box, cs, turn.Options{MaxParallel: t.opts.maxParallel, CountCalls: t.opts.countCalls})
	out := &Turn{Calls: make([]Answer, len(cs))}
	for i, a := range answers {
		out.Calls[i] = Answer{ToolUseID: cs[i].ID, Name: cs[i].Name, Result: a.Result, Err: a.Err, Text: a.Text}
	}
	return out, turn.StopOf(ctx, answers)
}
