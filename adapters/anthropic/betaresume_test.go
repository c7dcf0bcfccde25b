package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
)

// sealKey is the approval desks' key in these tests: every "process"
// shares it, as replicas must.
var sealKey = []byte("0123456789abcdef0123456789abcdef")

// app is one process of the approval test: its own Desk, Toolbox and
// Tools, over the shared store; the gated tool appends a line to a file,
// its side effect.
func app(t *testing.T, store approval.Store, effects string) (*approval.Desk, *toolanthropic.Tools) {
	t.Helper()
	desk := approval.NewDesk(approval.WithStore(store), approval.WithSealKey(sealKey))
	box := toolmw.NewToolbox(fastStack(t,
		middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("cancel_booking"))}))
	mustRegister(t, box, "cancel_booking", func(ctx context.Context, in bookingIn) (string, error) {
		f, err := os.OpenFile(effects, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if _, err := f.WriteString("cancelled " + in.Booking + "\n"); err != nil {
			return "", err
		}
		return "cancelled " + in.Booking, nil
	})
	mustRegister(t, box, "lookup", func(ctx context.Context, in bookingIn) (string, error) {
		return in.Booking + " is refundable until Friday", nil
	})
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	return desk, tools
}

// TestBetaApprovalResume: the runner has no pause, so an approval ends
// the run (approval-pending Stop) and the app saves the runner's history
// to a file. Then, as another process would — its own Desk over the same
// store and key, its own tools, the history read back from the file (in
// this process: the store is a MemoryStore) — the app resumes: before
// the approval, the call stops again and the tool does not run; after
// it, ResumeBeta runs the tool once and a new runner finishes; resuming
// the same history again does not run it a second time (the approval is
// used). The side effect happened exactly once.
func TestBetaApprovalResume(t *testing.T) {
	dir := t.TempDir()
	effects, saved := filepath.Join(dir, "effects.log"), filepath.Join(dir, "history.json")
	store := approval.NewMemoryStore()
	runOpts := []budget.RunOption{budget.WithID("run_restart")}
	rp := replay.New("/v1/messages",
		replay.ToolUses("I'll check, then cancel.",
			replay.ToolUse{ID: "toolu_01Look", Name: "lookup", Input: `{"booking":"BK-9"}`},
			replay.ToolUse{ID: "toolu_01Cancel", Name: "cancel_booking", Input: `{"booking":"BK-9"}`}),
		replay.Answer("BK-9 is cancelled."))
	client := serve(t, rp)

	// Process 1: the run stops on the approval; the history is saved.
	var approvalID string
	{
		_, tools := app(t, store, effects)
		runner := newRunner(client, tools.BetaTools(), ask("Cancel BK-9."))
		ctx, run := toolanthropic.WithBetaRunner(budget.WithRun(context.Background(), runOpts...), runner)
		_, err := runner.RunToCompletion(ctx)
		var stop *toolanthropic.Stop
		if err = run.End(err); !errors.As(err, &stop) || stop.Kind != taxonomy.KindApprovalPending || len(stop.Approvals) != 1 {
			t.Fatalf("process 1 ended with %v, want approval-pending", err)
		}
		approvalID = stop.Approvals[0]
		js, err := json.Marshal(runner.Messages())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(saved, js, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	load := func() []anthropic.BetaMessageParam {
		js, err := os.ReadFile(saved)
		if err != nil {
			t.Fatal(err)
		}
		var history []anthropic.BetaMessageParam
		if err := json.Unmarshal(js, &history); err != nil {
			t.Fatal(err)
		}
		return history
	}

	// Process 2, before a reviewer decides: the call stops again, under
	// the same approval id, and the tool does not run.
	desk, tools := app(t, store, effects)
	ctx := budget.WithRun(context.Background(), runOpts...)
	history, err := toolanthropic.ResumeBeta(ctx, tools.BetaTools(), load())
	var stop *toolanthropic.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindApprovalPending || len(stop.Approvals) != 1 || stop.Approvals[0] != approvalID || history != nil {
		t.Fatalf("resuming before the approval: %v, %v; want approval-pending %s", history, err, approvalID)
	}
	sideEffects(t, effects, 0)

	// The reviewer approves (on process 2's desk); process 2 resumes and a
	// new runner finishes the conversation.
	req, err := desk.Get(context.Background(), approvalID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(req.Summary, "BK-9") {
		t.Errorf("the reviewer reads %q", req.Summary)
	}
	if err := desk.Approve(context.Background(), req, time.Hour); err != nil {
		t.Fatal(err)
	}
	history, err = toolanthropic.ResumeBeta(ctx, tools.BetaTools(), load())
	if err != nil {
		t.Fatal(err)
	}
	sideEffects(t, effects, 1)
	runner := newRunner(client, tools.BetaTools(), history...)
	runCtx, run := toolanthropic.WithBetaRunner(ctx, runner)
	msg, err := runner.RunToCompletion(runCtx)
	if err = run.End(err); err != nil || msg.Content[0].Text != "BK-9 is cancelled." {
		t.Fatalf("process 2's runner: %v", err)
	}
	results := wireResults(t, rp.Requests())
	if r := results["toolu_01Cancel"]; len(r) != 1 || r[0].request != 1 || r[0].isError || r[0].text != `<untrusted-data source="tool_result">cancelled BK-9</untrusted-data>` {
		t.Errorf("the model got the approved call's answer as %+v", r)
	}
	if r := results["toolu_01Look"]; len(r) != 1 || r[0].request != 1 || r[0].isError {
		t.Errorf("the model got lookup's answer as %+v", r)
	}

	// The same history resumed once more: the approval is used, the call
	// is refused, the tool does not run again.
	again, err := toolanthropic.ResumeBeta(ctx, tools.BetaTools(), load())
	if err != nil {
		t.Fatal(err)
	}
	cancel := again[len(again)-1].OfUser.Content[1].OfToolResult
	if _, content := envelopeAfter(t, "Error: ", cancel.Content[0].OfText.Text); !cancel.IsError.Value || !strings.HasPrefix(content, string(taxonomy.KindNotPermitted)+" approval_replayed") {
		t.Errorf("the used approval answered %q", content)
	}
	sideEffects(t, effects, 1)
}

// sideEffects fails t unless the effects file has n lines.
func sideEffects(t *testing.T, path string, n int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), "\n"); got != n {
		t.Fatalf("the tool's side effect happened %d times, want %d", got, n)
	}
}

// TestResumeBeta: what ResumeBeta answers besides the approval: the
// history's tool_result message the runner added is replaced, a call of a
// tool it was not given is answered not-found, a tool not made here has
// its error withheld, and a history without calls is an error.
func TestResumeBeta(t *testing.T) {
	box := toolmw.NewToolbox(fastStack(t))
	mustRegister(t, box, "lookup", func(ctx context.Context, in bookingIn) (string, error) {
		call, _ := toolmw.CallFrom(ctx)
		return in.Booking + " via " + call.ID, nil
	})
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	raw := betaTool{name: "raw", exec: func(context.Context, json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
		return nil, errors.New("dial upstream with " + secrets[0])
	}}
	reply := anthropic.BetaMessageParam{OfAssistant: &anthropic.BetaAssistantMessageParam{Content: []anthropic.BetaContentBlockParamUnion{
		{OfText: &anthropic.BetaTextBlockParam{Text: "Looking."}},
		{OfToolUse: &anthropic.BetaToolUseBlockParam{ID: "toolu_1", Name: "lookup", Input: map[string]any{"booking": "BK-1"}}},
		{OfToolUse: &anthropic.BetaToolUseBlockParam{ID: "toolu_2", Name: "nope", Input: map[string]any{}}},
		{OfToolUse: &anthropic.BetaToolUseBlockParam{ID: "toolu_3", Name: "raw", Input: map[string]any{}}},
	}}}
	stale := anthropic.NewBetaUserMessage(anthropic.NewBetaToolResultBlock("toolu_1", "stale", true))
	history := []anthropic.BetaMessageParam{ask("Look."), reply, stale}
	out, err := toolanthropic.ResumeBeta(context.Background(), append(tools.BetaTools(), raw), history)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || out[1].OfAssistant != reply.OfAssistant || history[2].OfUser != stale.OfUser {
		t.Fatalf("the resumed history has %d messages, or the caller's changed", len(out))
	}
	got := out[2].OfUser.Content
	want := []struct {
		id, text string
		isError  bool
	}{
		{"toolu_1", `<untrusted-data source="tool_result">BK-1 via toolu_1</untrusted-data>`, false},
		{"toolu_2", `Error: <untrusted-data source="tool_error">tool-not-found tool_not_found: no tool named nope</untrusted-data>`, true},
		{"toolu_3", `Error: <untrusted-data source="tool_error">tool-failed unmapped_failure</untrusted-data>`, true},
	}
	if len(got) != len(want) {
		t.Fatalf("%d tool_results, want %d", len(got), len(want))
	}
	for i, w := range want {
		r := got[i].OfToolResult
		if r == nil || r.ToolUseID != w.id || r.IsError.Value != w.isError || r.Content[0].OfText.Text != w.text {
			t.Errorf("tool_result %d: %+v, want %+v", i, r, w)
		}
	}
	js, _ := json.Marshal(out)
	toolmwtest.NoSecrets(t, [][]byte{js}, secrets, func(_ testing.TB, b []byte) []byte { return b })

	for name, h := range map[string][]anthropic.BetaMessageParam{
		"empty":        nil,
		"no assistant": {ask("Hi.")},
		"no calls":     {ask("Hi."), {OfAssistant: &anthropic.BetaAssistantMessageParam{Content: []anthropic.BetaContentBlockParamUnion{{OfText: &anthropic.BetaTextBlockParam{Text: "Hello."}}}}}},
	} {
		if out, err := toolanthropic.ResumeBeta(context.Background(), tools.BetaTools(), h); err == nil || out != nil {
			t.Errorf("%s: %v, %v; want an error", name, out, err)
		}
	}
}
