// Command customloop is a small agent loop that uses toolmw's pieces
// directly: a Toolbox of decorated tools called by name, errors fed back to
// the model with ForModel, a run budget shared by the whole run, and a
// policy for what a permanent failure does to the run.
//
// The "model" is scripted, so the program needs no network:
//
//	go run ./examples/customloop
//	go run ./examples/customloop -fail-run   # a permanent failure ends the run
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

// ToolCall is what a model asks for.
type ToolCall struct {
	ID   string
	Name string
	Args string
}

// Turn is one model reply: tool calls, or a final answer.
type Turn struct {
	Calls  []ToolCall
	Answer string
}

// scriptedModel replays a fixed conversation and prints what it is told.
type scriptedModel struct {
	turns []Turn
	next  int
}

func (m *scriptedModel) Reply(observations []string) Turn {
	for _, o := range observations {
		fmt.Println("  model reads:", o)
	}
	if m.next >= len(m.turns) {
		return Turn{Answer: "(the script is over)"}
	}
	t := m.turns[m.next]
	m.next++
	return t
}

// Policy says what a permanent tool failure does to the run.
type Policy int

const (
	// ReportToModel shows the failure to the model and goes on.
	ReportToModel Policy = iota
	// FailRun ends the run with the failure.
	FailRun
)

// Loop runs the model until it answers, the turn cap is reached, or the
// policy ends the run.
func Loop(ctx context.Context, model *scriptedModel, box *toolmw.Toolbox, policy Policy, maxTurns int) (string, error) {
	var observations []string
	for turn := 1; turn <= maxTurns; turn++ {
		reply := model.Reply(observations)
		if reply.Calls == nil {
			return reply.Answer, nil
		}
		observations = observations[:0]
		for _, c := range reply.Calls {
			res, err := box.Call(toolmw.WithCallID(ctx, c.ID), c.Name, json.RawMessage(c.Args))
			fmt.Printf("turn %d: %s(%s) → %s\n", turn, c.Name, c.Args, describe(err))
			switch {
			case errors.Is(err, context.Canceled):
				return "", err // the run is being torn down
			case errors.Is(err, taxonomy.ErrRunLimitExceeded):
				// This tool has used its share of the run; the model is
				// told, and can do without it.
			case err != nil && policy == FailRun && isPermanentFailure(err):
				return "", fmt.Errorf("run failed on %s: %w", c.Name, err)
			}
			observations = append(observations, toolmw.ForModel(res, err))
		}
	}
	return "", errors.New("turn cap reached")
}

// isPermanentFailure reports a failure that is neither an answer (a
// refusal, bad arguments, a denial) nor worth trying again.
func isPermanentFailure(err error) bool {
	info := taxonomy.InfoOf(err)
	return info.Kind == taxonomy.KindFailed && !info.Retryable
}

func describe(err error) string {
	if err == nil {
		return "ok"
	}
	info := taxonomy.InfoOf(err)
	return fmt.Sprintf("%s %s/%s", taxonomy.OutcomeOf(err), info.Kind, info.Code)
}

func newToolbox() (*toolmw.Toolbox, error) {
	stack := middleware.Default(
		middleware.WithRetry(retry.WithBackoff(time.Millisecond, 5*time.Millisecond)),
		middleware.WithTimeout(time.Second),
	)
	box := toolmw.NewToolbox(stack.Middleware())

	type searchArgs struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
	flaky := 0
	search := toolmw.Typed(func(ctx context.Context, a searchArgs) ([]string, error) {
		flaky++
		if flaky%2 == 1 { // every other call the supplier hiccups
			return nil, taxonomy.Transient("supplier_busy", "the fare supplier is busy")
		}
		return []string{a.From + "→" + a.To + " 08:10 €120", a.From + "→" + a.To + " 17:45 €95"}, nil
	})
	if err := box.Register(toolmw.Spec{Name: "search_flights", Description: "Find flights.", Idempotent: true}, search); err != nil {
		return nil, err
	}

	type bookArgs struct {
		Flight string `json:"flight"`
	}
	book := toolmw.Typed(func(ctx context.Context, a bookArgs) (string, error) {
		if a.Flight == "17:45" {
			return "", errors.New("payment gateway: card for bob@example.com declined by issuer")
		}
		return "booked " + a.Flight, nil
	})
	if err := box.Register(toolmw.Spec{Name: "book_flight", Description: "Book a flight."}, book); err != nil {
		return nil, err
	}

	cancel := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
	}
	if err := box.Register(toolmw.Spec{Name: "cancel_booking", Description: "Cancel a booking."}, cancel); err != nil {
		return nil, err
	}
	return box, nil
}

func script() *scriptedModel {
	return &scriptedModel{turns: []Turn{
		{Calls: []ToolCall{{"c1", "search_flights", `{"from":"BER","to":"LIS"}`}}},
		{Calls: []ToolCall{{"c2", "book_flight", `{"flight":"17:45","seat":"12A"}`}}},
		{Calls: []ToolCall{{"c3", "book_flight", `{"flight":"17:45"}`}}},
		{Calls: []ToolCall{{"c4", "cancel_booking", `{}`}, {"c5", "weather", `{}`}}},
		{Calls: []ToolCall{{"c6", "search_flights", `{"from":"LIS","to":"BER"}`}, {"c7", "search_flights", `{"from":"LIS","to":"OPO"}`}}},
		{Calls: []ToolCall{{"c8", "book_flight", `{"flight":"08:10"}`}}},
		{Answer: "Booked the 08:10 flight."},
	}}
}

func main() {
	failRun := flag.Bool("fail-run", false, "end the run on a permanent tool failure")
	flag.Parse()
	box, err := newToolbox()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	policy := ReportToModel
	if *failRun {
		policy = FailRun
	}
	// One run budget for the whole run: at most 4 attempts per tool.
	ctx := budget.WithRun(context.Background(), budget.WithMaxAttempts(4))
	answer, err := Loop(ctx, script(), box, policy, 10)
	if err != nil {
		fmt.Println("run ended:", err)
		return
	}
	fmt.Println("answer:", answer)
	run, _ := budget.RunFrom(ctx)
	fmt.Printf("attempts used: search_flights %d, book_flight %d\n", run.Used("search_flights"), run.Used("book_flight"))
}
