package openai

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/turn"
)

// Answer is how one of the model's tool calls ended.
type Answer struct {
	// CallID is the model's id of the call exactly as it sent it: the
	// answer must carry it. (The layers see it through toolmw.WithCallID,
	// as toolmw.SafeCallID makes it.)
	CallID string
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
	// result or the failure wrapped as untrusted data.
	Text string
}

// Turn is the outcome of one reply's tool calls, in the order the model
// made them, and the answers to send back.
//
// A Turn is not modified after the dispatcher returns it; it is safe to
// read from many goroutines.
type Turn struct {
	// Calls holds one outcome per tool call of the reply, in the model's
	// order. Empty when the reply asked for no tool: the model's answer is
	// final.
	Calls []Answer
}

// Messages returns the answers as Chat Completions tool messages, one per
// call in the model's order, each carrying the call's id and its Text.
// Append them to the conversation after the assistant message that made
// the calls. A tool message holds text only (the API takes a string or
// text parts there), so a result with images or files is its Text too:
// toolmw.ForModel's descriptors of them.
func (t *Turn) Messages() []openai.ChatCompletionMessageParamUnion {
	if t == nil {
		return nil
	}
	out := make([]openai.ChatCompletionMessageParamUnion, len(t.Calls))
	for i, c := range t.Calls {
		out[i] = openai.ToolMessage(c.Text, c.CallID)
	}
	return out
}

// Items returns the answers as Responses API function_call_output items,
// one per call in the model's order, each carrying the call's call_id.
// Send them as the next request's input, chained to the reply with
// PreviousResponseID.
//
// A failed call, and a result the API takes no media of (a text result, or
// parts that are all text, audio or links), is its Text, a plain string
// output. A result with an image or a document the API takes is a list of
// content items, one per part in order (the package doc says which parts
// go as media):
// text and JSON parts as input_text wrapped as untrusted data
// (toolmw.ForModelParts), images as input_image (a data URL of the bytes,
// or the image's URL), PDFs as input_file (a data URL with the file's
// name, or its URL), and every other part as input_text holding
// toolmw.ForModel's descriptor of it.
func (t *Turn) Items() []responses.ResponseInputItemUnionParam {
	if t == nil {
		return nil
	}
	media := turn.NewMedia(limits)
	out := make([]responses.ResponseInputItemUnionParam, len(t.Calls))
	for i, c := range t.Calls {
		item := responses.ResponseInputItemParamOfFunctionCallOutput(c.Text)
		if c.Err == nil {
			if blocks, ok := media.Blocks(c.Result); ok {
				item.OfFunctionCallOutput.Output = responses.ResponseInputItemFunctionCallOutputOutputUnionParam{
					OfResponseFunctionCallOutputItemArray: outputItems(blocks),
				}
			}
		}
		item.OfFunctionCallOutput.CallID = param.NewOpt(c.CallID)
		out[i] = item
	}
	return out
}

// limits are the Responses API's bounds on a turn's media: images and
// files count toward its 50 MB request limit, base64 included.
var limits = turn.MediaLimits{Image: 48 << 20, Document: 48 << 20, Total: 48 << 20}

// outputItems returns blocks as function_call_output content items.
func outputItems(blocks []turn.Block) responses.ResponseFunctionCallOutputItemListParam {
	out := make(responses.ResponseFunctionCallOutputItemListParam, len(blocks))
	for i, b := range blocks {
		switch b.Kind {
		case turn.BlockImage:
			img := &responses.ResponseInputImageContentParam{Detail: responses.ResponseInputImageContentDetailAuto}
			if b.URL != "" {
				img.ImageURL = param.NewOpt(b.URL)
			} else {
				img.ImageURL = param.NewOpt(b.DataURL())
			}
			out[i] = responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: img}
		case turn.BlockPDF:
			file := &responses.ResponseInputFileContentParam{}
			if b.URL != "" {
				file.FileURL = param.NewOpt(b.URL)
			} else {
				name := b.Name
				if name == "" {
					name = "document.pdf"
				}
				file.FileData = param.NewOpt(b.DataURL())
				file.Filename = param.NewOpt(name)
			}
			out[i] = responses.ResponseFunctionCallOutputItemUnionParam{OfInputFile: file}
		default:
			out[i] = responses.ResponseFunctionCallOutputItemParamOfInputText(b.Text)
		}
	}
	return out
}

// CallChat runs the tool calls of a Chat Completions reply
// (ChatCompletionMessage.ToolCalls) through the box and returns their
// outcomes. See [Tools.CallResponses] for how they run and what the error
// means; a custom tool call is answered as tool-not-found (the box serves
// function tools only).
func (t *Tools) CallChat(ctx context.Context, calls []openai.ChatCompletionMessageToolCallUnion) (*Turn, error) {
	cs := make([]turn.Call, len(calls))
	for i, c := range calls {
		switch {
		case c.Type == "function" || c.Type == "" && c.Function.Name != "":
			cs[i] = t.newCall(c.ID, c.Function.Name, c.Function.Arguments)
		case c.Type == "custom":
			cs[i] = turn.Call{ID: c.ID, Name: c.Custom.Name, Refused: turn.NotOffered(c.Custom.Name)}
		default:
			cs[i] = turn.Call{ID: c.ID, Refused: turn.NotOffered("")}
		}
	}
	return t.dispatch(ctx, cs)
}

// CallResponses runs the function calls among a Responses API reply's
// output items (Response.Output) through the box and returns their
// outcomes; other items are skipped.
//
// The calls run at once, at most [WithMaxParallel] at a time, each with
// the model's call id in its context (toolmw.WithCallID); their outcomes
// come back in the model's order. Every call draws on the run budget ctx
// carries (put one there with budget.WithRun before the loop's first
// turn, so that it spans the run). A call the model makes to a tool the
// box did not offer is answered as tool-not-found without calling the
// box; arguments that are empty are read as {}.
//
// The Turn always holds an outcome for every call, so the conversation
// stays well-formed whatever happens. The error is nil, or a *[Stop]
// saying why the loop should not go on: ctx is done, every call was
// refused by the run budget, or every call found its circuit open. A
// panic in a tool is re-raised in the caller's goroutine once the turn's
// other calls have returned; a tool that calls runtime.Goexit ends its
// call as tool-failed/tool_exited.
func (t *Tools) CallResponses(ctx context.Context, items []responses.ResponseOutputItemUnion) (*Turn, error) {
	var cs []turn.Call
	for _, it := range items {
		if it.Type != "function_call" {
			continue
		}
		if it.Namespace != "" {
			cs = append(cs, turn.Call{ID: it.CallID, Name: it.Name, Refused: turn.NotOffered("")})
			continue
		}
		cs = append(cs, t.newCall(it.CallID, it.Name, it.Arguments.OfString))
	}
	return t.dispatch(ctx, cs)
}

func (t *Tools) newCall(id, name, args string) turn.Call {
	c := turn.Call{ID: id, Name: name}
	if !t.offered[name] {
		c.Refused = turn.NotOffered(name)
		return c
	}
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	c.Args = json.RawMessage(args)
	return c
}

// dispatch runs cs through the box (see turn.Run for how) and reports
// whether the run should stop.
func (t *Tools) dispatch(ctx context.Context, cs []turn.Call) (*Turn, error) {
	answers := turn.Run(ctx, t.box, cs, turn.Options{MaxParallel: t.opts.maxParallel, CountCalls: t.opts.countCalls})
	out := &Turn{Calls: make([]Answer, len(cs))}
	for i, a := range answers {
		out.Calls[i] = Answer{CallID: cs[i].ID, Name: cs[i].Name, Result: a.Result, Err: a.Err, Text: a.Text}
	}
	return out, turn.StopOf(ctx, answers)
}
