package eino_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/middleware/breaker"

	"github.com/toolmw/toolmw"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scripted is a chat model that answers from a script, as Eino's own tests
// fake one (adk's myModel): each Generate returns the script's next
// message, built from what the model received; every input is recorded.
// It implements model.ToolCallingChatModel.
type scripted struct {
	mu     sync.Mutex
	script []func(in []*schema.Message) *schema.Message
	inputs [][]*schema.Message
	tools  []*schema.ToolInfo
}

func newScripted(script ...func(in []*schema.Message) *schema.Message) *scripted {
	return &scripted{script: script}
}

// say returns a script step that answers with content.
func say(content string) func([]*schema.Message) *schema.Message {
	return func([]*schema.Message) *schema.Message { return schema.AssistantMessage(content, nil) }
}

// calls returns a script step that asks for the tool calls, given as
// id, name, arguments triples.
func calls(triples ...string) func([]*schema.Message) *schema.Message {
	return func([]*schema.Message) *schema.Message {
		var tc []schema.ToolCall
		for i := 0; i+2 < len(triples); i += 3 {
			tc = append(tc, schema.ToolCall{ID: triples[i], Type: "function",
				Function: schema.FunctionCall{Name: triples[i+1], Arguments: triples[i+2]}})
		}
		return schema.AssistantMessage("", tc)
	}
}

func (m *scripted) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cp := make([]*schema.Message, len(in))
	for i, msg := range in {
		c := *msg
		cp[i] = &c
	}
	m.inputs = append(m.inputs, cp)
	if len(m.script) == 0 {
		return nil, errors.New("scripted: the script is over")
	}
	step := m.script[0]
	m.script = m.script[1:]
	return step(cp), nil
}

func (m *scripted) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *scripted) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	m.mu.Lock()
	m.tools = tools
	m.mu.Unlock()
	return m, nil
}

// received returns every input the model received, as JSON text, one per
// call.
func (m *scripted) received(t testing.TB) []string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, len(m.inputs))
	for i, in := range m.inputs {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// last returns the messages of the model's last input.
func (m *scripted) last() []*schema.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.inputs) == 0 {
		return nil
	}
	return m.inputs[len(m.inputs)-1]
}

// toolMessages returns the tool messages of msgs by call id.
func toolMessages(msgs []*schema.Message) map[string]*schema.Message {
	out := map[string]*schema.Message{}
	for _, m := range msgs {
		if m.Role == schema.Tool {
			out[m.ToolCallID] = m
		}
	}
	return out
}

// envelope parses a tool message's text: its source and content.
func envelope(t testing.TB, text string) (source, content string) {
	t.Helper()
	source, content, ok := toolmw.ParseEnvelope(text)
	if !ok {
		t.Fatalf("%q is not one untrusted-data envelope", text)
	}
	return source, content
}

// drainEvents reads an ADK iterator to its end and returns its events.
func drainEvents(t testing.TB, it *adk.AsyncIterator[*adk.AgentEvent]) []*adk.AgentEvent {
	t.Helper()
	var out []*adk.AgentEvent
	for {
		ev, ok := it.Next()
		if !ok {
			return out
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.IsStreaming {
			msg, err := ev.Output.MessageOutput.GetMessage()
			if err == nil {
				ev.Output.MessageOutput = &adk.MessageVariant{Message: msg, Role: msg.Role, ToolName: ev.Output.MessageOutput.ToolName}
			}
		}
		out = append(out, ev)
	}
}

// interrupted returns the interrupt among events, or nil.
func interrupted(events []*adk.AgentEvent) *adk.InterruptInfo {
	for _, ev := range events {
		if ev.Action != nil && ev.Action.Interrupted != nil {
			return ev.Action.Interrupted
		}
	}
	return nil
}

// eventErr returns the first error among events.
func eventErr(events []*adk.AgentEvent) error {
	for _, ev := range events {
		if ev.Err != nil {
			return ev.Err
		}
	}
	return nil
}

// eventText returns everything the events carry as text: messages, errors
// and interrupts, for the canary checks.
func eventText(t testing.TB, events []*adk.AgentEvent) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range events {
		if ev.Err != nil {
			b.WriteString(ev.Err.Error())
			b.WriteByte('\n')
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Message != nil {
			js, err := json.Marshal(ev.Output.MessageOutput.Message)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(js)
			b.WriteByte('\n')
		}
		if ev.Action != nil && ev.Action.Interrupted != nil {
			for _, c := range ev.Action.Interrupted.InterruptContexts {
				fmt.Fprintf(&b, "%+v\n", c.Info)
			}
		}
	}
	return b.String()
}

// fileStore is a CheckPointStore of files in a directory: a checkpoint
// outlives the process that wrote it.
type fileStore struct{ dir string }

func (s fileStore) path(id string) string { return filepath.Join(s.dir, "checkpoint-"+id) }

func (s fileStore) Get(_ context.Context, id string) ([]byte, bool, error) {
	b, err := os.ReadFile(s.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	return b, err == nil, err
}

func (s fileStore) Set(_ context.Context, id string, cp []byte) error {
	tmp := s.path(id) + ".tmp"
	if err := os.WriteFile(tmp, cp, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.path(id))
}

// memStore is an in-memory CheckPointStore.
type memStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newMemStore() *memStore { return &memStore{m: map[string][]byte{}} }

func (s *memStore) Get(_ context.Context, id string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[id]
	return b, ok, nil
}

func (s *memStore) Set(_ context.Context, id string, cp []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = append([]byte(nil), cp...)
	return nil
}

// breakerOne opens a tool's circuit after one dependency fault, for an
// hour.
func breakerOne() []breaker.Option {
	return []breaker.Option{breaker.WithConsecutiveFailures(1), breaker.WithOpenFor(time.Hour)}
}
