// Command agent runs a Genkit generation whose tools go through toolmw: the
// model asks for the weather in two cities and to cancel a booking; the
// weather calls run (one is refused, typed), the cancellation waits for a
// person's approval, so the generation pauses; the conversation is saved
// to a file, a reviewer approves, and the generation resumes from the
// file: the booking is cancelled once, and the model answers.
//
// It runs offline: the model is a scripted stand-in for Gemini, defined
// with genkit.DefineModelAction, and the reviewer says yes.
//
//	go run ./examples/agent
//
// It prints what happened on stdout.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/toolmw/toolmw"
	toolgenkit "github.com/toolmw/toolmw/adapters/genkit"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
)

// Weather is the input of get_weather.
type Weather struct {
	City string `json:"city" jsonschema:"The city, in English"`
}

// Booking is the input of cancel_booking.
type Booking struct {
	Booking string `json:"booking" jsonschema:"The booking reference"`
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "toolmw-genkit-agent")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := run(ctx, os.Stdout, filepath.Join(dir, "history.json")); err != nil {
		log.Fatal(err)
	}
}

// run asks the question, saves the conversation to historyFile when the
// generation pauses, approves what waits, and resumes from the file.
func run(ctx context.Context, w io.Writer, historyFile string) error {
	g := genkit.Init(ctx)
	model := defineModel(g)

	desk := approval.NewDesk()
	stack, err := middleware.Default().InsertBefore(middleware.Retry,
		middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("cancel_booking"))})
	if err != nil {
		return err
	}
	box := toolmw.NewToolbox(stack.Middleware())
	if err := box.Register(toolmw.Spec{Name: "get_weather", Description: "Current weather in a city", Idempotent: true},
		toolmw.Typed(getWeather)); err != nil {
		return err
	}
	cancelled := 0
	if err := box.Register(toolmw.Spec{Name: "cancel_booking", Description: "Cancels a booking"},
		toolmw.Typed(func(ctx context.Context, in Booking) (string, error) {
			cancelled++
			return "cancelled " + in.Booking, nil
		})); err != nil {
		return err
	}

	history := []*ai.Message{ai.NewUserTextMessage("Weather in Paris and Atlantis? And cancel BK-1042.")}
	resp, err := agent(ctx, g, model, box, history)
	if err != nil {
		return err
	}
	for resp.FinishReason == ai.FinishReasonInterrupted {
		if err := save(historyFile, resp.History()); err != nil {
			return err
		}
		for _, p := range resp.Interrupts() {
			id, ok := toolgenkit.Pending(p)
			if !ok {
				return fmt.Errorf("an interrupt this program does not know")
			}
			req, err := desk.Get(ctx, id)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "paused: %s waits for approval; the reviewer approves\n", req.Tool)
			if err := desk.Approve(ctx, req, time.Hour); err != nil {
				return err
			}
		}
		// The process could have restarted here: the conversation comes
		// back from the file.
		if history, err = load(historyFile); err != nil {
			return err
		}
		if resp, err = agent(ctx, g, model, box, history); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "cancelled %d time(s)\n%s\n", cancelled, resp.Text())
	return nil
}

// agent runs the generation on history, or resumes it when history ends
// with calls that waited for an approval.
func agent(ctx context.Context, g *genkit.Genkit, model ai.Model, box *toolmw.Toolbox, history []*ai.Message) (*ai.ModelResponse, error) {
	tools, err := toolgenkit.New(box) // the box's tools, for ai.WithUse
	if err != nil {
		return nil, err
	}
	ctx = budget.WithRun(ctx, budget.WithID("run_trip_42")) // the same run id when resuming
	return genkit.Generate(ctx, g, ai.WithModel(model), ai.WithMessages(history...),
		ai.WithToolRestarts(toolgenkit.Restarts(history)...), // approved calls run again
		ai.WithUse(tools))
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

// defineModel defines the scripted stand-in for Gemini: asked first, it
// calls the tools; given their answers, it answers from them.
func defineModel(g *genkit.Genkit) ai.Model {
	return genkit.DefineModelAction(g, "example/scripted", &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true}},
		func(ctx context.Context, req *ai.ModelRequest, _ any, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			last := req.Messages[len(req.Messages)-1]
			if last.Role != ai.RoleTool {
				return &ai.ModelResponse{Message: &ai.Message{Role: ai.RoleModel, Content: []*ai.Part{
					ai.NewToolRequestPart(&ai.ToolRequest{Name: "get_weather", Ref: "call_1", Input: map[string]any{"city": "Paris"}}),
					ai.NewToolRequestPart(&ai.ToolRequest{Name: "get_weather", Ref: "call_2", Input: map[string]any{"city": "Atlantis"}}),
					ai.NewToolRequestPart(&ai.ToolRequest{Name: "cancel_booking", Ref: "call_3", Input: map[string]any{"booking": "BK-1042"}}),
				}}}, nil
			}
			var lines []string
			for _, p := range last.Content {
				if p.IsToolResponse() {
					out, _ := p.ToolResponse.Output.(string)
					_, content, _ := toolmw.ParseEnvelope(out)
					lines = append(lines, p.ToolResponse.Ref+": "+content)
				}
			}
			return &ai.ModelResponse{Message: ai.NewModelTextMessage("From the tools:\n" + strings.Join(lines, "\n"))}, nil
		})
}

// save writes a conversation to a file as JSON.
func save(path string, history []*ai.Message) error {
	b, err := json.Marshal(history)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// load reads a conversation saved by save.
func load(path string) ([]*ai.Message, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var history []*ai.Message
	return history, json.Unmarshal(b, &history)
}
