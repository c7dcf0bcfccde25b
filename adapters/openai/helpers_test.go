package openai_test

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

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	toolopenai "github.com/toolmw/toolmw/adapters/openai"
	"github.com/toolmw/toolmw/adapters/openai/internal/replay"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Planted secrets of families the default scrubber knows. The values are
// made up for these tests; none may appear in any request the SDK sends.
var secrets = []string{
	"ghp_" + "R8xQ2mZ7vK4pL9wT3nB6yH1sD5fG0jC2aE7u", // GitHub token
	"AKIA" + "ZXCVBNMASDFGHJKL",                     // AWS access key id
	"sk-ant-api03-" + strings.Repeat("Qw3_Er5-Ty7Ui9", 5) + "AA",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGFwdGVyLWNhbmFyeSJ9.YWRhcHRlci1jYW5hcnktc2lnbmF0dXJlLTk4NzY1",
	"olga.adapter-canary@example.org",
}

// noSecrets fails t when a planted secret appears in any body, apart from
// the model's own tool calls echoed back in an assistant message (a test
// may plant a secret in the model's arguments, to see that no answer
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

// withoutEcho returns a Chat Completions request body without the
// tool_calls of its assistant messages.
func withoutEcho(t *testing.T, body []byte) []byte {
	t.Helper()
	req := decode(t, body)
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		if m := m.(map[string]any); m["role"] == "assistant" {
			delete(m, "tool_calls")
		}
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
func serve(t *testing.T, rp *replay.Server) openai.Client {
	t.Helper()
	srv := httptest.NewServer(rp)
	tr := &http.Transport{}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	return openai.NewClient(
		option.WithBaseURL(srv.URL+"/v1/"),
		option.WithAPIKey("sk-test-replay"),
		option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: tr}),
	)
}

// chatLoop is the loop of the README: it returns the turns it made and how
// it ended.
func chatLoop(ctx context.Context, client openai.Client, tools *toolopenai.Tools, question string) (turns []*toolopenai.Turn, answer string, err error) {
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT5_4Mini,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(question)},
		Tools:    tools.ForChat(),
	}
	for {
		reply, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return turns, "", err
		}
		msg := reply.Choices[0].Message
		params.Messages = append(params.Messages, msg.ToParam())
		turn, err := tools.CallChat(ctx, msg.ToolCalls)
		turns = append(turns, turn)
		params.Messages = append(params.Messages, turn.Messages()...)
		if err != nil {
			return turns, "", err
		}
		if len(turn.Calls) == 0 {
			return turns, msg.Content, nil
		}
	}
}

// responsesLoop is the same loop on the Responses API, chained with
// previous_response_id.
func responsesLoop(ctx context.Context, client openai.Client, tools *toolopenai.Tools, question string) (turns []*toolopenai.Turn, answer string, err error) {
	params := responses.ResponseNewParams{
		Model: openai.ChatModelGPT5_4Mini,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(question)},
		Tools: tools.ForResponses(),
	}
	for {
		resp, err := client.Responses.New(ctx, params)
		if err != nil {
			return turns, "", err
		}
		turn, err := tools.CallResponses(ctx, resp.Output)
		turns = append(turns, turn)
		if err != nil {
			return turns, "", err
		}
		if len(turn.Calls) == 0 {
			return turns, resp.OutputText(), nil
		}
		params.PreviousResponseID = openai.String(resp.ID)
		params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: turn.Items()}
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

// envelope parses a tool message's text, failing t when it is not exactly
// one ForModel envelope.
func envelope(t *testing.T, text string) (source, content string) {
	t.Helper()
	source, content, ok := toolmw.ParseEnvelope(text)
	if !ok {
		t.Fatalf("not a ForModel envelope: %q", text)
	}
	return source, content
}
