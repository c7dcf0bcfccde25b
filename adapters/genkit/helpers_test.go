package genkit_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/logger"
	"github.com/firebase/genkit/go/genkit"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
)

// TestMain runs the tests with Genkit in its production environment
// whatever the shell says: with GENKIT_ENV=dev, genkit.Init would start
// the reflection server (and write its runtime file), and a telemetry
// server variable would send traces out. goleak then checks that nothing
// is left running, with no exceptions.
func TestMain(m *testing.M) {
	for _, v := range []string{"GENKIT_ENV", "GENKIT_TELEMETRY_SERVER", "GENKIT_REFLECTION_V2_SERVER", "GENKIT_ENABLE_REALTIME_TELEMETRY"} {
		os.Unsetenv(v)
	}
	goleak.VerifyTestMain(m)
}

// newGenkit returns a Genkit instance for one test, and a context that
// carries nothing but what the test adds. genkit.Init watches its context
// for SIGINT and SIGTERM on a goroutine; the context ends with the test,
// and so does the goroutine. GENKIT_ENV is unset in tests, so Init starts
// no reflection server and exports no telemetry.
func newGenkit(t *testing.T) *genkit.Genkit {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return genkit.Init(logger.WithContext(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))))
}

// scripted is a Genkit model that answers from a script, one message per
// request, and records every request it receives, as Genkit's own tests
// fake a model (genkit.DefineModel with a function).
type scripted struct {
	mu       sync.Mutex
	replies  []*ai.Message
	requests []*ai.ModelRequest // deep copies, as JSON decodes them
	raw      [][]byte           // the requests as JSON
}

// models numbers the scripted models, whose names must differ on one
// Genkit instance.
var models atomic.Int32

// script returns a scripted model defined on g, answering with replies.
func script(t *testing.T, g *genkit.Genkit, replies ...*ai.Message) (*scripted, ai.Model) {
	t.Helper()
	s := &scripted{replies: replies}
	m := genkit.DefineModelAction(g, fmt.Sprintf("test/scripted-%d", models.Add(1)), &ai.ModelOptions{
		Supports: &ai.ModelSupports{Tools: true, Multiturn: true, ToolChoice: true, SystemRole: true, Media: true},
	}, s.generate)
	return s, m
}

func (s *scripted) generate(ctx context.Context, req *ai.ModelRequest, _ any, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var cp ai.ModelRequest
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, &cp)
	s.raw = append(s.raw, b)
	if len(s.replies) == 0 {
		return nil, fmt.Errorf("scripted model: no reply left for request %d", len(s.requests))
	}
	msg := s.replies[0]
	s.replies = s.replies[1:]
	return &ai.ModelResponse{Request: req, Message: msg, FinishReason: ai.FinishReasonStop}, nil
}

// seen returns the requests the model received so far.
func (s *scripted) seen() []*ai.ModelRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*ai.ModelRequest(nil), s.requests...)
}

// bodies returns the requests the model received, as JSON.
func (s *scripted) bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.raw...)
}

// calls returns a model message asking for tool calls.
func calls(reqs ...*ai.ToolRequest) *ai.Message {
	msg := &ai.Message{Role: ai.RoleModel}
	for _, r := range reqs {
		msg.Content = append(msg.Content, ai.NewToolRequestPart(r))
	}
	return msg
}

// call is a tool request with a ref.
func call(name, ref string, input any) *ai.ToolRequest {
	return &ai.ToolRequest{Name: name, Ref: ref, Input: input}
}

// answer is the model's final text.
func answer(text string) *ai.Message { return ai.NewModelTextMessage(text) }

// answers returns the tool responses of a request's last message, by ref.
func answers(t *testing.T, req *ai.ModelRequest) map[string]*ai.ToolResponse {
	t.Helper()
	if len(req.Messages) == 0 {
		t.Fatal("the request has no messages")
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != ai.RoleTool {
		t.Fatalf("the request's last message is by %s, want tool responses", last.Role)
	}
	out := map[string]*ai.ToolResponse{}
	for _, p := range last.Content {
		if p.IsToolResponse() {
			out[p.ToolResponse.Ref] = p.ToolResponse
		}
	}
	return out
}

// outputText returns a tool response's output, which must be the envelope
// string.
func outputText(t *testing.T, r *ai.ToolResponse) string {
	t.Helper()
	if r == nil {
		t.Fatal("no tool response")
	}
	s, ok := r.Output.(string)
	if !ok {
		t.Fatalf("tool response output %T %v, want the envelope text", r.Output, r.Output)
	}
	return s
}

// newBox returns a Toolbox under the default stack (quiet) with extra
// layers inserted before retry.
func newBox(t *testing.T, extra ...middleware.Layer) *toolmw.Toolbox {
	t.Helper()
	stack := middleware.Default(middleware.WithSlog(quiet()))
	for _, l := range extra {
		var err error
		if stack, err = stack.InsertBefore(middleware.Retry, l); err != nil {
			t.Fatal(err)
		}
	}
	return toolmw.NewToolbox(stack.Middleware())
}

// quiet is a logger that writes nowhere.
func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
