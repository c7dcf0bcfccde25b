// Package anthropic connects a toolmw Toolbox to the Anthropic Go SDK
// (github.com/anthropics/anthropic-sdk-go/v2): the box's tools as Messages
// API tools, and the model's tool_use blocks of each turn dispatched
// through the box, their outcomes sent back as tool_result blocks; or the
// box's tools, and tools written for the SDK's tool runner, as tools of
// that runner.
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
// # The SDK's tool runner
//
// The SDK's own loop (client.Beta.Messages.NewToolRunner, and
// NewToolRunnerStreaming) takes anthropic.BetaTools: [Tools.BetaTools]
// gives the box's tools as those, and [WrapBetaTool] puts a tool written
// for the runner behind a toolmw stack. The runner calls every tool_use
// block of a turn at once, with no hook, and hands a tool only its input:
//
//	tools, err := toolanthropic.New(box)
//	runner := client.Beta.Messages.NewToolRunner(tools.BetaTools(), params)
//	ctx, run := toolanthropic.WithBetaRunner(budget.WithRun(ctx), runner)
//	msg, err := runner.RunToCompletion(ctx)
//	err = run.End(err) // a *toolanthropic.Stop when a call stopped the run
//
// The runner sends "Error: " and the text of any error a tool returns,
// and sets is_error only then. These tools answer a result as content
// (toolmw.ForModel's text, or image and document blocks as
// [Turn.Blocks] maps parts) and a failure as an error whose text is only
// the envelope: the model reads "Error: " and the envelope, with is_error
// set, never a raw error.
//
// Under [WithBetaRunner], each call finds its tool_use block in the
// runner's last reply (its tool, the same input, a block no other call
// took) and runs with the block's id as its call id; and a call whose
// answer says the run should stop (turn.StopOf of that one call) cancels
// the run's context, the only thing that ends the runner's loop: the
// runner returns before it asks the model again, the turn's running calls
// finish (one it has not started is not started), and [BetaRun.End]
// returns the [*Stop]. One call is enough: a
// tool sees nothing of the rest of its turn, unlike [Tools.Call]. Without
// WithBetaRunner the tools still answer, but their calls have no id (an
// approval-gated call can then never be approved) and no answer ends the
// run.
//
// The runner has no pause, and cannot be told to run the calls of a reply
// it did not receive: an approval-pending call ends the run. Save
// runner.Messages(); once a reviewer approves, [ResumeBeta], with the
// same run id, answers that reply's calls (the approved one runs once)
// and returns the messages a new runner goes on from.
//
// The runner answers a tool it was not given itself ("Error: Tool '…' not
// found", is_error set) and goes on. [WithMaxParallel] does not bound the
// runner's calls. examples/toolrunner runs the runner with a box's tools
// and one of its own, against the replay or Anthropic.
//
// Everything here is safe for concurrent use.
package anthropic
