package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.uber.org/goleak"

	toolopenai "github.com/toolmw/toolmw/adapters/openai"
	"github.com/toolmw/toolmw/adapters/openai/internal/replay"
	"github.com/toolmw/toolmw/toolmwtest"
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
// the model's own output echoed back (see toolmwtest.NoSecrets).
func noSecrets(t *testing.T, bodies [][]byte) {
	t.Helper()
	toolmwtest.NoSecrets(t, bodies, secrets, withoutEcho)
}

// withoutEcho returns a Chat Completions request body without the
// tool_calls of its assistant messages.
func withoutEcho(t testing.TB, body []byte) []byte {
	t.Helper()
	req := toolmwtest.DecodeJSON(t, body)
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
