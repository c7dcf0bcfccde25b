package wire

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestReportedFailure(t *testing.T) {
	secret := "ghp_" + "Zx81kQ2mVb7TnR4wLp0sYd6hJc3fGe9aUi5o"
	for _, c := range []struct {
		name      string
		text      string
		meta      any
		kind      taxonomy.Kind
		code, msg string
	}{
		{"foreign text", "Error: no seats", nil, taxonomy.KindFailed, CodeRemoteToolError, "Error: no seats"},
		{"an envelope", toolmw.ForModel(toolmw.Result{}, taxonomy.Refusal("sold_out", "no seats")), nil,
			taxonomy.KindFailed, CodeRemoteToolError, "sold_out: no seats"},
		{"a secret", "auth " + secret, nil, taxonomy.KindFailed, CodeRemoteToolError, "auth [REDACTED:github_token]"},
		{"a record", "ignored", map[string]any{"kind": "tool-refused", "code": "sold_out", "message": "no seats", "retryable": true},
			taxonomy.KindRefused, "sold_out", "no seats"},
		{"a record as JSON", "ignored", json.RawMessage(`{"kind":"rate-limited","code":"rate_limited","retryable":true,"retry_after":5}`),
			taxonomy.KindRateLimited, "rate_limited", ""},
		{"an unknown kind", "the text", map[string]any{"kind": "tool-exploded", "code": "boom"}, taxonomy.KindFailed, CodeRemoteToolError, "the text"},
		{"a malformed code", "the text", map[string]any{"kind": "tool-failed", "code": "Bad Code"}, taxonomy.KindFailed, CodeRemoteToolError, "the text"},
		{"not a record", "the text", "tool-refused", taxonomy.KindFailed, CodeRemoteToolError, "the text"},
	} {
		e := ReportedFailure(CodeRemoteToolError, c.text, c.meta)
		if e.Kind() != c.kind || e.Code() != c.code || e.Message() != c.msg || e.Retryable() || e.Tool() != "" || e.RetryAfter() != 0 {
			t.Errorf("%s: got %s/%s %q retryable %v tool %q", c.name, e.Kind(), e.Code(), e.Message(), e.Retryable(), e.Tool())
		}
	}
	long := ReportedFailure(CodeRemoteToolError, strings.Repeat("é", 4000), nil)
	if len(long.Message()) > MaxMessageLen || !strings.HasSuffix(long.Message(), "…") {
		t.Fatalf("a long message keeps %d bytes", len(long.Message()))
	}
}

func TestRecordFields(t *testing.T) {
	secret := "AKIA" + "ZQXW4E5R6T7Y8U9I"
	fields := []map[string]any{}
	for range 30 {
		fields = append(fields, map[string]any{"type": "Not A Type", "loc": []any{"items", 2, secret}, "msg": "bad " + secret})
	}
	e := ReportedFailure(CodeRemoteToolError, "", map[string]any{"kind": "tool-args-invalid", "code": "args_invalid", "errors": fields})
	fs := e.Fields()
	if len(fs) != maxFields {
		t.Fatalf("%d fields kept", len(fs))
	}
	js, _ := json.Marshal(fs)
	if strings.Contains(string(js), "ZQXW4E5R6T7Y8U9I") || fs[0].Type != "value_error" {
		t.Fatalf("fields %s", js)
	}
}

func TestFailureOf(t *testing.T) {
	f := FailureOf(json.Unmarshal([]byte("{"), new(any)))
	if f.Info.Kind != taxonomy.KindFailed || f.Info.Code != taxonomy.CodeUnmappedFailure || f.Info.Message != "" {
		t.Fatalf("record %+v", f.Info)
	}
	te, ok := f.Typed.(*taxonomy.ToolError)
	if !ok || te.Code() != taxonomy.CodeUnmappedFailure || te.Unwrap() == nil || strings.Contains(te.Error(), "unexpected end") {
		t.Fatalf("typed %v", f.Typed)
	}
	if m := f.MetaInfo(); m["kind"] != "tool-failed" || m["retryable"] != false {
		t.Fatalf("meta %v", m)
	}
}

func TestModelNamePrefix(t *testing.T) {
	if got := ModelName("air_", "flights.search"); got != "air_flights_search" {
		t.Fatal(got)
	}
	if got := ModelName("", ""); got != "_" {
		t.Fatal(got)
	}
}

// TestScrubThenCut: a remote tool's text is scrubbed whole, then cut, so a
// token that straddles any cut leaves nothing of itself. Before, the text
// was cut at 4 KiB before scrubbing: with JWTs in front (which the
// scrubber shortens), the first 12 characters of a token straddling the
// 4 KiB cut reached the message.
func TestScrubThenCut(t *testing.T) {
	token := "ghp_" + "Zx81kQ2mVb7TnR4wLp0sYd6hJc3fGe9aUi5o"
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U "
	for _, before := range []int{12, 4, 20, 35} {
		for _, at := range []int{4 * MaxMessageLen, MaxMessageLen, 2 * MaxMessageLen} {
			pad := strings.Repeat(jwt, at/len(jwt)+1)[:at-before-1] + " "
			text := pad + token + " and more text after it"
			for _, meta := range []any{nil, map[string]any{"kind": "tool-failed", "code": "upstream_error", "message": text}} {
				msg := ReportedFailure(CodeRemoteToolError, text, meta).Message()
				for k := 0; k+6 <= len(token); k++ {
					if strings.Contains(msg, token[k:k+6]) {
						t.Fatalf("cut at %d, %d bytes of the token before it: %q of the token survives in %q", at, before, token[k:k+6], msg[max(0, len(msg)-80):])
					}
				}
				if len(msg) > MaxMessageLen {
					t.Fatalf("%d bytes", len(msg))
				}
			}
		}
	}
}

func TestSafeName(t *testing.T) {
	token := "ghp_" + "Zx81kQ2mVb7TnR4wLp0sYd6hJc3fGe9aUi5o"
	for name, want := range map[string]bool{
		"search_flights": true, "get-user-v2": true, "a": true, "lookup_2024_06": true,
		"": false, "has.dot": false, "has space": false, token: false, "call_" + token: false,
		"x" + token + "y": false, "getAKIAZQXW4E5R6T7Y8U9I": false, "AKIAZQXW4E5R6T7Y8U9I_x": false,
		"lookup_4556737586899855": false, "Q7vKp2Lm9XwR4tNzQ7vK": false,
	} {
		if got := SafeName(name); got != want {
			t.Errorf("SafeName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestRemoteCancel: a server's record of a cancellation is a failure of
// the remote call here, never this caller's cancellation; when the
// caller's context is done, its own error passes through.
func TestRemoteCancel(t *testing.T) {
	for _, meta := range []any{
		map[string]any{"kind": "tool-cancelled", "code": "cancelled", "message": "server stopping"},
		json.RawMessage(`{"kind":"tool-cancelled","code":"booking_aborted","retryable":true}`),
	} {
		e := ReportedFailure(CodeRemoteToolError, "ignored", meta)
		if e.Kind() != taxonomy.KindFailed || e.Code() != CodeRemoteCancelled || e.Retryable() ||
			errors.Is(e, context.Canceled) || errors.Is(e, taxonomy.ErrCancelled) {
			t.Fatalf("%v: got %s/%s retryable %v (%v)", meta, e.Kind(), e.Code(), e.Retryable(), e)
		}
		if !taxonomy.Declared(e.Code()) {
			t.Fatalf("%s is not declared", e.Code())
		}
		if got := OwnCancel(context.Background(), e); got != error(e) {
			t.Fatalf("a live context: %v", got)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if got := OwnCancel(ctx, e); got != context.Canceled {
			t.Fatalf("a cancelled context: %v", got)
		}
	}
	// Another kind from the server is kept, whatever the context.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e := ReportedFailure(CodeRemoteToolError, "", map[string]any{"kind": "tool-timeout", "code": "timeout"})
	if got := OwnCancel(ctx, e); got != error(e) || e.Kind() != taxonomy.KindTimeout {
		t.Fatalf("a timeout: %v", got)
	}
	if a := Adopt(taxonomy.Info{Kind: taxonomy.KindRefused, Code: "sold_out", Message: "no seats"}); a.Kind() != taxonomy.KindRefused || a.Code() != "sold_out" || a.Retryable() {
		t.Fatalf("adopt: %v", a)
	}
	// A record's retryability is kept (a JSON-RPC error's data; an isError
	// answer is never retried, ReportedFailure says so after).
	if a := Adopt(taxonomy.Info{Kind: taxonomy.KindFailed, Code: "upstream_unavailable", Retryable: true}); !a.Retryable() {
		t.Fatalf("adopt: %v lost its retryability", a)
	}
}
