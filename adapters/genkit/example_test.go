package genkit_test

import (
	"context"
	"fmt"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/toolmw/toolmw"
	toolgenkit "github.com/toolmw/toolmw/adapters/genkit"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/taxonomy"
)

// exampleModel defines a model on g that asks for calls, then answers
// with the tool responses it read, one line each: a stand-in for Gemini.
func exampleModel(g *genkit.Genkit, name string, reqs ...*ai.ToolRequest) ai.Model {
	return genkit.DefineModelAction(g, name, &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true}},
		func(ctx context.Context, req *ai.ModelRequest, _ any, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			last := req.Messages[len(req.Messages)-1]
			if last.Role != ai.RoleTool {
				return &ai.ModelResponse{Message: calls(reqs...)}, nil
			}
			text := ""
			for _, p := range last.Content {
				text += fmt.Sprintf("%s %s\n", p.ToolResponse.Ref, p.ToolResponse.Output)
			}
			return &ai.ModelResponse{Message: ai.NewModelTextMessage(text)}, nil
		})
}

// A Toolbox's tools in a Genkit generation: a refusal, a result and a
// tool the model made up all reach the model as tool responses, and the
// generation goes on to its answer.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := genkit.Init(ctx)

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
	model := exampleModel(g, "example/model",
		&ai.ToolRequest{Name: "get_weather", Ref: "call_1", Input: map[string]any{"city": "Paris"}},
		&ai.ToolRequest{Name: "get_weather", Ref: "call_2", Input: map[string]any{"city": "Atlantis"}},
		&ai.ToolRequest{Name: "get_tide", Ref: "call_3", Input: map[string]any{"port": "Brest"}})

	tools, err := toolgenkit.New(box)
	if err != nil {
		panic(err)
	}
	resp, err := genkit.Generate(budget.WithRun(ctx), g, ai.WithModel(model),
		ai.WithPrompt("Weather in Paris and Atlantis, and the tide in Brest?"), ai.WithUse(tools))
	if err != nil {
		panic(err)
	}
	fmt.Print(resp.Text())
	// Output:
	// call_1 <untrusted-data source="tool_result">clear in Paris</untrusted-data>
	// call_2 <untrusted-data source="tool_refusal">unknown_city: no forecast for that city</untrusted-data>
	// call_3 <untrusted-data source="tool_error">tool-not-found tool_not_found: no tool named get_tide</untrusted-data>
}

// The application's own Genkit tool under a toolmw stack: its error
// reaches the model typed, without its text, and the generation goes on.
func ExampleWrap() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := genkit.Init(ctx)

	ledger := genkit.DefineTool(g, "read_ledger", "Reads an account's ledger.",
		func(tc *ai.ToolContext, in struct {
			Account string `json:"account"`
		}) (string, error) {
			return "", fmt.Errorf("connect to ledger db with password hunter2: refused")
		})
	model := exampleModel(g, "example/wrap-model",
		&ai.ToolRequest{Name: "read_ledger", Ref: "call_1", Input: map[string]any{"account": "A-7"}})

	wrap, err := toolgenkit.Wrap(middleware.Default().Middleware())
	if err != nil {
		panic(err)
	}
	resp, err := genkit.Generate(ctx, g, ai.WithModel(model), ai.WithPrompt("Read A-7's ledger."),
		ai.WithTools(ledger), ai.WithUse(wrap))
	if err != nil {
		panic(err)
	}
	fmt.Print(resp.Text())
	// Output:
	// call_1 <untrusted-data source="tool_error">tool-failed unmapped_failure</untrusted-data>
}
