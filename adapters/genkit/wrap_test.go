package genkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/toolmw/toolmw"
	toolgenkit "github.com/toolmw/toolmw/adapters/genkit"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// stack returns the default stack (quiet) with extra layers inserted
// before retry, as one middleware.
func stack(t *testing.T, extra ...middleware.Layer) toolmw.Middleware {
	t.Helper()
	s := middleware.Default(middleware.WithSlog(quiet()))
	for _, l := range extra {
		var err error
		if s, err = s.InsertBefore(middleware.Retry, l); err != nil {
			t.Fatal(err)
		}
	}
	return s.Middleware()
}

// TestWrapAcceptance is the scenario with the application's own
// Genkit tools (genkit.DefineTool) under a Wrapper: the refusal reaches
// the model once as a tool response, the transient failure is retried
// inside the stack, a failure with a secret in its text reaches the model
// typed and without it, and the generation is not aborted: it pauses at
// the gated tool, and resumes, after the approval, to run it once. The
// unknown tool is answered by a Tools in the same generation.
func TestWrapAcceptance(t *testing.T) {
	desk := approval.NewDesk()
	var mu sync.Mutex
	wrapped := map[string]bool{} // the tools the Wrapper's stack saw a call of
	seen := func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			c, _ := toolmw.CallFrom(ctx)
			mu.Lock()
			wrapped[c.Tool] = true
			mu.Unlock()
			return next(ctx, args)
		}
	}
	wrap, err := toolgenkit.Wrap(toolmw.Chain(seen, stack(t, middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("refund"))})))
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	var cancels, rates, refunds atomic.Int32
	secret := canary.Secrets[0].Value
	cancel := genkit.DefineTool(g, "cancel_booking", "Cancels a booking.", func(tc *ai.ToolContext, in bookingIn) (string, error) {
		cancels.Add(1)
		return "", taxonomy.Refusal("booking_not_cancellable", "the booking is non-refundable")
	})
	getRates := genkit.DefineTool(g, "get_rates", "Exchange rates.", func(tc *ai.ToolContext, in ratesIn) (string, error) {
		if rates.Add(1) == 1 {
			return "", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the rates service is down")
		}
		return "EUR 1.08", nil
	})
	ledger := genkit.DefineTool(g, "ledger", "Reads the ledger.", func(tc *ai.ToolContext, in bookingIn) (string, error) {
		return "", fmt.Errorf("dial ledger with %s: refused", secret)
	})
	refund := genkit.DefineTool(g, "refund", "Refunds a booking.", func(tc *ai.ToolContext, in bookingIn) (string, error) {
		refunds.Add(1)
		return "refunded " + in.Booking, nil
	})
	// A Tools in the same generation answers the unknown tool.
	empty := toolmw.NewToolbox()
	register(t, empty, toolmw.Spec{Name: "noop", Description: "Does nothing."}, func(ctx context.Context, in struct{}) (string, error) { return "", nil })
	tools, err := toolgenkit.New(empty)
	if err != nil {
		t.Fatal(err)
	}
	model, m := script(t, g,
		calls(call("cancel_booking", "c1", map[string]any{"booking": "BK-1"}),
			call("get_rates", "c2", map[string]any{"currency": "EUR"}),
			call("ledger", "c3", map[string]any{"booking": "BK-1"}),
			call("teleport", "c4", map[string]any{"to": "Mars"}),
			call("noop", "c6", map[string]any{})),
		calls(call("refund", "c5", map[string]any{"booking": "BK-1"})),
		answer("Refunded."))
	ctx := budget.WithRun(context.Background(), budget.WithID("run_wrap_acceptance"))
	opts := []ai.GenerateOption{ai.WithModel(m), ai.WithTools(cancel, getRates, ledger, refund), ai.WithUse(tools, wrap)}

	resp, err := genkit.Generate(ctx, g, append(opts, ai.WithPrompt("Cancel BK-1, or refund it."))...)
	if err != nil {
		t.Fatalf("the generation failed: %v", err)
	}
	if resp.FinishReason != ai.FinishReasonInterrupted || len(resp.Interrupts()) != 1 {
		t.Fatalf("finish %q with %d interrupts, want interrupted with 1", resp.FinishReason, len(resp.Interrupts()))
	}
	id, ok := toolgenkit.Pending(resp.Interrupts()[0])
	if !ok || refunds.Load() != 0 {
		t.Fatalf("not a pending approval (%v), or the refund ran (%d)", resp.Interrupts()[0].Metadata, refunds.Load())
	}
	got := answers(t, model.seen()[1])
	for ref, want := range map[string][2]string{
		"c1": {"tool_refusal", "booking_not_cancellable: the booking is non-refundable"},
		"c2": {"tool_result", "EUR 1.08"},
		"c3": {"tool_error", "tool-failed unmapped_failure"},
		"c4": {"tool_error", "tool-not-found tool_not_found: no tool named teleport"},
	} {
		if src, content := toolmwtest.Envelope(t, outputText(t, got[ref])); src != want[0] || content != want[1] {
			t.Errorf("%s reads %s %q, want %s %q", ref, src, content, want[0], want[1])
		}
	}
	mu.Lock()
	if len(wrapped) != 4 || !wrapped["cancel_booking"] || !wrapped["get_rates"] || !wrapped["ledger"] || !wrapped["refund"] {
		t.Errorf("the Wrapper's stack saw calls of %v, want the four Genkit tools (not the box's noop, not the unknown one)", wrapped)
	}
	mu.Unlock()
	if rates.Load() != 2 || cancels.Load() != 1 {
		t.Errorf("get_rates ran %d times, cancel_booking %d; want 2 and 1", rates.Load(), cancels.Load())
	}
	for i, b := range model.bodies() {
		if family, _ := canary.Find(string(b)); family != "" || strings.Contains(string(b), "dial ledger") {
			t.Errorf("request %d carries the ledger's error", i+1)
		}
	}

	history := roundTrip(t, resp.History())
	req, err := desk.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if err := desk.Approve(context.Background(), req, time.Hour); err != nil {
		t.Fatal(err)
	}
	resp, err = genkit.Generate(ctx, g, append(opts, ai.WithMessages(history...), ai.WithToolRestarts(toolgenkit.Restarts(history)...))...)
	if err != nil {
		t.Fatalf("the resumed generation failed: %v", err)
	}
	if resp.Text() != "Refunded." || refunds.Load() != 1 {
		t.Fatalf("resumed: %q after %d refunds", resp.Text(), refunds.Load())
	}
	if src, content := toolmwtest.Envelope(t, outputText(t, answers(t, model.seen()[2])["c5"])); src != "tool_result" || content != "refunded BK-1" {
		t.Errorf("the refund reads %s %q", src, content)
	}
}

// TestWrapAloneUnknownTool pins Genkit's limit: it looks a called tool up
// before any WrapTool hook runs, so a Wrapper alone cannot answer a tool
// that does not exist, and the generation fails with ai.ErrToolNotFound
// (Genkit's own message, which names the tool the model asked for).
func TestWrapAloneUnknownTool(t *testing.T) {
	wrap, err := toolgenkit.Wrap(stack(t))
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	_, m := script(t, g, calls(call("teleport", "c1", nil)))
	_, err = genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("Go."), ai.WithUse(wrap))
	if !errors.Is(err, ai.ErrToolNotFound) {
		t.Fatalf("the generation ended with %v, want ai.ErrToolNotFound", err)
	}
}

// TestWrapNotOffered: a tool registered on the Genkit instance but not
// offered to the generation is answered tool-not-found by the Wrapper,
// and does not run (Genkit alone would run it).
func TestWrapNotOffered(t *testing.T) {
	wrap, err := toolgenkit.Wrap(stack(t))
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	var ran atomic.Int32
	genkit.DefineTool(g, "delete_all", "Deletes everything.", func(tc *ai.ToolContext, in struct{}) (string, error) {
		ran.Add(1)
		return "deleted", nil
	})
	model, m := script(t, g, calls(call("delete_all", "c1", map[string]any{})), answer("I cannot."))
	resp, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("Delete everything."), ai.WithUse(wrap))
	if err != nil || resp.Text() != "I cannot." || ran.Load() != 0 {
		t.Fatalf("%v, %q, ran %d times", err, resp.Text(), ran.Load())
	}
	if src, content := toolmwtest.Envelope(t, outputText(t, answers(t, model.seen()[1])["c1"])); src != "tool_error" || content != "tool-not-found tool_not_found: no tool named delete_all" {
		t.Errorf("the call reads %s %q", src, content)
	}
}

// TestWrapPerTool: the stack is made once per tool name and kept across
// generations, and each call carries the tool request's ref as its call
// id.
func TestWrapPerTool(t *testing.T) {
	var mu sync.Mutex
	made := map[string]int{}
	var ids []string
	counting := func(next toolmw.Tool) toolmw.Tool {
		var name string
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			c, _ := toolmw.CallFrom(ctx)
			mu.Lock()
			if name == "" {
				name = c.Tool
				made[name]++
			}
			ids = append(ids, c.Tool+"/"+c.ID)
			mu.Unlock()
			return next(ctx, args)
		}
	}
	wrap, err := toolgenkit.Wrap(counting)
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	echo := genkit.DefineTool(g, "echo", "Echoes.", func(tc *ai.ToolContext, in struct {
		Say string `json:"say"`
	}) (string, error) {
		return in.Say, nil
	})
	shout := genkit.DefineTool(g, "shout", "Shouts.", func(tc *ai.ToolContext, in struct {
		Say string `json:"say"`
	}) (string, error) {
		return strings.ToUpper(in.Say), nil
	})
	for i := range 2 {
		model, m := script(t, g,
			calls(call("echo", fmt.Sprintf("e%d", i), map[string]any{"say": "hi"}), call("shout", fmt.Sprintf("s%d", i), map[string]any{"say": "hi"})),
			answer("ok"))
		if _, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("Say hi."), ai.WithTools(echo, shout), ai.WithUse(wrap)); err != nil {
			t.Fatal(err)
		}
		got := answers(t, model.seen()[1])
		if _, content := toolmwtest.Envelope(t, outputText(t, got[fmt.Sprintf("s%d", i)])); content != "HI" {
			t.Errorf("shout reads %q", content)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if made["echo"] != 1 || made["shout"] != 1 || len(made) != 2 {
		t.Errorf("the stack was made %v times per tool, want once each", made)
	}
	want := map[string]bool{"echo/e0": true, "shout/s0": true, "echo/e1": true, "shout/s1": true}
	for _, id := range ids {
		delete(want, id)
	}
	if len(want) != 0 || len(ids) != 4 {
		t.Errorf("the calls carried %v", ids)
	}
}

// TestWrapToolInterrupt: a Genkit tool's own interrupt (ToolContext.
// Interrupt) passes through the stack untouched — not retried, not
// answered — and the generation pauses with the tool's metadata; Genkit's
// restart then runs it again, through the stack.
func TestWrapToolInterrupt(t *testing.T) {
	wrap, err := toolgenkit.Wrap(stack(t))
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	var runs atomic.Int32
	confirm := genkit.DefineTool(g, "transfer", "Transfers money.", func(tc *ai.ToolContext, in struct {
		Amount int `json:"amount"`
	}) (string, error) {
		runs.Add(1)
		if !tc.IsResumed() {
			return "", tc.Interrupt(&ai.InterruptOptions{Metadata: map[string]any{"confirm": in.Amount}})
		}
		return fmt.Sprintf("sent %d", in.Amount), nil
	})
	model, m := script(t, g, calls(call("transfer", "t1", map[string]any{"amount": 5})), answer("Sent."))
	opts := []ai.GenerateOption{ai.WithModel(m), ai.WithTools(confirm), ai.WithUse(wrap)}
	resp, err := genkit.Generate(context.Background(), g, append(opts, ai.WithPrompt("Send 5."))...)
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != ai.FinishReasonInterrupted || len(resp.Interrupts()) != 1 || runs.Load() != 1 {
		t.Fatalf("finish %q, %d interrupts, %d runs", resp.FinishReason, len(resp.Interrupts()), runs.Load())
	}
	p := resp.Interrupts()[0]
	if _, ours := toolgenkit.Pending(p); ours || fmt.Sprint(p.Metadata["interrupt"]) != "map[confirm:5]" {
		t.Fatalf("the interrupt's metadata: %v", p.Metadata)
	}
	if len(toolgenkit.Restarts(resp.History())) != 0 {
		t.Error("Restarts restarts an interrupt that is not an approval's")
	}
	restart, err := confirm.RestartWith(p)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = genkit.Generate(context.Background(), g, append(opts, ai.WithMessages(resp.History()...), ai.WithToolRestarts(restart))...)
	if err != nil || resp.Text() != "Sent." || runs.Load() != 2 {
		t.Fatalf("resumed: %v, %q, %d runs", err, resp.Text(), runs.Load())
	}
	if _, content := toolmwtest.Envelope(t, outputText(t, answers(t, model.seen()[1])["t1"])); content != "sent 5" {
		t.Errorf("the transfer reads %q", content)
	}
}

// TestWrapArgsInvalid: arguments Genkit's schema check rejects reach the
// model as tool-args-invalid, without Genkit's message (which quotes
// them), and the generation goes on.
func TestWrapArgsInvalid(t *testing.T) {
	wrap, err := toolgenkit.Wrap(stack(t))
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	add := genkit.DefineTool(g, "add", "Adds.", func(tc *ai.ToolContext, in struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (int, error) {
		return in.A + in.B, nil
	})
	model, m := script(t, g, calls(call("add", "a1", map[string]any{"a": "secret-ish", "b": 2})), answer("Sorry."))
	if _, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("Add."), ai.WithTools(add), ai.WithUse(wrap)); err != nil {
		t.Fatal(err)
	}
	src, content := toolmwtest.Envelope(t, outputText(t, answers(t, model.seen()[1])["a1"]))
	if src != "tool_error" || !strings.HasPrefix(content, "tool-args-invalid args_invalid:") || strings.Contains(content, "secret-ish") {
		t.Errorf("the call reads %s %q", src, content)
	}
}

// TestWrapNameInvalid: a Genkit tool whose name toolmw does not take
// (Genkit allows dots and slashes) is not run unwrapped, past the stack:
// the call is answered tool-definition-invalid.
func TestWrapNameInvalid(t *testing.T) {
	wrap, err := toolgenkit.Wrap(stack(t))
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	var ran atomic.Int32
	dotted := genkit.DefineTool(g, "files.delete", "Deletes a file.", func(tc *ai.ToolContext, in struct{}) (string, error) {
		ran.Add(1)
		return "deleted", nil
	})
	model, m := script(t, g, calls(call("files.delete", "d1", map[string]any{})), answer("Could not."))
	if _, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("Delete."), ai.WithTools(dotted), ai.WithUse(wrap)); err != nil {
		t.Fatal(err)
	}
	src, content := toolmwtest.Envelope(t, outputText(t, answers(t, model.seen()[1])["d1"]))
	if src != "tool_error" || !strings.HasPrefix(content, "tool-definition-invalid name_invalid:") || ran.Load() != 0 {
		t.Errorf("the call reads %s %q after %d runs", src, content, ran.Load())
	}
}

// TestWrapSpecs: WithSpecs tells the stack which of the application's own
// tools is idempotent. An untyped failure of the idempotent tool is retried
// inside the stack (the model reads the success); the same failure of a
// tool without a spec is not (the model reads the withheld failure).
func TestWrapSpecs(t *testing.T) {
	wrap, err := toolgenkit.Wrap(stack(t), toolgenkit.WithSpecs(toolmw.Spec{Name: "quote", Idempotent: true}))
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	var runs = map[string]int{}
	var mu sync.Mutex
	flaky := func(name string) ai.Tool {
		return genkit.DefineTool(g, name, "Quotes.", func(tc *ai.ToolContext, in struct{}) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			if runs[name]++; runs[name] == 1 {
				return "", errors.New("connection reset by peer")
			}
			return "42 EUR", nil
		})
	}
	quote, fare := flaky("quote"), flaky("fare")
	model, m := script(t, g, calls(call("quote", "q1", map[string]any{}), call("fare", "f1", map[string]any{})), answer("Done."))
	if _, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("Quote."), ai.WithTools(quote, fare), ai.WithUse(wrap)); err != nil {
		t.Fatal(err)
	}
	got := answers(t, model.seen()[1])
	if src, content := toolmwtest.Envelope(t, outputText(t, got["q1"])); src != "tool_result" || !strings.Contains(content, "42 EUR") || runs["quote"] != 2 {
		t.Errorf("the idempotent tool ran %d times and reads %s %q, want 2 and the result", runs["quote"], src, content)
	}
	if src, content := toolmwtest.Envelope(t, outputText(t, got["f1"])); src != "tool_error" || !strings.HasPrefix(content, "tool-failed unmapped_failure") || runs["fare"] != 1 {
		t.Errorf("the tool without a spec ran %d times and reads %s %q, want 1 and the failure", runs["fare"], src, content)
	}
}
