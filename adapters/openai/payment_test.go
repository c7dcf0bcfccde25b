package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/toolmw/toolmw"
	toolopenai "github.com/toolmw/toolmw/adapters/openai"
	"github.com/toolmw/toolmw/adapters/openai/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/dedupe/dedupetest"
	"github.com/toolmw/toolmw/middleware/timeout"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
)

// The stripe/ai#402 scenario: an agent's payment call times out, the model
// re-plans and makes the same payment again under a new call id, and the
// customer is charged twice. Here the payment API is a real HTTP server on
// 127.0.0.1, the tool a real http.Client call to it that sends no
// idempotency key (as in the report), the model the replay of the OpenAI
// API driven by the real SDK, and the stack the default one with dedupe
// (by arguments for create_payment) inserted before retry.

type paymentIn struct {
	Customer    string `json:"customer" jsonschema:"The customer's id (cus_…)"`
	AmountCents int    `json:"amount_cents" jsonschema:"The amount in the currency's minor unit"`
	Currency    string `json:"currency" jsonschema:"ISO 4217 code, lower case"`
	Description string `json:"description" jsonschema:"What the charge is for, shown on the statement"`
}

// The model's two spellings of one payment: the second, made in a later
// turn under a new call id, has its keys in another order, other spacing
// and an escaped character, as a model re-planning writes it.
const (
	payArgs      = `{"customer":"cus_Q8xLm2","amount_cents":4200,"currency":"eur","description":"Order 1042"}`
	payArgsAgain = "{ \"currency\": \"eur\",\n  \"amount_cents\": 4200, \"description\": \"Order\\u00201042\",  \"customer\": \"cus_Q8xLm2\" }"
	payCallA     = "call_Pm7aK2qX9vR4tY1uW3eZ5sB8"
	payCallB     = "call_Pn3bL6rZ0wS5uX2vY7fA9tC1"
	// payTimeout is the payment tool's per-attempt timeout. It runs on a
	// fake clock, advanced only once the charge has landed, so the test
	// never waits for it; its real-time counterpart (the attempt's
	// Deadline, which the dialer reads) is generous.
	payTimeout = 10 * time.Second
)

// paymentAPI is a payment provider: each POST /v1/charges charges the
// customer once. With slowFirst, the first charge lands, then the answer
// is held until the client has given up on it (its request context ends):
// the charge happened, and the caller never heard of it.
type paymentAPI struct {
	slowFirst bool
	srv       *httptest.Server
	charged   chan struct{} // closed when the first charge has landed
	release   chan struct{} // closed at cleanup: a held answer goes out

	mu      sync.Mutex
	charges []paymentIn
}

func newPaymentAPI(t *testing.T, slowFirst bool) *paymentAPI {
	t.Helper()
	p := &paymentAPI{slowFirst: slowFirst, charged: make(chan struct{}), release: make(chan struct{})}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	t.Cleanup(func() { close(p.release) }) // runs first: no handler is left holding
	return p
}

func (p *paymentAPI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/charges" {
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"no such route"}}`, http.StatusNotFound)
		return
	}
	var in paymentIn
	dec := json.NewDecoder(io.LimitReader(r.Body, 4<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || in.Customer == "" || in.AmountCents <= 0 || in.Currency == "" {
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"bad charge"}}`, http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.charges = append(p.charges, in)
	n := len(p.charges)
	p.mu.Unlock()
	if n == 1 {
		close(p.charged)
		if p.slowFirst {
			select {
			case <-r.Context().Done(): // the client gave up: answer anyway, to no one
			case <-p.release:
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"ch_3Pq%04dKx","object":"charge","amount":%d,"currency":%q,"customer":%q,"status":"succeeded"}`,
		n, in.AmountCents, in.Currency, in.Customer)
}

// count returns how many charges landed.
func (p *paymentAPI) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.charges)
}

// paymentBox is a box whose create_payment tool charges through api, with
// the default stack, a fake clock on the timeout layer, and dedupe before
// retry recognising create_payment's repeats by their arguments. extra
// options go to dedupe.New.
func paymentBox(t *testing.T, api *paymentAPI, fake *clock.Fake, extra ...dedupe.Option) *toolmw.Toolbox {
	t.Helper()
	stack, err := middleware.Default(middleware.WithTimeout(payTimeout, timeout.WithClock(fake))).
		InsertBefore(middleware.Retry, middleware.Layer{Name: middleware.Dedupe,
			Middleware: dedupe.New(append([]dedupe.Option{dedupe.WithArguments("create_payment")}, extra...)...)})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	box := toolmw.NewToolbox(stack.Middleware())
	if err := box.Register(toolmw.Spec{Name: "create_payment", Description: "Charge a customer's saved card. Every call charges."},
		toolmw.Typed(func(ctx context.Context, in paymentIn) (string, error) {
			body, err := json.Marshal(in)
			if err != nil {
				return "", err
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, api.srv.URL+"/v1/charges", bytes.NewReader(body))
			if err != nil {
				return "", err
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			out, err := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
			if err != nil {
				return "", err
			}
			if resp.StatusCode != http.StatusOK {
				return "", fmt.Errorf("payment API: %s", resp.Status)
			}
			var ch struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			}
			if err := json.Unmarshal(out, &ch); err != nil {
				return "", err
			}
			return fmt.Sprintf("charge %s %s: %d %s for %s", ch.ID, ch.Status, in.AmountCents, in.Currency, in.Customer), nil
		})); err != nil {
		t.Fatal(err)
	}
	return box
}

// advanceOnCharge moves fake past the payment's timeout once api's first
// charge has landed (or the test has ended), so the call times out after
// its side effect, never before.
func advanceOnCharge(t *testing.T, api *paymentAPI, fake *clock.Fake) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(done); wg.Wait() })
	wg.Go(func() {
		select {
		case <-api.charged:
			fake.Advance(payTimeout + time.Millisecond)
		case <-done:
		}
	})
}

// paymentAPIs are the two APIs the loop runs on: the scripted replies and
// the loop of helpers_test.go for each.
var paymentAPIs = []struct {
	name   string
	path   string
	calls  func(...replay.ToolCall) []byte
	answer func(string) []byte
	loop   func(context.Context, *testing.T, *replay.Server, *toolopenai.Tools) ([]*toolopenai.Turn, string, error)
}{
	{"chat", "/v1/chat/completions", replay.ChatToolCalls, replay.ChatAnswer,
		func(ctx context.Context, t *testing.T, rp *replay.Server, tools *toolopenai.Tools) ([]*toolopenai.Turn, string, error) {
			return chatLoop(ctx, serve(t, rp), tools, "Charge cus_Q8xLm2 42 EUR for order 1042.")
		}},
	{"responses", "/v1/responses", replay.ResponseToolCalls, replay.ResponseAnswer,
		func(ctx context.Context, t *testing.T, rp *replay.Server, tools *toolopenai.Tools) ([]*toolopenai.Turn, string, error) {
			return responsesLoop(ctx, serve(t, rp), tools, "Charge cus_Q8xLm2 42 EUR for order 1042.")
		}},
}

// toldFor returns what the requests the replay server received told the
// model about the call id: the content of the tool message (Chat
// Completions) or the output of the function_call_output item (Responses)
// that answers it. Every answer to the id in the requests must be the same
// (the Chat Completions conversation repeats it in each later request),
// and there must be one.
func toldFor(t *testing.T, reqs [][]byte, id string) string {
	t.Helper()
	var told []string
	for _, body := range reqs {
		req := toolmwtest.DecodeJSON(t, body)
		msgs, _ := req["messages"].([]any)
		items, _ := req["input"].([]any)
		for _, m := range append(msgs, items...) {
			m, _ := m.(map[string]any)
			switch {
			case m["role"] == "tool" && m["tool_call_id"] == id:
				told = append(told, fmt.Sprint(m["content"]))
			case m["type"] == "function_call_output" && m["call_id"] == id:
				told = append(told, fmt.Sprint(m["output"]))
			}
		}
	}
	if len(told) == 0 {
		t.Fatalf("no request answers call %s", id)
	}
	for _, s := range told[1:] {
		if s != told[0] {
			t.Fatalf("call %s answered two ways: %q and %q", id, told[0], s)
		}
	}
	return told[0]
}

// TestPaymentRepeatedAfterTimeout is the stripe/ai#402 scenario end to end.
// Turn 1: the model calls create_payment (call A); the payment API charges,
// then holds its answer past the tool's timeout; the loop tells the model
// the call timed out. Turn 2: the model re-plans and makes the same
// payment, spelt another way, under call B; dedupe knows the first call's
// outcome is unknown and answers tool-failed/duplicate_in_doubt without
// running the tool. Turn 3: the model's final text. One charge.
func TestPaymentRepeatedAfterTimeout(t *testing.T) {
	for _, api := range paymentAPIs {
		t.Run(api.name, func(t *testing.T) {
			pay := newPaymentAPI(t, true)
			fake := clock.NewFake(time.Now())
			advanceOnCharge(t, pay, fake)
			tools, err := toolopenai.New(paymentBox(t, pay, fake))
			if err != nil {
				t.Fatal(err)
			}
			const final = "The first payment may have gone through, so I did not charge again. Please check the dashboard."
			rp := replay.New(api.path,
				api.calls(replay.ToolCall{ID: payCallA, Name: "create_payment", Arguments: payArgs}),
				api.calls(replay.ToolCall{ID: payCallB, Name: "create_payment", Arguments: payArgsAgain}),
				api.answer(final))
			ctx := budget.WithRun(context.Background(), budget.WithID("run-402-"+api.name))

			turns, answer, err := api.loop(ctx, t, rp, tools)
			if err != nil || answer != final || len(turns) != 3 {
				t.Fatalf("loop = %d turns, %q, %v; want 3 turns, the final text, nil", len(turns), answer, err)
			}
			if n := pay.count(); n != 1 {
				t.Fatalf("the payment API counted %d charges, want 1", n)
			}

			// What the loop got: a timeout for A, duplicate_in_doubt for B.
			a, b := turns[0].Calls[0], turns[1].Calls[0]
			if info := taxonomy.InfoOf(a.Err); a.CallID != payCallA || info.Kind != taxonomy.KindTimeout || info.Code != taxonomy.CodeTimeout || info.Retryable {
				t.Errorf("call A: %s %+v; want %s, a tool-timeout/timeout that is not retryable", a.CallID, info, payCallA)
			}
			info := taxonomy.InfoOf(b.Err)
			if b.CallID != payCallB || info.Kind != taxonomy.KindFailed || info.Code != taxonomy.CodeDuplicateInDoubt || info.Retryable || info.Tool != "create_payment" {
				t.Errorf("call B: %s %+v; want %s, a permanent tool-failed/duplicate_in_doubt of create_payment", b.CallID, info, payCallB)
			}

			// What the model was told, as the replay server received it.
			reqs := rp.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			source, content := toolmwtest.Envelope(t, toldFor(t, reqs, payCallA))
			if source != toolmw.SourceError || !strings.HasPrefix(content, "tool-timeout timeout: ") {
				t.Errorf("call A: the model was told %s %q, want a tool-timeout", source, content)
			}
			told := toldFor(t, reqs, payCallB)
			if told != b.Text {
				t.Errorf("call B: the wire carries %q, the Turn %q", told, b.Text)
			}
			source, content = toolmwtest.Envelope(t, told)
			if source != toolmw.SourceError || !strings.HasPrefix(content, "tool-failed duplicate_in_doubt: ") || !strings.Contains(content, "may have acted") {
				t.Errorf("call B: the model was told %s %q, want tool-failed duplicate_in_doubt saying it may have acted", source, content)
			}
		})
	}
}

// TestPaymentRepeatedAfterSuccess: the first call succeeded and the model,
// in a later turn, makes the same payment under a new call id. One charge,
// and the model is given the first call's receipt for both.
func TestPaymentRepeatedAfterSuccess(t *testing.T) {
	for _, api := range paymentAPIs {
		t.Run(api.name, func(t *testing.T) {
			pay := newPaymentAPI(t, false)
			fake := clock.NewFake(time.Now()) // never advanced: no attempt times out
			tools, err := toolopenai.New(paymentBox(t, pay, fake))
			if err != nil {
				t.Fatal(err)
			}
			rp := replay.New(api.path,
				api.calls(replay.ToolCall{ID: payCallA, Name: "create_payment", Arguments: payArgs}),
				api.calls(replay.ToolCall{ID: payCallB, Name: "create_payment", Arguments: payArgsAgain}),
				api.answer("Charged 42 EUR."))
			ctx := budget.WithRun(context.Background(), budget.WithID("run-402-ok-"+api.name))

			turns, answer, err := api.loop(ctx, t, rp, tools)
			if err != nil || answer != "Charged 42 EUR." || len(turns) != 3 {
				t.Fatalf("loop = %d turns, %q, %v; want 3 turns, the final text, nil", len(turns), answer, err)
			}
			if n := pay.count(); n != 1 {
				t.Fatalf("the payment API counted %d charges, want 1", n)
			}
			for i, c := range []toolopenai.Answer{turns[0].Calls[0], turns[1].Calls[0]} {
				if c.Err != nil {
					t.Errorf("call %d (%s): %v", i+1, c.CallID, c.Err)
				}
			}
			reqs := rp.Requests()
			toldA, toldB := toldFor(t, reqs, payCallA), toldFor(t, reqs, payCallB)
			source, content := toolmwtest.Envelope(t, toldA)
			const receipt = "charge ch_3Pq0001Kx succeeded: 4200 eur for cus_Q8xLm2"
			if source != toolmw.SourceResult || content != receipt {
				t.Errorf("call A: the model was told %s %q, want the receipt %q", source, content, receipt)
			}
			if toldB != toldA {
				t.Errorf("call B: the model was told %q, want the first call's receipt %q", toldB, toldA)
			}
		})
	}
}

// TestPaymentResumedInAnotherProcess: two processes (replicas of one agent
// service) keep the call records of a run in one Store
// (dedupetest.MemStore, standing for Redis or a database), each with its
// own box, layers, HTTP clients and budget.Run of the one run id. Process 1
// gets the model's turn 1, saves the assistant message, runs its call to
// create_payment (call A) and dies before the answer reaches the model.
// Process 2 resumes the run from the saved message: it runs call A again,
// then goes on, and in turn 2 the model repeats the payment under call B.
// One charge either way: when call A succeeded, A and B are both given its
// receipt; when it timed out after the charge landed, both are told
// tool-failed/duplicate_in_doubt.
func TestPaymentResumedInAnotherProcess(t *testing.T) {
	for _, tc := range []struct {
		name     string
		slow     bool // the first charge's answer is held past the timeout
		told     func(t *testing.T, call, told string)
		wantErrA taxonomy.Kind // how call A ended in process 1
	}{
		{"succeeded", false, func(t *testing.T, call, told string) {
			if source, content := toolmwtest.Envelope(t, told); source != toolmw.SourceResult || content != "charge ch_3Pq0001Kx succeeded: 4200 eur for cus_Q8xLm2" {
				t.Errorf("call %s: process 2 told the model %s %q, want process 1's receipt", call, source, content)
			}
		}, ""},
		{"timed_out", true, func(t *testing.T, call, told string) {
			if source, content := toolmwtest.Envelope(t, told); source != toolmw.SourceError || !strings.HasPrefix(content, "tool-failed duplicate_in_doubt: ") {
				t.Errorf("call %s: process 2 told the model %s %q, want tool-failed duplicate_in_doubt", call, source, content)
			}
		}, taxonomy.KindTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pay := newPaymentAPI(t, tc.slow)
			records := &dedupetest.MemStore{}
			const final = "Done: order 1042 is paid once."
			rp := replay.New("/v1/chat/completions",
				replay.ChatToolCalls(replay.ToolCall{ID: payCallA, Name: "create_payment", Arguments: payArgs}),
				replay.ChatToolCalls(replay.ToolCall{ID: payCallB, Name: "create_payment", Arguments: payArgsAgain}),
				replay.ChatAnswer(final))
			runID := "run-402-resume-" + tc.name
			question := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Charge cus_Q8xLm2 42 EUR for order 1042.")}

			// Process 1: turn 1, saved, its call run, and no more.
			fake1 := clock.NewFake(time.Now())
			if tc.slow {
				advanceOnCharge(t, pay, fake1)
			}
			tools1, err := toolopenai.New(paymentBox(t, pay, fake1, dedupe.WithStore(records, store.WithTimeout(time.Minute))))
			if err != nil {
				t.Fatal(err)
			}
			ctx1 := budget.WithRun(context.Background(), budget.WithID(runID))
			client1 := serve(t, rp)
			reply, err := client1.Chat.Completions.New(ctx1, openai.ChatCompletionNewParams{
				Model: openai.ChatModelGPT5_4Mini, Messages: question, Tools: tools1.ForChat(),
			})
			if err != nil {
				t.Fatal(err)
			}
			saved := []byte(reply.Choices[0].Message.RawJSON())
			turn1, err := tools1.CallChat(ctx1, reply.Choices[0].Message.ToolCalls)
			if err != nil || len(turn1.Calls) != 1 || taxonomy.InfoOf(turn1.Calls[0].Err).Kind != tc.wantErrA {
				t.Fatalf("process 1's turn: %v, %+v; want call A to end with kind %q", err, turn1, tc.wantErrA)
			}
			if n := pay.count(); n != 1 {
				t.Fatalf("after process 1: %d charges, want 1", n)
			}

			// Process 2: the run resumed from the saved message.
			var msg openai.ChatCompletionMessage
			if err := json.Unmarshal(saved, &msg); err != nil {
				t.Fatal(err)
			}
			tools2, err := toolopenai.New(paymentBox(t, pay, clock.NewFake(time.Now()), dedupe.WithStore(records, store.WithTimeout(time.Minute))))
			if err != nil {
				t.Fatal(err)
			}
			ctx2 := budget.WithRun(context.Background(), budget.WithID(runID))
			params := openai.ChatCompletionNewParams{
				Model:    openai.ChatModelGPT5_4Mini,
				Messages: append(question, msg.ToParam()),
				Tools:    tools2.ForChat(),
			}
			turns, answer, err := chatResume(ctx2, serve(t, rp), tools2, params, msg.ToolCalls)
			if err != nil || answer != final || len(turns) != 3 {
				t.Fatalf("process 2's loop = %d turns, %q, %v; want 3 turns, the final text, nil", len(turns), answer, err)
			}
			if n := pay.count(); n != 1 {
				t.Fatalf("the payment API counted %d charges, want 1", n)
			}
			if n := records.Calls("claim"); n != 3 {
				t.Errorf("%d claims in the Store, want 3 (A in each process, B)", n)
			}
			reqs := rp.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			for _, call := range []string{payCallA, payCallB} {
				tc.told(t, call, toldFor(t, reqs, call))
			}
			if !tc.slow && toldFor(t, reqs, payCallA) != turn1.Calls[0].Text {
				t.Errorf("process 2 gave call A %q, process 1 got %q", toldFor(t, reqs, payCallA), turn1.Calls[0].Text)
			}
		})
	}
}

// chatResume is chatLoop resuming a run whose last assistant message,
// already in params, asked for pending calls that were never answered: it
// runs them, then goes on as chatLoop does. The first of the turns is the
// pending calls'.
func chatResume(ctx context.Context, client openai.Client, tools *toolopenai.Tools, params openai.ChatCompletionNewParams,
	pending []openai.ChatCompletionMessageToolCallUnion) (turns []*toolopenai.Turn, answer string, err error) {
	turn, err := tools.CallChat(ctx, pending)
	turns = append(turns, turn)
	params.Messages = append(params.Messages, turn.Messages()...)
	if err != nil {
		return turns, "", err
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
