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
