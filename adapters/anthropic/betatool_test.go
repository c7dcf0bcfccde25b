package anthropic_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

type bookingIn struct {
	Booking string `json:"booking"`
}

// TestBetaToolsAcceptance is the scenario on the SDK's own tool
// runner: the model calls a refusing tool, a tool that fails once
// (transient) then works, and a tool it was not given, at once; then a
// tool that needs approval. The refusal reaches the model once, as a
// tool_result; the transient failure is retried inside toolmw (the tool
// runs twice, the model sees one success); the unknown tool is answered
// and the run goes on; the approval ends the run with an approval-pending
// Stop before the model is asked again and before the tool ran; once
// approved, the same reply's calls answered again (ResumeBeta) run the
// tool once and a new runner finishes the conversation. Every call had
// its tool_use id as its call id, and no planted secret reached the API.
func TestBetaToolsAcceptance(t *testing.T) {
	secret := canary.Secrets[0].Value
	var flaky, cancels atomic.Int32
	var ids callIDs
	desk := approval.NewDesk()
	box := toolmw.NewToolbox(fastStack(t,
		middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("cancel_booking"))},
		ids.layer()))
	mustRegister(t, box, "refund_booking", func(ctx context.Context, in bookingIn) (string, error) {
		// The refusal, wrapped with a secret in the wrapper's text.
		return "", fmt.Errorf("call with %s: %w", secret, taxonomy.Refusal("booking_not_refundable", "this fare is non-refundable"))
	})
	mustRegister(t, box, "lookup_booking", func(ctx context.Context, in bookingIn) (string, error) {
		if flaky.Add(1) == 1 {
			return "", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier is down").WithCause(fmt.Errorf("auth %s rejected", secret))
		}
		return in.Booking + ": Lisbon, 2 nights", nil
	})
	mustRegister(t, box, "cancel_booking", func(ctx context.Context, in bookingIn) (string, error) {
		cancels.Add(1)
		return "cancelled " + in.Booking, nil
	})
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}

	rp := replay.New("/v1/messages",
		replay.ToolUses("Let me look.",
			replay.ToolUse{ID: "toolu_01Refund", Name: "refund_booking", Input: `{"booking":"BK-1"}`},
			replay.ToolUse{ID: "toolu_01Lookup", Name: "lookup_booking", Input: `{"booking":"BK-1"}`},
			replay.ToolUse{ID: "toolu_01Rocket", Name: "launch_rocket", Input: `{}`}),
		replay.ToolUses("", replay.ToolUse{ID: "toolu_02Cancel", Name: "cancel_booking", Input: `{"booking":"BK-1"}`}),
		replay.Answer("BK-1 is cancelled; it could not be refunded."))
	client := serve(t, rp)
	runCtx := budget.WithRun(context.Background(), budget.WithID("run_acceptance"))

	// Phase 1: the runner, until the approval stops it.
	runner := newRunner(client, tools.BetaTools(), ask("Refund or cancel BK-1."))
	ctx, run := toolanthropic.WithBetaRunner(runCtx, runner)
	_, err = runner.RunToCompletion(ctx)
	err = run.End(err)
	var stop *toolanthropic.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindApprovalPending || len(stop.Approvals) != 1 {
		t.Fatalf("the run ended with %v, want an approval-pending Stop", err)
	}
	if n := len(rp.Requests()); n != 2 {
		t.Fatalf("the API was asked %d times before the stop, want 2 (not again after it)", n)
	}
	if cancels.Load() != 0 {
		t.Fatal("cancel_booking ran before its approval")
	}
	results := wireResults(t, rp.Requests())
	refund := onlyResult(t, results, "toolu_01Refund")
	if src, content := envelopeAfter(t, "Error: ", refund.text); !refund.isError || src != toolmw.SourceRefusal || content != "booking_not_refundable: this fare is non-refundable" {
		t.Errorf("the refusal reached the model as %+v", refund)
	}
	lookup := onlyResult(t, results, "toolu_01Lookup")
	if src, content := envelopeAfter(t, "", lookup.text); lookup.isError || src != toolmw.SourceResult || content != "BK-1: Lisbon, 2 nights" {
		t.Errorf("the retried lookup reached the model as %+v", lookup)
	}
	if n := flaky.Load(); n != 2 {
		t.Errorf("lookup_booking ran %d times, want 2 (one retry inside toolmw)", n)
	}
	if rocket := onlyResult(t, results, "toolu_01Rocket"); !rocket.isError || rocket.text != "Error: Tool 'launch_rocket' not found" {
		t.Errorf("the unknown tool was answered %+v, want the runner's not-found answer", rocket)
	}

	// The reviewer approves; the app answers the same reply's calls with
	// the same run, and a new runner goes on from the history.
	req, err := desk.Get(context.Background(), stop.Approvals[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := desk.Approve(context.Background(), req, time.Hour); err != nil {
		t.Fatal(err)
	}
	history, err := toolanthropic.ResumeBeta(runCtx, tools.BetaTools(), runner.Messages())
	if err != nil {
		t.Fatal(err)
	}
	if cancels.Load() != 1 {
		t.Fatalf("cancel_booking ran %d times after the approval, want 1", cancels.Load())
	}
	runner = newRunner(client, tools.BetaTools(), history...)
	ctx, run = toolanthropic.WithBetaRunner(runCtx, runner)
	msg, err := runner.RunToCompletion(ctx)
	if err = run.End(err); err != nil {
		t.Fatal(err)
	}
	if got := msg.Content[0].Text; got != "BK-1 is cancelled; it could not be refunded." {
		t.Errorf("final answer %q", got)
	}
	if cancels.Load() != 1 {
		t.Errorf("cancel_booking ran %d times in all, want 1", cancels.Load())
	}
	results = wireResults(t, rp.Requests())
	cancel := onlyResult(t, results, "toolu_02Cancel")
	if _, content := envelopeAfter(t, "", cancel.text); cancel.isError || cancel.request != 2 || content != "cancelled BK-1" {
		t.Errorf("the approved call reached the model as %+v", cancel)
	}

	// The layers saw the model's ids (this one sits between the approval
	// and the retry layers: it sees the approved call, once, and the
	// retried call once).
	for tool, want := range map[string][]string{
		"refund_booking": {"toolu_01Refund"},
		"lookup_booking": {"toolu_01Lookup"},
		"cancel_booking": {"toolu_02Cancel"},
	} {
		if got := ids.of(tool); !slices.Equal(got, want) {
			t.Errorf("%s was called with ids %v, want %v", tool, got, want)
		}
	}
	noSecrets(t, rp.Requests())
	canaryFree(t, rp.Requests())
}

// mustRegister registers a typed tool of bookingIn.
func mustRegister(t *testing.T, box *toolmw.Toolbox, name string, f func(context.Context, bookingIn) (string, error)) {
	t.Helper()
	if err := box.Register(toolmw.Spec{Name: name, Description: strings.ReplaceAll(name, "_", " ")}, toolmw.Typed(f)); err != nil {
		t.Fatal(err)
	}
}

// canaryFree fails t when a canary (toolmwtest/canary) or a text of its
// hiding errors is in any body, the model's own tool_use blocks apart.
func canaryFree(t *testing.T, bodies [][]byte) {
	t.Helper()
	for i, b := range bodies {
		text := string(withoutEcho(t, b))
		if family, found := canary.Find(text); family != "" {
			t.Errorf("request %d carries the %s canary (%q)", i+1, family, found)
		}
		for _, w := range canary.HiddenText {
			if strings.Contains(text, w) {
				t.Errorf("request %d carries %q of a hidden error", i+1, w)
			}
		}
	}
}

// TestBetaToolsAnswers: the definitions the runner sends are the box's, in
// the Anthropic profile; results and failures go back as the runner takes
// them, every failure as "Error: " and an envelope with is_error set,
// never the raw error: a secret in any of canary's hiding errors reaches
// no request.
func TestBetaToolsAnswers(t *testing.T) {
	hidden := canary.All(canary.Secrets[2].Value)
	names := make([]string, 0, len(hidden))
	for name := range hidden {
		names = append(names, name)
	}
	slices.Sort(names)
	box := toolmw.NewToolbox(fastStack(t))
	var uses []replay.ToolUse
	for i, name := range names {
		tool := fmt.Sprintf("fail_%d", i)
		if err := box.Register(toolmw.Spec{Name: tool}, toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) {
			return "", hidden[name]
		})); err != nil {
			t.Fatal(err)
		}
		uses = append(uses, replay.ToolUse{ID: fmt.Sprintf("toolu_%02d", i), Name: tool})
	}
	mustRegister(t, box, "get_booking", func(ctx context.Context, in bookingIn) (string, error) {
		return "booking " + in.Booking + " <ok>", nil
	})
	uses = append(uses, replay.ToolUse{ID: "toolu_ok", Name: "get_booking", Input: `{"booking":"BK-2"}`})
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	rp := replay.New("/v1/messages", replay.ToolUses("", uses...), replay.Answer("done"))
	runner := newRunner(serve(t, rp), tools.BetaTools(), ask("Go."))
	ctx, run := toolanthropic.WithBetaRunner(context.Background(), runner)
	_, err = runner.RunToCompletion(ctx)
	if err := run.End(err); err != nil {
		t.Fatal(err)
	}

	reqs := rp.Requests()
	first := toolmwtest.DecodeJSON(t, reqs[0])
	defs := first["tools"].([]any)
	if len(defs) != len(names)+1 {
		t.Fatalf("%d tool definitions sent, want %d", len(defs), len(names)+1)
	}
	booking := defs[len(defs)-1].(map[string]any)
	if booking["name"] != "get_booking" || booking["description"] != "get booking" ||
		!toolmwtest.SameJSON(t, booking["input_schema"], map[string]any{"type": "object", "properties": map[string]any{"booking": map[string]any{"type": "string"}}, "required": []any{"booking"}, "additionalProperties": false}) {
		t.Errorf("get_booking was defined as %v", booking)
	}
	results := wireResults(t, reqs)
	ok := onlyResult(t, results, "toolu_ok")
	if ok.isError || ok.text != `<untrusted-data source="tool_result">booking BK-2 &lt;ok&gt;</untrusted-data>` {
		t.Errorf("the result went back as %+v", ok)
	}
	for i, name := range names {
		r := onlyResult(t, results, fmt.Sprintf("toolu_%02d", i))
		if _, content := envelopeAfter(t, "Error: ", r.text); !r.isError || content == "" {
			t.Errorf("%s: went back as %+v", name, r)
		}
	}
	noSecrets(t, reqs)
	canaryFree(t, reqs)
}
