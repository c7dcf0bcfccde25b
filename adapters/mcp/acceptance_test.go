package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/taxonomy"
)

// TestAcceptance runs the cases with real SDK clients and servers:
// a go-sdk server (AddToolbox) and an mcp-go server (mcpgo.Middleware),
// each in memory and over streamable HTTP on 127.0.0.1, called by a go-sdk
// client through a Remote behind the default stack.
func TestAcceptance(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, kind serverKind, tk transportKind)
		only func(serverKind, transportKind) bool // nil: every combination
	}{
		{"success", testSuccess, nil},
		{"transient retried by the server", testServerRetry, nil},
		{"refusal", testRefusal, nil},
		{"untyped error with secrets", testSecrets, nil},
		{"panic", testPanic, nil},
		{"bad arguments", testBadArgs, nil},
		{"unknown tool", testUnknownTool, nil},
		{"handler's own failure", testReported, func(k serverKind, _ transportKind) bool { return k == mcpGo }},
		{"cancellation mid-call", testCancel, nil},
		{"server hangs", testHang, nil},
		{"server dies", testDies, nil},
		{"server comes back", testReconnect, nil},
		{"429-style answers", testRateLimited, func(k serverKind, tk transportKind) bool { return k == goSDK || tk == streamable }},
	}
	for _, m := range matrix {
		t.Run(string(m.server)+"/"+string(m.transport), func(t *testing.T) {
			for _, c := range cases {
				if c.only != nil && !c.only(m.server, m.transport) {
					continue
				}
				t.Run(c.name, func(t *testing.T) { c.run(t, m.server, m.transport) })
			}
		})
	}
}

func testSuccess(t *testing.T, kind serverKind, tk transportKind) {
	f := newFixture(t, kind, tk, config{})
	var spec toolmw.Spec
	for _, s := range f.remote.Specs() {
		if s.Name == "echo" {
			spec = s
		}
	}
	if !spec.Idempotent || spec.InputSchema == nil {
		t.Fatalf("echo's spec: %+v", spec)
	}
	res, err := f.call("echo", `{"q":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		CallID string          `json:"call_id"`
		Args   json.RawMessage `json:"args"`
	}
	if !res.JSON || json.Unmarshal([]byte(res.Content), &out) != nil {
		t.Fatalf("result %+v, want JSON", res)
	}
	if out.CallID != "call_echo" || string(out.Args) != `{"q":"hi"}` {
		t.Fatalf("the server saw call id %q and args %s", out.CallID, out.Args)
	}
	if f.attempts.Load() != 1 || f.tools.runsOf("echo") != 1 {
		t.Fatalf("attempts %d, runs %d", f.attempts.Load(), f.tools.runsOf("echo"))
	}
	raw, err := f.raw("echo", map[string]any{"q": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if raw.IsError || raw.StructuredContent == nil {
		t.Fatalf("raw result %+v: want structured content", raw)
	}
}

func testServerRetry(t *testing.T, kind serverKind, tk transportKind) {
	f := newFixture(t, kind, tk, config{})
	res, err := f.call("flaky", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "ok after a retry" {
		t.Fatalf("result %q", res.Content)
	}
	if runs, reqs := f.tools.runsOf("flaky"), f.tools.requests.Load(); runs != 2 || reqs != 1 {
		t.Fatalf("runs %d, requests %d: want the server's stack to retry within one request", runs, reqs)
	}
}

func testRefusal(t *testing.T, kind serverKind, tk transportKind) {
	f := newFixture(t, kind, tk, config{})
	res, err := f.call("refuse", `{}`)
	info := wantInfo(t, err, taxonomy.KindRefused, "booking_not_cancellable")
	if info.Retryable || info.Tool != "refuse" || info.Message != "this fare is non-refundable" {
		t.Fatalf("record %+v", info)
	}
	if f.tools.runsOf("refuse") != 1 || f.attempts.Load() != 1 || f.tools.requests.Load() != 1 {
		t.Fatalf("runs %d, attempts %d, requests %d: want one of each", f.tools.runsOf("refuse"), f.attempts.Load(), f.tools.requests.Load())
	}
	const envelope = `<untrusted-data source="tool_refusal">booking_not_cancellable: this fare is non-refundable</untrusted-data>`
	if got := toolmw.ForModel(res, err); got != envelope {
		t.Fatalf("the model is told %q", got)
	}
	raw, err := f.raw("refuse", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if !raw.IsError || textOf(t, raw) != envelope {
		t.Fatalf("on the wire: isError %v, text %q", raw.IsError, textOf(t, raw))
	}
	meta, ok := raw.Meta[toolmcp.MetaError].(map[string]any)
	if !ok || meta["kind"] != "tool-refused" || meta["code"] != "booking_not_cancellable" || meta["retryable"] != false {
		t.Fatalf("_meta %v", raw.Meta)
	}
	if kind == goSDK {
		got := <-f.gotErrors
		if te, ok := taxonomy.From(got); !ok || te.Kind() != taxonomy.KindRefused {
			t.Fatalf("the server's middleware saw %v, want the typed refusal", got)
		}
	}
}

func testSecrets(t *testing.T, kind serverKind, tk transportKind) {
	f := newFixture(t, kind, tk, config{})
	for _, name := range []string{"leak", "boom"} {
		res, err := f.call(name, `{}`)
		if err == nil {
			t.Fatalf("%s succeeded", name)
		}
		if s := leakedIn(toolmw.ForModel(res, err) + err.Error()); s != "" {
			t.Fatalf("%s: the model or the error shows %s", name, s)
		}
		raw, err := f.raw(name, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		if !raw.IsError {
			t.Fatalf("%s: not an isError result", name)
		}
	}
	wantInfo(t, func() error { _, err := f.call("leak", `{}`); return err }(), taxonomy.KindFailed, taxonomy.CodeUnmappedFailure)
	if s := leakedIn(f.wire.String()); s != "" {
		t.Fatalf("%s is on the wire:\n%s", s, f.wire.String())
	}
	if !strings.Contains(f.wire.String(), "unmapped_failure") {
		t.Fatalf("the wire capture holds no answer:\n%s", f.wire.String())
	}
	if found := append(f.srv.leaks(t, "server"), f.cli.leaks(t, "client")...); len(found) > 0 {
		t.Fatalf("planted secrets found:\n%s", strings.Join(found, "\n"))
	}
	if kind == goSDK {
		for range 2 {
			got := <-f.gotErrors
			if _, ok := taxonomy.From(got); !ok || leakedIn(got.Error()) != "" {
				t.Fatalf("the server's middleware saw %q", got)
			}
		}
	}
}

func testPanic(t *testing.T, kind serverKind, tk transportKind) {
	f := newFixture(t, kind, tk, config{})
	_, err := f.call("boom", `{}`)
	info := wantInfo(t, err, taxonomy.KindFailed, taxonomy.CodeToolPanicked)
	if info.Retryable || f.tools.runsOf("boom") != 1 {
		t.Fatalf("record %+v, runs %d", info, f.tools.runsOf("boom"))
	}
	if _, err := f.call("echo", `{}`); err != nil {
		t.Fatalf("after the panic: %v", err)
	}
}

func testBadArgs(t *testing.T, kind serverKind, tk transportKind) {
	f := newFixture(t, kind, tk, config{})
	// Checked against the server's schema before they leave.
	_, err := f.call("book", `{"flight":42,"seats":"`+secrets[0].value+`"}`)
	info := wantInfo(t, err, taxonomy.KindArgsInvalid, taxonomy.CodeArgsInvalid)
	if len(info.Fields) == 0 || leakedIn(toolmw.ForModel(toolmw.Result{}, err)) != "" {
		t.Fatalf("record %+v", info)
	}
	if f.tools.requests.Load() != 0 {
		t.Fatalf("%d requests reached the server", f.tools.requests.Load())
	}
	// Sent anyway, they are refused by the server's own check, value-free.
	raw, err := f.raw("book", map[string]any{"flight": 42, "seats": secrets[0].value})
	if err != nil {
		t.Fatal(err)
	}
	text := textOf(t, raw)
	if !raw.IsError || !strings.Contains(text, "tool-args-invalid args_invalid") || leakedIn(text) != "" {
		t.Fatalf("on the wire: isError %v, %q", raw.IsError, text)
	}
	if f.tools.runsOf("book") != 0 {
		t.Fatal("the tool ran")
	}
	if _, err := f.call("book", `{"flight":"TP1","seats":2}`); err != nil {
		t.Fatal(err)
	}
}

func testUnknownTool(t *testing.T, kind serverKind, tk transportKind) {
	f := newFixture(t, kind, tk, config{})
	_, err := f.raw("nope", map[string]any{})
	if err == nil {
		t.Fatal("an unknown tool answered")
	}
	if kind == goSDK && !strings.Contains(err.Error(), "tool-not-found tool_not_found: no tool named nope") {
		t.Fatalf("protocol error %q, want the typed one", err)
	}
	// A tool the server dropped after listing.
	if kind == goSDK {
		f.sdkServer.RemoveTools("refuse")
	} else {
		f.mcpServer.DeleteTools("refuse")
	}
	_, err = f.call("refuse", `{}`)
	info := wantInfo(t, err, taxonomy.KindNotFound, taxonomy.CodeToolNotFound)
	if info.Retryable || f.attempts.Load() != 1 {
		t.Fatalf("record %+v, attempts %d", info, f.attempts.Load())
	}
}

func testReported(t *testing.T, kind serverKind, tk transportKind) {
	f := newFixture(t, kind, tk, config{})
	raw, err := f.raw("oops", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	text := textOf(t, raw)
	if !raw.IsError || !strings.HasPrefix(text, `<untrusted-data source="tool_error">tool-failed tool_reported_error: the supplier rejected key [REDACTED:`) {
		t.Fatalf("on the wire: %q", text)
	}
	_, err = f.call("oops", `{}`)
	wantInfo(t, err, taxonomy.KindFailed, "tool_reported_error")
	if s := leakedIn(f.wire.String()); s != "" {
		t.Fatalf("%s on the wire", s)
	}
}

func testCancel(t *testing.T, kind serverKind, tk transportKind) {
	f := newFixture(t, kind, tk, config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.box.Call(ctx, "slow", json.RawMessage(`{}`))
		done <- err
	}()
	waitFor(t, f.tools.started, "the call to start")
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want the cancellation", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not end when cancelled")
	}
	waitFor(t, f.tools.cancelled, "the server's call to be cancelled")
	if f.attempts.Load() != 1 {
		t.Fatalf("attempts %d", f.attempts.Load())
	}
}

func testHang(t *testing.T, kind serverKind, tk transportKind) {
	f := newFixture(t, kind, tk, config{timeout: 100 * time.Millisecond})
	_, err := f.call("slow", `{}`)
	info := wantInfo(t, err, taxonomy.KindTimeout, taxonomy.CodeTimeout)
	if info.Retryable || f.attempts.Load() != 1 || f.tools.runsOf("slow") != 1 {
		t.Fatalf("record %+v, attempts %d, runs %d: a non-idempotent call that timed out is not retried", info, f.attempts.Load(), f.tools.runsOf("slow"))
	}
	waitFor(t, f.tools.cancelled, "the server's call to be cancelled")
}

func testDies(t *testing.T, kind serverKind, tk transportKind) {
	f := newFixture(t, kind, tk, config{})
	if _, err := f.call("echo", `{}`); err != nil {
		t.Fatal(err)
	}
	// It dies in the middle of a call, which ends typed, at once.
	done := make(chan error, 1)
	go func() {
		_, err := f.call("slow", `{}`)
		done <- err
	}()
	waitFor(t, f.tools.started, "the call to start")
	f.stop()
	select {
	case err := <-done:
		info := taxonomy.InfoOf(err)
		if info.Kind != taxonomy.KindFailed && info.Kind != taxonomy.KindCircuitOpen || info.Code == taxonomy.CodeUnmappedFailure {
			t.Fatalf("the call in flight ended %s/%s (%v)", info.Kind, info.Code, err)
		}
		t.Logf("the call in flight ended %s/%s", info.Kind, info.Code)
	case <-time.After(5 * time.Second):
		t.Fatal("the call in flight did not end")
	}
	// The first call meets the dead server: its attempts are dependency
	// faults, and the breaker opens.
	_, err := f.call("echo", `{}`)
	if te, ok := taxonomy.From(err); !ok || te.Kind() != taxonomy.KindFailed && te.Kind() != taxonomy.KindCircuitOpen {
		t.Fatalf("first call after the death: %v", err)
	}
	if f.breaker.State() != breaker.StateOpen {
		t.Fatalf("breaker %v after %d attempts (%v), want open", f.breaker.State(), f.attempts.Load(), err)
	}
	// Calls now fail fast, without reaching for the server.
	for _, name := range []string{"echo", "refuse"} {
		start := time.Now()
		_, err = f.call(name, `{}`)
		info := taxonomy.InfoOf(err)
		if info.Kind != taxonomy.KindCircuitOpen || f.attempts.Load() != 1 {
			t.Fatalf("%s: %s/%s after %d attempts, want circuit-open at once", name, info.Kind, info.Code, f.attempts.Load())
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("%s took %v", name, d)
		}
	}
}

func testReconnect(t *testing.T, kind serverKind, tk transportKind) {
	f := newFixture(t, kind, tk, config{reconnect: true, openFor: 50 * time.Millisecond})
	if _, err := f.call("echo", `{}`); err != nil {
		t.Fatal(err)
	}
	f.stop()
	if _, err := f.call("refuse", `{}`); err == nil {
		t.Fatal("a dead server answered")
	}
	if f.serve != nil {
		f.serve() // the server restarts; in memory, the dial starts it
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := f.call("echo", `{}`)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reconnection: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if f.breaker.State() != breaker.StateClosed {
		t.Fatalf("breaker %v", f.breaker.State())
	}
}

func testRateLimited(t *testing.T, kind serverKind, tk transportKind) {
	f := newFixture(t, kind, tk, config{})
	// Twice "not now, retry at once": the call succeeds on its third attempt.
	f.retryAfter = "0"
	f.limited.Store(2)
	if _, err := f.call("echo", `{}`); err != nil {
		t.Fatal(err)
	}
	if f.attempts.Load() != 3 || f.tools.runsOf("echo") != 1 {
		t.Fatalf("attempts %d, runs %d", f.attempts.Load(), f.tools.runsOf("echo"))
	}
	// "Retry in 30 s" with 10 s left: no attempt is started that cannot
	// finish; the call ends at once, rate-limited, with the server's hint.
	f.retryAfter = "30"
	f.limited.Store(1)
	start := time.Now()
	_, err := f.call("echo", `{}`)
	info := taxonomy.InfoOf(err)
	if info.Kind != taxonomy.KindRateLimited || time.Duration(info.RetryAfter) != 30*time.Second {
		t.Fatalf("got %+v (%v)", info, err)
	}
	if d := time.Since(start); d > 2*time.Second || f.attempts.Load() != 1 {
		t.Fatalf("took %v and %d attempts", d, f.attempts.Load())
	}
}
