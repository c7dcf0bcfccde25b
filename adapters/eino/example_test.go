package eino_test

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/toolmw/toolmw"
	tooleino "github.com/toolmw/toolmw/adapters/eino"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/taxonomy"
)

type city struct {
	City string `json:"city"`
}

// An ADK agent with a Toolbox's tools. The model (scripted here) asks for
// the weather in two cities at once, one of which the tool refuses: the
// refusal reaches the model as a tool result, and the run goes on.
func Example() {
	box := toolmw.NewToolbox(middleware.Default().Middleware())
	_ = box.Register(toolmw.Spec{Name: "get_weather", Description: "Current weather in a city"},
		toolmw.Typed(func(ctx context.Context, in city) (string, error) {
			if in.City == "Atlantis" {
				return "", taxonomy.Refusal("unknown_city", "no forecast for that city")
			}
			return "clear in " + in.City, nil
		}))

	ctx := context.Background()
	chat := newScripted(
		calls("call_A1", "get_weather", `{"city":"Paris"}`, "call_B2", "get_weather", `{"city":"Atlantis"}`),
		say("Clear in Paris; Atlantis has no forecast."))
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:        "weather",
		Description: "Answers weather questions.",
		Model:       chat,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: tooleino.MustNew(box).NodeConfig()},
	})
	if err != nil {
		panic(err)
	}
	events := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "Weather in Paris and Atlantis?")
	for {
		ev, ok := events.Next()
		if !ok {
			break
		}
		if ev.Err != nil {
			panic(ev.Err) // a *turn.Stop, when toolmw ended the run
		}
		if ev.Output != nil && ev.Output.MessageOutput.Role == schema.Assistant && ev.Output.MessageOutput.Message.Content != "" {
			fmt.Println(ev.Output.MessageOutput.Message.Content)
		}
	}
	for _, msg := range chat.last() {
		if msg.Role == schema.Tool {
			fmt.Println(msg.ToolCallID, msg.Content)
		}
	}
	// Output:
	// Clear in Paris; Atlantis has no forecast.
	// call_A1 <untrusted-data source="tool_result">clear in Paris</untrusted-data>
	// call_B2 <untrusted-data source="tool_refusal">unknown_city: no forecast for that city</untrusted-data>
}

// A stack around a tool written for Eino, in a ToolsNode: the tool's
// typed failure is a tool result instead of the error that would end the
// run.
func ExampleMiddleware() {
	lookup, _ := utils.InferTool("lookup_fare", "Looks up a fare.", func(ctx context.Context, in city) (string, error) {
		return "", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the fares service is down")
	})
	ctx := context.Background()
	stack, err := tooleino.Middleware(middleware.Default().Middleware())
	if err != nil {
		panic(err)
	}
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{
		Tools:               []tool.BaseTool{lookup},
		UnknownToolsHandler: tooleino.UnknownTool,
		ToolCallMiddlewares: []compose.ToolMiddleware{stack},
	})
	if err != nil {
		panic(err)
	}
	out, err := node.Invoke(ctx, schema.AssistantMessage("", []schema.ToolCall{
		{ID: "call_1", Function: schema.FunctionCall{Name: "lookup_fare", Arguments: `{"city":"Oslo"}`}},
		{ID: "call_2", Function: schema.FunctionCall{Name: "book_hotel", Arguments: `{}`}},
	}))
	if err != nil {
		panic(err)
	}
	for _, msg := range out {
		fmt.Println(msg.ToolCallID, msg.Content)
	}
	// Output:
	// call_1 <untrusted-data source="tool_error">tool-failed upstream_unavailable: the fares service is down</untrusted-data>
	// call_2 <untrusted-data source="tool_error">tool-not-found tool_not_found: no tool named book_hotel</untrusted-data>
}
