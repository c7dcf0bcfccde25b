// Command toolrunner runs the Anthropic SDK's own tool runner
// (client.Beta.Messages.NewToolRunner) with a toolmw Toolbox's tools and a
// tool written for the runner, both behind toolmw's default stack: the
// model asks for the weather in two cities and the local time at once,
// the runner calls the three tools in parallel, and the model answers.
// One city has no forecast: the tool refuses, and the model is shown the
// refusal wrapped as untrusted data, never a raw error.
//
// With ANTHROPIC_API_KEY set it talks to Anthropic. Without it, it starts
// a replay of the API on 127.0.0.1 (recorded replies: a turn with three
// tool_use blocks, then the answer), so it runs with no key and no
// network:
//
//	go run ./examples/toolrunner
//
// It prints what each tool_result told the model, then the answer.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/toolrunner"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/taxonomy"
)

// Weather is the input of get_weather, a toolmw tool.
type Weather struct {
	City string `json:"city" jsonschema:"The city, in English"`
}

// forecasts stand in for a weather service.
var forecasts = map[string]string{"Paris": "light rain, 14°C"}

func getWeather(ctx context.Context, in Weather) (string, error) {
	f, ok := forecasts[in.City]
	if !ok {
		return "", taxonomy.Refusal("unknown_city", "no forecast for that city")
	}
	return in.City + ": " + f, nil
}

// TimeIn is the input of local_time, a tool written for the runner.
type TimeIn struct {
	City string `json:"city" jsonschema:"required,description=The city"`
}

func localTime(ctx context.Context, in TimeIn) (anthropic.BetaToolResultBlockParamContentUnion, error) {
	return anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: in.City + ": 09:30"}}, nil
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run asks the question on Anthropic with ANTHROPIC_API_KEY set, else on
// the replay, and prints the tool_results and the answer to w.
func run(ctx context.Context, w io.Writer) error {
	stack := middleware.Default().Middleware()
	box := toolmw.NewToolbox(stack)
	if err := box.Register(toolmw.Spec{Name: "get_weather", Description: "Current weather in a city", Idempotent: true},
		toolmw.Typed(getWeather)); err != nil {
		return err
	}
	clock, err := toolrunner.NewBetaToolFromJSONSchema("local_time", "The local time in a city", localTime)
	if err != nil {
		return err
	}
	own, err := toolanthropic.WrapBetaTool(clock, toolmw.Spec{Idempotent: true}, stack) // your own runner tool, behind the stack
	if err != nil {
		return err
	}

	var opts []option.RequestOption
	if os.Getenv("ANTHROPIC_API_KEY") == "" {
		url, stop, err := replay.Listen(replay.New("/v1/messages",
			replay.ToolUses("I'll check.",
				replay.ToolUse{ID: "toolu_01A09q90qw90lq917835lq9a", Name: "get_weather", Input: `{"city":"Paris"}`},
				replay.ToolUse{ID: "toolu_01B18r81rx81mr826744mr8b", Name: "get_weather", Input: `{"city":"Atlantis"}`},
				replay.ToolUse{ID: "toolu_01C27s72sy72ns735653ns7c", Name: "local_time", Input: `{"city":"Paris"}`}),
			replay.Answer("In Paris it is 09:30 with light rain at 14°C; there is no forecast for Atlantis.")))
		if err != nil {
			return err
		}
		defer stop()
		opts = append(opts, option.WithBaseURL(url), option.WithAPIKey("replay"))
	}
	client := anthropic.NewClient(opts...)

	runner, msg, err := ask(ctx, client, box, []anthropic.BetaTool{own}, "Weather and time in Paris, and the weather in Atlantis?")
	if err != nil {
		return err
	}
	for _, m := range runner.Messages() {
		if m.OfUser == nil {
			continue
		}
		for _, b := range m.OfUser.Content {
			if r := b.OfToolResult; r != nil {
				fmt.Fprintln(w, r.ToolUseID, r.IsError.Value, r.Content[0].OfText.Text)
			}
		}
	}
	for _, b := range msg.Content {
		fmt.Fprint(w, b.Text)
	}
	_, err = fmt.Fprintln(w)
	return err
}

// ask runs the SDK's tool runner with the box's tools and the runner tools
// of your own, until the model answers.
func ask(ctx context.Context, client anthropic.Client, box *toolmw.Toolbox, own []anthropic.BetaTool, question string) (*anthropic.BetaToolRunner, *anthropic.BetaMessage, error) {
	tools, err := toolanthropic.New(box) // the box's tools, rendered once
	if err != nil {
		return nil, nil, err
	}
	runner := client.Beta.Messages.NewToolRunner(append(tools.BetaTools(), own...), anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model:     anthropic.ModelClaudeSonnet5_5,
			MaxTokens: 1024,
			Messages:  []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(question))},
		},
	})
	ctx, run := toolanthropic.WithBetaRunner(budget.WithRun(ctx), runner) // tool_use ids as call ids; stops end the loop
	msg, err := runner.RunToCompletion(ctx)
	return runner, msg, run.End(err) // a *toolanthropic.Stop when a call stopped the run
}
