package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
)

// streamReplay answers each streamed request with the next reply of its
// script as server-sent events, each content block whole in its
// content_block_start, and records the request bodies.
type streamReplay struct {
	mu     sync.Mutex
	script [][]byte
	bodies [][]byte
}

func (s *streamReplay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	var req struct{ Stream bool }
	if json.Unmarshal(body, &req) != nil || !req.Stream || n >= len(s.script) {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"replay: not scripted"}}`, http.StatusBadRequest)
		return
	}
	var msg map[string]any
	if err := json.Unmarshal(s.script[n], &msg); err != nil {
		panic(err)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(name string, data map[string]any) {
		js, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, js)
	}
	content, stop, usage := msg["content"].([]any), msg["stop_reason"], msg["usage"]
	msg["content"], msg["stop_reason"] = []any{}, nil
	event("message_start", map[string]any{"type": "message_start", "message": msg})
	for i, block := range content {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": block})
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usage})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// TestBetaToolsStreaming: the streaming runner (AllStreaming) reads the
// same: its calls get their tool_use ids from its LastMessage, and a
// gated call ends its loop with approval-pending.
func TestBetaToolsStreaming(t *testing.T) {
	var ids callIDs
	desk := approval.NewDesk()
	box := toolmw.NewToolbox(fastStack(t,
		middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("cancel_booking"))},
		ids.layer()))
	mustRegister(t, box, "lookup", func(ctx context.Context, in bookingIn) (string, error) { return "found " + in.Booking, nil })
	mustRegister(t, box, "cancel_booking", func(ctx context.Context, in bookingIn) (string, error) { return "cancelled", nil })
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	rp := &streamReplay{script: [][]byte{
		replay.ToolUses("", replay.ToolUse{ID: "toolu_S1", Name: "lookup", Input: `{"booking":"BK-1"}`}),
		replay.ToolUses("", replay.ToolUse{ID: "toolu_S2", Name: "cancel_booking", Input: `{"booking":"BK-1"}`}),
		replay.Answer("never"),
	}}
	srv := httptest.NewServer(rp)
	tr := &http.Transport{}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("sk-ant-test-replay"),
		option.WithMaxRetries(0), option.WithHTTPClient(&http.Client{Transport: tr}))

	runner := client.Beta.Messages.NewToolRunnerStreaming(tools.BetaTools(), anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024, Messages: []anthropic.BetaMessageParam{ask("Cancel BK-1.")}},
	})
	ctx, run := toolanthropic.WithBetaRunner(budget.WithRun(context.Background(), budget.WithID("run_stream")), runner)
	var runErr error
	for events, err := range runner.AllStreaming(ctx) {
		if err != nil {
			runErr = err
			break
		}
		for _, err := range events {
			if err != nil {
				runErr = err
			}
		}
		if runErr != nil {
			break
		}
	}
	var stop *toolanthropic.Stop
	if err := run.End(runErr); !errors.As(err, &stop) || stop.Kind != taxonomy.KindApprovalPending {
		t.Fatalf("the streaming run ended with %v, want approval-pending", err)
	}
	if got := ids.of("lookup"); !slices.Equal(got, []string{"toolu_S1"}) {
		t.Errorf("lookup had ids %v", got)
	}
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if n := len(rp.bodies); n != 2 {
		t.Errorf("the API was asked %d times, want 2", n)
	}
}
