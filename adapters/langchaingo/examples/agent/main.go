// Command agent runs a LangChainGo agent (the OpenAI functions agent and
// its executor) over a toolmw Toolbox, offline: a scripted model stands in
// for a real one and asks, in two turns, to cancel a flight (the tool
// refuses), for the weather (the weather service fails once; the retry
// layer tries again), for a tool that does not exist, and to cancel a
// booking, which needs a person's approval.
//
// LangChainGo has no pause and resume, so the approval ends the first pass
// with a *toollangchaingo.Stop. A reviewer approves the request; the same
// question is asked again in a run with the same id (as a request served
// later would: nothing is kept between the passes but the run id and the
// approval store); the model makes the same calls, the booking is
// cancelled, once, and the model answers. The calls before the approval
// run again in the second pass (dedupe's records live with the first
// pass's run, in memory): the weather service is called a third time.
//
//	go run ./examples/agent
//
// It prints what the model reads of each tool call, the approval request,
// and the answer.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync/atomic"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/toolmw/toolmw"
	toollangchaingo "github.com/toolmw/toolmw/adapters/langchaingo"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// ask is the glue of the README: the adapter's tools for the agent, the
// agent wrapped so that unknown tools are answered typed, and a run (named,
// so that a second pass finds its approvals) in the context.
func ask(ctx context.Context, llm llms.Model, box *toolmw.Toolbox, runID, question string) (string, error) {
	lc, err := toollangchaingo.New(box)
	if err != nil {
		return "", err
	}
	agent := agents.NewOpenAIFunctionsAgent(llm, lc.Tools())
	executor := agents.NewExecutor(toollangchaingo.Agent(agent))
	ctx = budget.WithRun(ctx, budget.WithID(runID))
	return chains.Run(ctx, executor, question) // a *toollangchaingo.Stop when the run must end
}

// Flight, City and Booking are the tools' inputs.
type (
	Flight struct {
		Flight string `json:"flight"`
	}
	City struct {
		City string `json:"city"`
	}
	Booking struct {
		Booking string `json:"booking"`
	}
)

func run(ctx context.Context, w io.Writer) error {
	desk := approval.NewDesk()
	stack, err := middleware.Default(middleware.WithRetry(retry.WithBackoff(0, 0))).InsertBefore(middleware.Retry,
		middleware.Layer{Name: middleware.Dedupe, Middleware: dedupe.New()})
	if err != nil {
		return err
	}
	stack, err = stack.InsertBefore(middleware.Retry,
		middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("cancel_booking"))})
	if err != nil {
		return err
	}
	box := toolmw.NewToolbox(stack.Middleware())
	var weatherCalls, cancellations atomic.Int32
	if err := errors.Join(
		box.Register(toolmw.Spec{Name: "cancel_flight", Description: "Cancels a flight."},
			toolmw.Typed(func(ctx context.Context, in Flight) (string, error) {
				return "", taxonomy.Refusal("flight_not_cancellable", "this fare is non-refundable")
			})),
		box.Register(toolmw.Spec{Name: "get_weather", Description: "Current weather in a city.", Idempotent: true},
			toolmw.Typed(func(ctx context.Context, in City) (string, error) {
				if weatherCalls.Add(1) == 1 {
					return "", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the weather service is down")
				}
				return "clear, 14°C in " + in.City, nil
			})),
		box.Register(toolmw.Spec{Name: "cancel_booking", Description: "Cancels a booking."},
			toolmw.Typed(func(ctx context.Context, in Booking) (string, error) {
				cancellations.Add(1)
				return "booking " + in.Booking + " cancelled", nil
			})),
	); err != nil {
		return err
	}

	const question = "Cancel flight LH123 and booking BK-1042. How is Oslo?"
	fmt.Fprintln(w, "== first pass")
	_, err = ask(ctx, newModel(w), box, "run_7f3a", question)
	var stop *toollangchaingo.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindApprovalPending {
		return fmt.Errorf("the first pass ended with %v, want a pause for approval", err)
	}
	req, err := desk.Get(ctx, stop.Approvals[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "paused: %s waits for approval: %s\n", req.Tool, req.Summary)
	if err := desk.Approve(ctx, req, time.Hour); err != nil {
		return err
	}

	fmt.Fprintln(w, "== approved; second pass")
	answer, err := ask(ctx, newModel(w), box, "run_7f3a", question)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "answer:", answer)
	fmt.Fprintf(w, "weather service called %d times, booking cancelled %d time(s)\n", weatherCalls.Load(), cancellations.Load())
	return nil
}

// model stands in for a chat model: it answers with its script, and prints
// each tool result it reads.
type model struct {
	w     io.Writer
	turn  int
	shown int
}

func newModel(w io.Writer) *model { return &model{w: w} }

// script is what the model asks for, turn by turn, as a model shown
// langchaingo's OpenAI functions agent writes it: each tool takes one
// string, __arg1, holding the JSON arguments.
var script = [][]llms.ToolCall{
	{
		toolCall("call_1", "cancel_flight", `{"flight":"LH123"}`),
		toolCall("call_2", "get_weather", `{"city":"Oslo"}`),
		toolCall("call_3", "rebook_flight", `{"flight":"LH123"}`),
	},
	{toolCall("call_4", "cancel_booking", `{"booking":"BK-1042"}`)},
}

func toolCall(id, name, args string) llms.ToolCall {
	arg1, _ := json.Marshal(map[string]string{"__arg1": args})
	return llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: string(arg1)}}
}

func (m *model) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var results []llms.ToolCallResponse
	for _, msg := range msgs {
		for _, p := range msg.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				results = append(results, r)
			}
		}
	}
	for _, r := range results[m.shown:] {
		fmt.Fprintf(m.w, "model reads (%s): %s\n", r.ToolCallID, r.Content)
	}
	m.shown = len(results)
	choice := &llms.ContentChoice{Content: "LH123 cannot be cancelled (non-refundable fare); Oslo is clear, 14°C; booking BK-1042 is cancelled."}
	if m.turn < len(script) {
		choice = &llms.ContentChoice{ToolCalls: script[m.turn]}
	}
	m.turn++
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}, nil
}

func (m *model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}
