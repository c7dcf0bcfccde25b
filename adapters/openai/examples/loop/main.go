// Command loop runs an agent loop on the OpenAI Chat Completions API with
// a toolmw Toolbox: the model asks for the weather in two cities at once,
// the dispatcher runs both calls through the box concurrently, and the
// model answers from their results.
//
// With OPENAI_API_KEY set it talks to OpenAI. Without it, it starts a
// replay of the API on 127.0.0.1 (recorded replies: first a turn with two
// tool calls, then the final answer), so it runs on a fresh machine with no
// key and no network:
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
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/toolmw/toolmw"
	toolopenai "github.com/toolmw/toolmw/adapters/openai"
	"github.com/toolmw/toolmw/adapters/openai/internal/replay"
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

// run asks the question on OpenAI with OPENAI_API_KEY set, else on the
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
	if os.Getenv("OPENAI_API_KEY") == "" {
		url, stop, err := replay.Listen(replay.New("/v1/chat/completions",
			replay.ChatToolCalls(
				replay.ToolCall{ID: "call_Xk3pQ9mZ2bT7vN1rL8sD4fHa", Name: "get_weather", Arguments: `{"city":"Paris"}`},
				replay.ToolCall{ID: "call_R5tY8uI2oP4aS6dF9gH1jK3l", Name: "get_weather", Arguments: `{"city":"Tokyo"}`}),
			replay.ChatAnswer("Paris has light rain at 14°C; Tokyo is clear at 22°C.")))
		if err != nil {
			return err
		}
		defer stop()
		opts = append(opts, option.WithBaseURL(url+"/v1/"), option.WithAPIKey("replay"))
	}
	client := openai.NewClient(opts...)

	answer, err := loop(ctx, client, box, "What's the weather in Paris and in Tokyo?")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, answer)
	return err
}

// loop is the agent loop: ask, run the tools the model calls, send their
// answers back, until the model answers without calling a tool.
func loop(ctx context.Context, client openai.Client, box *toolmw.Toolbox, question string) (string, error) {
	tools, err := toolopenai.New(box) // strict function tools, rendered once
	if err != nil {
		return "", err
	}
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT5_4Mini,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(question)},
		Tools:    tools.ForChat(),
	}
	ctx = budget.WithRun(ctx) // one run budget for every turn
	for {
		reply, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return "", err
		}
		msg := reply.Choices[0].Message
		params.Messages = append(params.Messages, msg.ToParam())
		turn, err := tools.CallChat(ctx, msg.ToolCalls) // concurrent, answers in the model's order
		params.Messages = append(params.Messages, turn.Messages()...)
		if err != nil {
			return "", err // a *toolopenai.Stop: run budget, open circuits or cancellation
		}
		if len(turn.Calls) == 0 {
			return msg.Content, nil
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
