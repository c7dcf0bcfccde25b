// Command loop runs an agent loop on the Anthropic Messages API with a
// toolmw Toolbox: the model asks for the weather in two cities at once,
// the dispatcher runs both tool_use blocks through the box concurrently,
// and the model answers from their tool_result blocks.
//
// With ANTHROPIC_API_KEY set it talks to Anthropic. Without it, it starts
// a replay of the API on 127.0.0.1 (recorded replies: first a turn with two
// tool_use blocks, then the final answer), so it runs on a fresh machine
// with no key and no network:
//
//	go run ./examples/loop
//
// It prints the answer on stdout, and a log line per tool call (the
// logging layer of middleware.Default) on stderr.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/logging"
	"github.com/toolmw/toolmw/taxonomy"
)

// Weather is the input of get_weather.
type Weather struct {
	City string `json:"city" jsonschema:"The city, in English"`
}

// forecasts stand in for a weather service.
var forecasts = map[string]string{"Paris": "light rain, 14°C", "Tokyo": "clear, 22°C"}

func getWeather(ctx context.Context, in Weather) (string, error) {
	f, ok := forecasts[in.City]
	if !ok {
		return "", taxonomy.Refusal("unknown_city", "no forecast for that city")
	}
	return in.City + ": " + f, nil
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, os.Stderr); err != nil {
		log.Fatal(err)
	}
}

// run asks the question on Anthropic with ANTHROPIC_API_KEY set, else on the
// replay, and prints the answer to w and a log line per tool call (its id
// and outcome) to logs.
func run(ctx context.Context, w, logs io.Writer) error {
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{ReplaceAttr: noTime}))
	box := toolmw.NewToolbox(middleware.Default(
		middleware.WithSlog(logger, logging.WithSuccessLevel(slog.LevelInfo)),
	).Middleware())
	if err := box.Register(toolmw.Spec{Name: "get_weather", Description: "Current weather in a city", Idempotent: true},
		toolmw.Typed(getWeather)); err != nil {
		return err
	}

	var opts []option.RequestOption
	if os.Getenv("ANTHROPIC_API_KEY") == "" {
		url, stop, err := replay.Listen(replay.New("/v1/messages",
			replay.ToolUses("I'll check both cities.",
				replay.ToolUse{ID: "toolu_01A09q90qw90lq917835lq9a", Name: "get_weather", Input: `{"city":"Paris"}`},
				replay.ToolUse{ID: "toolu_01B18r81rx81mr826744mr8b", Name: "get_weather", Input: `{"city":"Tokyo"}`}),
			replay.Answer("Paris has light rain at 14°C; Tokyo is clear at 22°C.")))
		if err != nil {
			return err
		}
		defer stop()
		opts = append(opts, option.WithBaseURL(url), option.WithAPIKey("replay"))
	}
	client := anthropic.NewClient(opts...)

	answer, err := loop(ctx, client, box, "What's the weather in Paris and in Tokyo?")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, answer)
	return err
}

// loop is the agent loop: ask, run the tools the model calls, send their
// results back, until the model answers without calling a tool.
func loop(ctx context.Context, client anthropic.Client, box *toolmw.Toolbox, question string) (string, error) {
	tools, err := toolanthropic.New(box) // tools in the Anthropic profile, rendered once
	if err != nil {
		return "", err
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeSonnet5_5,
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(question))},
		Tools:     tools.Params(),
	}
	ctx = budget.WithRun(ctx) // one run budget for every turn
	for {
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			return "", err
		}
		params.Messages = append(params.Messages, msg.ToParam())
		turn, err := tools.Call(ctx, msg.Content) // concurrent, results in the model's order
		if len(turn.Calls) == 0 {
			var answer strings.Builder
			for _, b := range msg.Content {
				answer.WriteString(b.Text)
			}
			return answer.String(), nil
		}
		params.Messages = append(params.Messages, turn.Message())
		if err != nil {
			return "", err // a *toolanthropic.Stop: run budget, open circuits or cancellation
		}
	}
}

// noTime drops the time from log lines.
func noTime(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey && len(groups) == 0 {
		return slog.Attr{}
	}
	return a
}
