// Command approval runs an Eino ADK agent whose tools are a toolmw
// Toolbox: the model asks, in one turn, to refund a booking (the tool
// refuses), to look up its fare (the fares service fails once; toolmw
// retries), to cancel it (a person must approve first) and to call a tool
// that does not exist. The run pauses — an Eino interrupt, its checkpoint
// saved — a reviewer approves, and the run resumes: the cancellation runs
// once, and the model answers from the four results.
//
// The model is scripted, so it runs offline and prints the same lines
// every time:
//
//	go run ./examples/approval
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/toolmw/toolmw"
	tooleino "github.com/toolmw/toolmw/adapters/eino"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// Booking is the input of the booking tools.
type Booking struct {
	Booking string `json:"booking" jsonschema:"The booking reference, such as BK-1042"`
}

// newBox returns the bookings toolbox: the default stack, with the
// approval layer holding cancel_booking for a person.
func newBox(desk *approval.Desk, cancelled *int) (*toolmw.Toolbox, error) {
	stack, err := middleware.Default().InsertBefore(middleware.Retry,
		middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("cancel_booking"))})
	if err != nil {
		return nil, err
	}
	box := toolmw.NewToolbox(stack.Middleware())
	fareCalls := 0
	for _, t := range []struct {
		spec toolmw.Spec
		fn   func(context.Context, Booking) (string, error)
	}{
		{toolmw.Spec{Name: "refund_booking", Description: "Refunds a booking."}, func(ctx context.Context, in Booking) (string, error) {
			return "", taxonomy.Refusal("booking_not_refundable", "this fare is non-refundable")
		}},
		{toolmw.Spec{Name: "lookup_fare", Description: "Looks up a booking's fare.", Idempotent: true}, func(ctx context.Context, in Booking) (string, error) {
			if fareCalls++; fareCalls == 1 {
				return "", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the fares service is down")
			}
			return in.Booking + ": 120 EUR", nil
		}},
		{toolmw.Spec{Name: "cancel_booking", Description: "Cancels a booking."}, func(ctx context.Context, in Booking) (string, error) {
			*cancelled++
			return "cancelled " + in.Booking, nil
		}},
	} {
		if err := box.Register(t.spec, toolmw.Typed(t.fn)); err != nil {
			return nil, err
		}
	}
	return box, nil
}

// newAgent builds the agent the ADK's usual way, with the box's tools.
func newAgent(ctx context.Context, box *toolmw.Toolbox, chat model.ToolCallingChatModel) (adk.Agent, error) {
	tools := tooleino.MustNew(box) // +toolmw: the box's tools as Eino tools
	return adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:        "bookings",
		Description: "Handles travel bookings.",
		Instruction: "You handle travel bookings.",
		Model:       chat,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: tools.NodeConfig()}, // +toolmw: and the unknown-tool handler
	})
}

// review has a person decide each approval an interrupt waits for (here:
// approve them all).
func review(ctx context.Context, desk *approval.Desk, intr *adk.InterruptInfo, out io.Writer) error {
	for _, a := range tooleino.Approvals(intr.InterruptContexts) { // +toolmw: the approvals the run paused for
		req, err := desk.Get(ctx, a.ID)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "reviewer approves %s\n", req.Summary)
		if err := desk.Approve(ctx, req, time.Hour); err != nil {
			return err
		}
	}
	return nil
}

func run(ctx context.Context, out io.Writer) error {
	desk := approval.NewDesk()
	cancelled := 0
	box, err := newBox(desk, &cancelled)
	if err != nil {
		return err
	}
	chat := &scripted{}
	agent, err := newAgent(ctx, box, chat)
	if err != nil {
		return err
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, CheckPointStore: &memoryStore{}})
	intr, err := show(runner.Query(ctx, "Refund BK-1042, or else cancel it.", adk.WithCheckPointID("conversation-42")), out)
	if err != nil {
		return err
	}
	if intr == nil {
		return errors.New("the run did not pause for the cancellation")
	}
	if err := review(ctx, desk, intr, out); err != nil {
		return err
	}
	events, err := runner.Resume(ctx, "conversation-42")
	if err != nil {
		return err
	}
	if _, err := show(events, out); err != nil {
		return err
	}
	fmt.Fprintln(out, "the model read:")
	for _, r := range chat.read {
		fmt.Fprintf(out, "  %s %s: %s\n", r.ToolCallID, r.ToolName, r.Content)
	}
	fmt.Fprintf(out, "cancel_booking ran %d time(s)\n", cancelled)
	return nil
}

// show prints a run's pauses and answers, and returns its interrupt, if it
// paused. (The tools' results come as events too, in the order the calls
// end.)
func show(events *adk.AsyncIterator[*adk.AgentEvent], out io.Writer) (*adk.InterruptInfo, error) {
	var intr *adk.InterruptInfo
	for {
		ev, ok := events.Next()
		if !ok {
			return intr, nil
		}
		switch {
		case ev.Err != nil:
			return nil, ev.Err // a *turn.Stop, when toolmw ended the run
		case ev.Action != nil && ev.Action.Interrupted != nil:
			intr = ev.Action.Interrupted
			for _, a := range tooleino.Approvals(intr.InterruptContexts) {
				fmt.Fprintf(out, "paused: %s (%s) waits for a person\n", a.Tool, a.CallID)
			}
		case ev.Output != nil && ev.Output.MessageOutput != nil:
			msg, err := ev.Output.MessageOutput.GetMessage()
			if err != nil {
				return nil, err
			}
			if msg.Role == schema.Assistant && msg.Content != "" {
				fmt.Fprintf(out, "assistant: %s\n", msg.Content)
			}
		}
	}
}

// scripted stands in for a chat model: first it asks for four calls at
// once, then it answers from their results, which it keeps in read.
type scripted struct {
	turns int
	read  []*schema.Message
}

func (m *scripted) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	m.turns++
	if m.turns == 1 {
		call := func(id, name, args string) schema.ToolCall {
			return schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: args}}
		}
		return schema.AssistantMessage("", []schema.ToolCall{
			call("call_1", "refund_booking", `{"booking":"BK-1042"}`),
			call("call_2", "lookup_fare", `{"booking":"BK-1042"}`),
			call("call_3", "cancel_booking", `{"booking":"BK-1042"}`),
			call("call_4", "rebook_booking", `{"booking":"BK-1042"}`),
		}), nil
	}
	m.read = nil
	for _, msg := range in {
		if msg.Role == schema.Tool {
			m.read = append(m.read, msg)
		}
	}
	return schema.AssistantMessage("No refund for this fare (120 EUR), so I cancelled BK-1042.", nil), nil
}

func (m *scripted) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *scripted) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

// memoryStore is an in-memory adk.CheckPointStore. A program that must
// survive a restart keeps its checkpoints in a database or in files.
type memoryStore struct {
	mu sync.Mutex
	m  map[string]json.RawMessage
}

func (s *memoryStore) Get(_ context.Context, id string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[id]
	return b, ok, nil
}

func (s *memoryStore) Set(_ context.Context, id string, checkpoint []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]json.RawMessage{}
	}
	s.m[id] = append(json.RawMessage(nil), checkpoint...)
	return nil
}
