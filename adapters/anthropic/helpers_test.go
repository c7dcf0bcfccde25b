package anthropic_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"go.uber.org/goleak"

	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
	"github.com/toolmw/toolmw/toolmwtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Planted secrets of families the default scrubber knows. The values are
// made up for these tests; none may appear in any request the SDK sends.
var secrets = []string{
	"ghp_" + "T4nW8qL2vX6cZ0bN5mK9jH3gF7dS1aP4eR8y", // GitHub token
	"AKIA" + "POIUYTREWQLKJHGF",                     // AWS access key id
	"sk-ant-api03-" + strings.Repeat("Mn4_Bv6-Cx8Za2", 5) + "AA",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbnRocm9waWMtY2FuYXJ5In0.YW50aHJvcGljLWNhbmFyeS1zaWduYXR1cmUtMTIzNDU",
	"piotr.adapter-canary@example.net",
}

// noSecrets fails t when a planted secret appears in any body, apart from
// the model's own output echoed back (see toolmwtest.NoSecrets).
func noSecrets(t *testing.T, bodies [][]byte) {
	t.Helper()
	toolmwtest.NoSecrets(t, bodies, secrets, withoutEcho)
}

// withoutEcho returns a Messages request body without the tool_use blocks
// of its assistant messages.
func withoutEcho(t testing.TB, body []byte) []byte {
	t.Helper()
	req := toolmwtest.DecodeJSON(t, body)
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		m := m.(map[string]any)
		if m["role"] != "assistant" {
			continue
		}
		blocks, _ := m["content"].([]any)
		var kept []any
		for _, b := range blocks {
			if b.(map[string]any)["type"] != "tool_use" {
				kept = append(kept, b)
			}
		}
		m["content"] = kept
	}
	out, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// serve starts an httptest server on 127.0.0.1 with the replay handler and
// returns an SDK client pointed at it. Retries are off: a replay answers
// each request once.
func serve(t *testing.T, rp *replay.Server) anthropic.Client {
	t.Helper()
	srv := httptest.NewServer(rp)
	tr := &http.Transport{}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	return anthropic.NewClient(
		option.WithBaseURL(srv.URL),
		option.WithAPIKey("sk-ant-test-replay"),
		option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: tr}),
	)
}

// loop is the loop of the README: it returns the turns it made and how it
// ended.
func loop(ctx context.Context, client anthropic.Client, tools *toolanthropic.Tools, question string) (turns []*toolanthropic.Turn, answer string, err error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeSonnet5_5,
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(question))},
		Tools:     tools.Params(),
	}
	for {
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			return turns, "", err
		}
		params.Messages = append(params.Messages, msg.ToParam())
		turn, err := tools.Call(ctx, msg.Content)
		turns = append(turns, turn)
		if len(turn.Calls) == 0 {
			var text strings.Builder
			for _, c := range msg.Content {
				text.WriteString(c.Text)
			}
			return turns, text.String(), err
		}
		params.Messages = append(params.Messages, turn.Message())
		if err != nil {
			return turns, "", err
		}
	}
}

// resultText returns the text of a tool_result block on the wire.
func resultText(t *testing.T, block map[string]any) string {
	t.Helper()
	parts, ok := block["content"].([]any)
	if !ok || len(parts) != 1 {
		t.Fatalf("tool_result content = %v, want one text block", block["content"])
	}
	p := parts[0].(map[string]any)
	if p["type"] != "text" {
		t.Fatalf("tool_result content block of type %v, want text", p["type"])
	}
	return p["text"].(string)
}
