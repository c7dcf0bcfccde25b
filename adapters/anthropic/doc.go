// Package anthropic connects a toolmw Toolbox to the Anthropic Go SDK
// (github.com/anthropics/anthropic-sdk-go/v2): the box's tools as Messages
// API tools, and the model's tool_use blocks of each turn dispatched
// through the box, their outcomes sent back as tool_result blocks.
//
// # Definitions
//
// [New] renders the box's tools once, their input schemas in toolmw's
// Anthropic profile: the subset of JSON Schema Anthropic's tool use
// supports, with constraints it ignores (bounds, patterns, lengths) moved
// into the descriptions so the model still reads them. [Tools.Params]
// returns them as ToolParams with name, description and input_schema.
//
// # Dispatch
//
// [Tools.Call] takes a reply's content blocks. The tool_use blocks of one
// turn run at once (the model's parallel calls), each with the block's id
// in its context, and their outcomes come back in the model's order as a
// [Turn]: [Turn.Message] is the user message of tool_result blocks that
// answers them, each with is_error set from the outcome and
// toolmw.ForModel's text: results and failures wrapped as untrusted data,
// never the raw error (the SDK's own tool runner sends "Error: " and the
// error's text).
//
// # Results with parts
//
// A result with parts (toolmw.Parts) that holds an image or a document the
// Messages API takes goes out in [Turn.Blocks] as a tool_result of content
// blocks, one per part in order: text and JSON parts as text blocks
// wrapped as untrusted data, images as image blocks (base64 with the media
// type, or a URL source), PDFs as document blocks (base64, or a URL
// source) and text/plain files as plain-text documents whose text is
// wrapped as untrusted data, documents titled with the file's name; audio,
// links, embedded resources and other files as text blocks holding
// toolmw.ForModel's descriptor of them. Every other answer — a text
// result, parts with no such media, a failure — is the one text block it
// always was.
//
// Everything in a part is untrusted, so a part goes as media only when the
// API will take it: an image of type image/png, image/jpeg, image/gif or
// image/webp, or a file of type application/pdf, whose bytes are what the
// type says (sniffed), or with no bytes and an http or https URL without
// credentials; a text/plain file of valid UTF-8; each image at most 5 MiB
// of base64 (the API's limit) and the turn's media at most 30 MiB, below
// its 32 MB request limit. Any other part is a descriptor. A file's name
// is cut to its last path element, without control or invisible
// characters, at most 128 bytes.
//
// Every call draws on the run budget in the context (budget.WithRun), so a
// budget put there before the first turn spans the whole run. When nothing
// the model wants can run — every call refused by the run budget, or every
// tool's circuit open — or the context is done, the dispatcher returns a
// [*Stop] whose Kind says which, next to the complete Turn.
//
// # The loop
//
//	tools, err := toolanthropic.New(box)
//	params := anthropic.MessageNewParams{Model: model, MaxTokens: 1024, Messages: msgs, Tools: tools.Params()}
//	ctx = budget.WithRun(ctx)
//	for {
//		msg, err := client.Messages.New(ctx, params)
//		if err != nil { return err }
//		params.Messages = append(params.Messages, msg.ToParam())
//		turn, err := tools.Call(ctx, msg.Content)
//		if len(turn.Calls) == 0 { return msg.Content[0].Text, nil }
//		params.Messages = append(params.Messages, turn.Message())
//		if err != nil { return err } // a *toolanthropic.Stop
//	}
//
// examples/loop runs that loop against a local replay of the API, or
// against Anthropic when ANTHROPIC_API_KEY is set.
//
// Everything here is safe for concurrent use.
package anthropic
