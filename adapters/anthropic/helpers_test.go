package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
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
// the model's own tool_use blocks echoed back in an assistant message (a
// test may plant a secret in the model's input, to see that no answer
// repeats it).
func noSecrets(t *testing.T, bodies [][]byte) {
	t.Helper()
	for i, b := range bodies {
		b = withoutEcho(t, b)
		for _, s := range secrets {
			for _, part := range []string{s, s[len(s)/3:]} {
				if bytes.Contains(b, []byte(part)) {
					t.Errorf("request %d carries a planted secret (%.12s…)", i+1, s)
				}
			}
		}
	}
}

// withoutEcho returns a Messages request body without the tool_use blocks
// of its assistant messages.
func withoutEcho(t *testing.T, body []byte) []byte {
	t.Helper()
	req := decode(t, body)
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

// decode parses a request body, keeping numbers as they were written.
func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("request body is not a JSON object: %v\n%s", err, body)
	}
	return m
}

// same reports whether two JSON documents are equal as values.
func same(t *testing.T, a, b any) bool {
	t.Helper()
	norm := func(v any) any {
		raw, ok := v.(json.RawMessage)
		if !ok {
			var err error
			if raw, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var out any
		if err := dec.Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	x, _ := json.Marshal(norm(a))
	y, _ := json.Marshal(norm(b))
	return bytes.Equal(x, y)
}

// barrier lets n goroutines proceed only once all n have arrived, so a
// test proves they were in flight at the same time. A test whose calls do
// not overlap fails after guard instead of hanging: a deadlock guard, not
// a timing assertion.
type barrier struct {
	mu      sync.Mutex
	n, in   int
	maxIn   int
	arrived chan struct{}
}

const guard = 20 * time.Second

func newBarrier(n int) *barrier { return &barrier{n: n, arrived: make(chan struct{})} }

func (b *barrier) wait(ctx context.Context) error {
	b.mu.Lock()
	b.in++
	b.maxIn = max(b.maxIn, b.in)
	if b.in == b.n {
		close(b.arrived)
	}
	b.mu.Unlock()
	select {
	case <-b.arrived:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(guard):
		return errNotConcurrent
	}
}

// most returns how many goroutines were at the barrier at once, at most.
func (b *barrier) most() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.maxIn
}

func (b *barrier) leave() {
	b.mu.Lock()
	b.in--
	b.mu.Unlock()
}

var errNotConcurrent = testError("the calls did not run at the same time")

type testError string

func (e testError) Error() string { return string(e) }

// envelope parses a tool_result's text, failing t when it is not exactly
// one ForModel envelope.
func envelope(t *testing.T, text string) (source, content string) {
	t.Helper()
	source, content, ok := toolmw.ParseEnvelope(text)
	if !ok {
		t.Fatalf("not a ForModel envelope: %q", text)
	}
	return source, content
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
