package anthropic_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/taxonomy"
)

// The agent loop on the Messages API, against a replay of the API that
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

	srv := httptest.NewServer(replay.New("/v1/messages",
		replay.ToolUses("Checking both.",
			replay.ToolUse{ID: "toolu_A1", Name: "get_weather", Input: `{"city":"Paris"}`},
			replay.ToolUse{ID: "toolu_B2", Name: "get_weather", Input: `{"city":"Atlantis"}`}),
		replay.Answer("Clear in Paris; Atlantis has no forecast.")))
	defer srv.Close()
	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("replay"))

	tools, err := toolanthropic.New(box)
	if err != nil {
		panic(err)
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeSonnet5_5,
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris and Atlantis?"))},
		Tools:     tools.Params(),
	}
	ctx := budget.WithRun(context.Background())
	for {
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			panic(err)
		}
		params.Messages = append(params.Messages, msg.ToParam())
		turn, err := tools.Call(ctx, msg.Content)
		if len(turn.Calls) == 0 {
			fmt.Println(msg.Content[0].Text)
			return
		}
		params.Messages = append(params.Messages, turn.Message())
		if err != nil {
			panic(err) // a *toolanthropic.Stop
		}
		for _, c := range turn.Calls {
			fmt.Println(c.ToolUseID, c.IsError(), c.Text)
		}
	}
	// Output:
	// toolu_A1 false <untrusted-data source="tool_result">clear in Paris</untrusted-data>
	// toolu_B2 true <untrusted-data source="tool_refusal">unknown_city: no forecast for that city</untrusted-data>
	// Clear in Paris; Atlantis has no forecast.
}
