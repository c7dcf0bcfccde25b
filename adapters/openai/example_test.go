package openai_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/toolmw/toolmw"
	toolopenai "github.com/toolmw/toolmw/adapters/openai"
	"github.com/toolmw/toolmw/adapters/openai/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/taxonomy"
)

// The agent loop on Chat Completions, against a replay of the API that
// first asks for two calls at once, then answers.
func Example() {
	box := toolmw.NewToolbox(middleware.Default().Middleware())
	_ = box.Register(toolmw.Spec{Name: "get_weather", Description: "Current weather in a city"},
		toolmw.Typed(func(ctx context.Context, in struct {
			City string `json:"city"`
		}) (string, error) {
			if in.City == "Atlantis" {
				return "", taxonomy.Refusal("unknown_city", "no forecast for that city")
			}
			return "clear in " + in.City, nil
		}))

	srv := httptest.NewServer(replay.New("/v1/chat/completions",
		replay.ChatToolCalls(
			replay.ToolCall{ID: "call_A1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			replay.ToolCall{ID: "call_B2", Name: "get_weather", Arguments: `{"city":"Atlantis"}`}),
		replay.ChatAnswer("Clear in Paris; Atlantis has no forecast.")))
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("replay"))

	tools, err := toolopenai.New(box)
	if err != nil {
		panic(err)
	}
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT5_4Mini,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris and Atlantis?")},
		Tools:    tools.ForChat(),
	}
	ctx := budget.WithRun(context.Background())
	for {
		reply, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			panic(err)
		}
		msg := reply.Choices[0].Message
		params.Messages = append(params.Messages, msg.ToParam())
		turn, err := tools.CallChat(ctx, msg.ToolCalls)
		params.Messages = append(params.Messages, turn.Messages()...)
		if err != nil {
			panic(err) // a *toolopenai.Stop
		}
		if len(turn.Calls) == 0 {
			fmt.Println(msg.Content)
			return
		}
		for _, c := range turn.Calls {
			fmt.Println(c.CallID, c.Text)
		}
	}
	// Output:
	// call_A1 <untrusted-data source="tool_result">clear in Paris</untrusted-data>
	// call_B2 <untrusted-data source="tool_refusal">unknown_city: no forecast for that city</untrusted-data>
	// Clear in Paris; Atlantis has no forecast.
}
