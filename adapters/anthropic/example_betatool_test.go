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

// The SDK's tool runner with a box's tools, against a replay of the API
// that asks for two calls at once, then answers. The refusal reaches the
// model as the runner sends failures, "Error: " and the envelope.
func ExampleTools_BetaTools() {
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
	runner := client.Beta.Messages.NewToolRunner(tools.BetaTools(), anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model:     anthropic.ModelClaudeSonnet5_5,
			MaxTokens: 1024,
			Messages:  []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Weather in Paris and Atlantis?"))},
		},
	})
	ctx, run := toolanthropic.WithBetaRunner(budget.WithRun(context.Background()), runner)
	msg, err := runner.RunToCompletion(ctx)
	if err := run.End(err); err != nil {
		panic(err) // a *toolanthropic.Stop, or the API's error
	}
	for _, m := range runner.Messages() {
		if m.OfUser == nil {
			continue
		}
		for _, b := range m.OfUser.Content {
			if r := b.OfToolResult; r != nil {
				fmt.Println(r.ToolUseID, r.IsError.Value, r.Content[0].OfText.Text)
			}
		}
	}
	fmt.Println(msg.Content[0].Text)
	// Output:
	// toolu_A1 false <untrusted-data source="tool_result">clear in Paris</untrusted-data>
	// toolu_B2 true Error: <untrusted-data source="tool_refusal">unknown_city: no forecast for that city</untrusted-data>
	// Clear in Paris; Atlantis has no forecast.
}
