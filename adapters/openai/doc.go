// Package openai connects a toolmw Toolbox to the OpenAI Go SDK
// (github.com/openai/openai-go/v3): the box's tools as Chat Completions and
// Responses API function tools, and the model's tool calls of each turn
// dispatched through the box, their outcomes sent back as the messages the
// API expects.
//
// # Definitions
//
// [New] renders the box's tools once. [Tools.ForChat] and
// [Tools.ForResponses] return them as function tools, each with its name,
// description, parameters schema and an explicit strict flag. Strict mode
// is the default: the schemas are rendered in toolmw's OpenAIStrict profile
// (every property required, optional ones nullable, additionalProperties
// false), exactly what toolmw.Typed decodes. A box with a tool that strict
// mode cannot describe (a map, a value of any type) makes New fail and name
// the tool; [WithStrict](false) sends the whole box non-strict instead.
//
// # Dispatch
//
// [Tools.CallChat] takes a Chat Completions reply's tool calls,
// [Tools.CallResponses] a Responses reply's output items. The calls of one
// turn run at once (the model's parallel calls), each with the model's call
// id in its context, and their outcomes come back in the model's order as a
// [Turn]: [Turn.Messages] gives the tool messages, [Turn.Items] the
// function_call_output items. What the model reads is toolmw.ForModel's
// text: results and failures wrapped as untrusted data, never a raw error
// (OpenAI's tool results have no error flag, so the envelope says it).
//
// # Results with parts
//
// A result with parts (toolmw.Parts) that holds an image or a PDF the
// Responses API takes goes out in [Turn.Items] as a function_call_output
// whose output is a list, one content item per part in order: text and
// JSON parts as input_text wrapped as untrusted data, images as
// input_image (a data URL of the bytes, or the image's URL), PDFs as
// input_file (a data URL with the file's name, or its URL), and audio,
// links, embedded resources and other files as input_text holding
// toolmw.ForModel's descriptor of them (the API takes none of those in a
// function_call_output). Every other answer — a text result, parts with no
// such media, a failure — is the plain string output it always was.
//
// Everything in a part is untrusted, so a part goes as media only when the
// API will take it: an image of type image/png, image/jpeg, image/gif
// (not animated) or image/webp, or a file of type application/pdf, whose
// bytes are what the type says (sniffed), or with no bytes and an http or
// https URL without credentials; and only while the turn's media stay
// under 48 MiB of base64, below the API's 50 MB request limit. Any other
// part is a descriptor. A file's name is cut to its last path element,
// without control or invisible characters, at most 128 bytes.
//
// A Chat Completions tool message takes text only (a string or text
// parts), so [Turn.Messages] sends every answer as its Text: a result's
// images and files as ForModel's descriptors.
//
// Every call draws on the run budget in the context (budget.WithRun), so a
// budget put there before the first turn spans the whole run. When nothing
// the model wants can run — every call refused by the run budget, or every
// tool's circuit open — or the context is done, the dispatcher returns a
// [*Stop] whose Kind says which, next to the complete Turn.
//
// # The loop
//
//	tools, err := toolopenai.New(box)
//	params := openai.ChatCompletionNewParams{Model: model, Messages: msgs, Tools: tools.ForChat()}
//	ctx = budget.WithRun(ctx)
//	for {
//		reply, err := client.Chat.Completions.New(ctx, params)
//		if err != nil { return err }
//		msg := reply.Choices[0].Message
//		params.Messages = append(params.Messages, msg.ToParam())
//		turn, err := tools.CallChat(ctx, msg.ToolCalls)
//		params.Messages = append(params.Messages, turn.Messages()...)
//		if err != nil { return err } // a *toolopenai.Stop
//		if len(turn.Calls) == 0 { return msg.Content, nil }
//	}
//
// examples/loop runs that loop against a local replay of the API, or
// against OpenAI when OPENAI_API_KEY is set.
//
// Everything here is safe for concurrent use.
package openai
