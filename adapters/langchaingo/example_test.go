package langchaingo_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/toolmw/toolmw"
	toollangchaingo "github.com/toolmw/toolmw/adapters/langchaingo"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/taxonomy"
)

// twoTurns stands in for a chat model: it asks for the weather in two
// cities at once (as a model shown the OpenAI functions agent's
// declarations writes it: the JSON arguments in __arg1), prints what it
// reads of each call, and answers.
type twoTurns struct{ turn int }

func (m *twoTurns) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.turn++
	if m.turn == 1 {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{
			{ID: "call_A1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "get_weather", Arguments: `{"__arg1":"{\"city\":\"Paris\"}"}`}},
			{ID: "call_B2", Type: "function", FunctionCall: &llms.FunctionCall{Name: "get_weather", Arguments: `{"__arg1":"{\"city\":\"Atlantis\"}"}`}},
		}}}}, nil
	}
	for _, msg := range msgs {
		for _, p := range msg.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				fmt.Println(r.ToolCallID, r.Content)
			}
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "Clear in Paris; Atlantis has no forecast."}}}, nil
}

func (m *twoTurns) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// A LangChainGo agent over a toolmw Toolbox: the tool's refusal reaches
// the model as an answer, and the run goes on.
func Example() {
	box := toolmw.NewToolbox(middleware.Default().Middleware())
	_ = box.Register(toolmw.Spec{Name: "get_weather", Description: "Current weather in a city."},
		toolmw.Typed(func(ctx context.Context, in struct {
			City string `json:"city"`
		}) (string, error) {
			if in.City == "Atlantis" {
				return "", taxonomy.Refusal("unknown_city", "no forecast for that city")
			}
			return "clear in " + in.City, nil
		}))

	lc, err := toollangchaingo.New(box)
	if err != nil {
		panic(err)
	}
	agent := agents.NewOpenAIFunctionsAgent(&twoTurns{}, lc.Tools())
	executor := agents.NewExecutor(toollangchaingo.Agent(agent))
	ctx := budget.WithRun(context.Background(), budget.WithID("run_example"))
	answer, err := chains.Run(ctx, executor, "Weather in Paris and Atlantis?")
	var stop *toollangchaingo.Stop
	if errors.As(err, &stop) {
		fmt.Println("stopped:", stop.Kind)
		return
	}
	if err != nil {
		panic(err)
	}
	fmt.Println(answer)
	// Output:
	// call_A1 <untrusted-data source="tool_result">clear in Paris</untrusted-data>
	// call_B2 <untrusted-data source="tool_refusal">unknown_city: no forecast for that city</untrusted-data>
	// Clear in Paris; Atlantis has no forecast.
}

// A LangChainGo tool of your own, run through a toolmw stack: its error
// becomes an answer the model can read, its text withheld, instead of
// ending the executor's run.
func ExampleWrap() {
	wrapped, err := toollangchaingo.Wrap(failing{}, middleware.Default().Middleware())
	if err != nil {
		panic(err)
	}
	out, err := wrapped.Call(budget.WithRun(context.Background()), "2+2")
	fmt.Println(out, err)
	// Output:
	// <untrusted-data source="tool_error">tool-failed unmapped_failure</untrusted-data> <nil>
}

// failing is a LangChainGo tool whose error holds what the model must not
// read.
type failing struct{}

func (failing) Name() string        { return "calculator" }
func (failing) Description() string { return "Evaluates an expression." }
func (failing) Call(context.Context, string) (string, error) {
	return "", errors.New("dial db.internal:5432 with password hunter2: refused")
}
