package redact_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/redact"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// leaks returns where a canary survives in res.
func leaks(res toolmw.Result) []string {
	var out []string
	for i, p := range res.AllParts() {
		for field, text := range map[string]string{"text": p.Text, "name": p.Name, "uri": p.URI, "mime": p.MIMEType} {
			if fam, found := canary.Find(text); fam != "" {
				out = append(out, fmt.Sprintf("part %d %s: %s %q in %q", i, field, fam, found, text))
			}
		}
		if a := p.Annotations; a != nil {
			if fam, _ := canary.Find(strings.Join(a.Audience, " ") + " " + a.LastModified); fam != "" {
				out = append(out, fmt.Sprintf("part %d annotations: %s", i, fam))
			}
		}
	}
	return out
}

func TestPartsCanaries(t *testing.T) {
	for _, s := range canary.Secrets {
		t.Run(s.Family, func(t *testing.T) {
			orig := testutil.PartsWith(s.Value)
			res, err := run(redact.New(redact.WithResults()), orig, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range leaks(res) {
				t.Error(l)
			}
			if len(res.Parts()) != len(orig.Parts()) {
				t.Fatalf("%d parts, want %d", len(res.Parts()), len(orig.Parts()))
			}
			for i, p := range res.Parts() {
				if canary.Leaked(string(p.Kind)) != "" {
					t.Errorf("part %d: kind %s", i, p.Kind)
				}
				if orig.Parts()[i].Kind.Valid() && p.Kind != orig.Parts()[i].Kind {
					t.Errorf("part %d: kind %s, want %s", i, p.Kind, orig.Parts()[i].Kind)
				}
			}
			if !json.Valid([]byte(res.Parts()[1].Text)) {
				t.Errorf("the JSON part is no longer JSON: %s", res.Parts()[1].Text)
			}
			if len(leaks(orig)) == 0 {
				t.Error("the original was changed")
			}
			if ForModel := toolmw.ForModel(res, nil); canary.Leaked(ForModel) != "" {
				t.Errorf("ForModel leaks: %s", ForModel)
			}
		})
	}
}

// TestPartsWithoutResults: without WithResults results are not scrubbed,
// parts as content.
func TestPartsWithoutResults(t *testing.T) {
	orig := testutil.PartsWith(canary.Secrets[0].Value)
	res, _ := run(redact.New(), orig, nil)
	if &res.Parts()[0] != &orig.Parts()[0] {
		t.Error("the parts were copied")
	}
}

// TestPartsBytesUntouched: the bytes of an image, audio, a file or a blob
// are never read, even when they spell a secret: they are the tool's
// binary output.
func TestPartsBytesUntouched(t *testing.T) {
	secret := []byte(canary.Secrets[0].Value)
	orig := toolmw.Parts(toolmw.ImagePart(secret, "image/png"), toolmw.AudioPart(secret, "audio/wav"),
		toolmw.FilePart("a.txt", "text/plain", secret), toolmw.BlobResourcePart("file:///b", "application/octet-stream", secret))
	res, _ := run(redact.New(redact.WithResults()), orig, nil)
	for i, p := range res.Parts() {
		if !bytes.Equal(p.Data, secret) || &p.Data[0] != &orig.Parts()[i].Data[0] {
			t.Errorf("part %d: data %q", i, p.Data)
		}
	}
}

// TestPartsClean: clean parts come back as they are, the same slice.
func TestPartsClean(t *testing.T) {
	orig := toolmw.Parts(toolmw.TextPart("hello"), toolmw.Part{Kind: toolmw.PartJSON, Text: `{"a": [1, "b"]}`},
		toolmw.ResourceLinkPart("https://example.com/r", "r", "text/plain"))
	res, _ := run(redact.New(redact.WithResults()), orig, nil)
	if &res.Parts()[0] != &orig.Parts()[0] || res.Parts()[1].Text != `{"a": [1, "b"]}` {
		t.Errorf("got %+v", res.Parts())
	}
}

func TestJSONPart(t *testing.T) {
	card := canary.Secrets[5].Value
	tests := []struct {
		name, doc, want string
		kind            toolmw.PartKind
	}{
		{"string", `{"note": "mail jane.canary@example.com"}`, `{"note": "mail [REDACTED:email]"}`, toolmw.PartJSON},
		{"beside its key", `{"password": "hunter2xyz"}`, `{"password": "[REDACTED:password]"}`, toolmw.PartJSON},
		{"key", `{"jane.canary@example.com": 1}`, `{"[REDACTED:email]": 1}`, toolmw.PartJSON},
		{"a number", `{"n": 1, "card": 4556737586899855, "list": [4556737586899855, true, null]}`,
			`{"n":1,"card":"[REDACTED:card]","list":["[REDACTED:card]",true,null]}`, toolmw.PartJSON},
		{"a bare number", `4556737586899855`, `"[REDACTED:card]"`, toolmw.PartJSON},
		{"nested beside its key", `[{"a": {"password": ["hunter2xyz", 4556737586899855]}}]`,
			`[{"a":{"password":["[REDACTED:password]","[REDACTED:password]"]}}]`, toolmw.PartJSON},
		{"not JSON", `{"card": ` + card, `{"card": [REDACTED:card]`, toolmw.PartText},
		{"empty", ``, ``, toolmw.PartJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := run(redact.New(redact.WithResults()), toolmw.Parts(toolmw.Part{Kind: toolmw.PartJSON, Text: tt.doc}), nil)
			if p := res.Parts()[0]; p.Text != tt.want || p.Kind != tt.kind {
				t.Errorf("got %s %s, want %s %s", p.Kind, p.Text, tt.kind, tt.want)
			}
		})
	}
}

// TestContentUnchanged: a text or JSON result without parts is scrubbed
// as before, the Content of a result with parts too.
func TestContentWithParts(t *testing.T) {
	res, _ := run(redact.New(redact.WithResults()), toolmw.Result{Content: `{"card": 4556737586899855}`, JSON: true}.WithParts([]toolmw.Part{toolmw.TextPart("x")}...), nil)
	if res.Content != `{"card": [REDACTED:card]}` || res.JSON {
		t.Errorf("got %+v", res)
	}
}

// recorder is a toolmw.Session that keeps what it is sent.
type recorder struct {
	mu   sync.Mutex
	sent []string
}

func (r *recorder) add(v any) {
	b, _ := json.Marshal(v)
	r.mu.Lock()
	r.sent = append(r.sent, string(b))
	r.mu.Unlock()
}

func (r *recorder) Progress(_ context.Context, p toolmw.Progress) error { r.add(p); return nil }
func (r *recorder) Log(_ context.Context, l toolmw.LogLine) error       { r.add(l); return nil }
func (r *recorder) Elicit(_ context.Context, q toolmw.Elicitation) (toolmw.ElicitResult, error) {
	r.add(q)
	return toolmw.ElicitResult{Action: "accept", Content: map[string]any{"email": "jane.canary@example.com"}}, nil
}
func (r *recorder) Sample(_ context.Context, q toolmw.SampleRequest) (toolmw.SampleResult, error) {
	r.add(q)
	return toolmw.SampleResult{Text: "ok"}, nil
}

type logData struct {
	Token string `json:"token"`
	N     int    `json:"n"`
}

// TestSessionCanaries: what a tool sends the client through its session
// is scrubbed, with or without WithResults; what comes back is not.
func TestSessionCanaries(t *testing.T) {
	for _, opts := range [][]redact.Option{nil, {redact.WithResults()}} {
		for _, s := range canary.Secrets {
			rec := &recorder{}
			var answer toolmw.ElicitResult
			tool := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
				for _, err := range []error{
					toolmw.ReportProgress(ctx, 1, 2, "uploading with "+s.Value),
					toolmw.LogToClient(ctx, "info", "using "+s.Value),
					toolmw.LogToClient(ctx, "info", map[string]any{"msg": "using " + s.Value, s.Value: []any{s.Value}}),
					toolmw.LogToClient(ctx, "info", logData{Token: s.Value, N: 1}),
					toolmw.LogToClient(ctx, "info", json.RawMessage(`{"password": "hunter2xyz", "k": "`+s.Value+`"}`)),
					toolmw.LogToClient(ctx, "info", []string{s.Value}),
					toolmw.LogToClient(ctx, "info", 4556737586899855),
				} {
					if err != nil {
						return toolmw.Result{}, err
					}
				}
				var err error
				if answer, err = toolmw.Elicit(ctx, toolmw.Elicitation{Message: "confirm " + s.Value + "?"}); err != nil {
					return toolmw.Result{}, err
				}
				_, err = toolmw.Sample(ctx, toolmw.SampleRequest{SystemPrompt: "key " + s.Value,
					Messages: []toolmw.SampleMessage{{Role: "user", Text: "summarise " + s.Value}}})
				return toolmw.Text("done"), err
			}
			ctx := toolmw.WithSession(context.Background(), rec)
			if _, err := redact.New(opts...)(tool)(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if len(rec.sent) != 9 {
				t.Fatalf("%d messages sent", len(rec.sent))
			}
			for _, m := range rec.sent {
				if fam, found := canary.Find(m); fam != "" || strings.Contains(m, "hunter2xyz") {
					t.Errorf("%s: %q sent: %s", s.Family, found, m)
				}
				if strings.Contains(m, `"Data":"[`) && !strings.Contains(m, "REDACTED") {
					t.Errorf("data not JSON: %s", m)
				}
			}
			if answer.Content["email"] != "jane.canary@example.com" {
				t.Errorf("the answer was changed: %v", answer)
			}
		}
	}
}

type ctxKey struct{}

// TestSessionNone: without a session the tool's context is the caller's.
func TestSessionNone(t *testing.T) {
	ctx := context.WithValue(context.Background(), ctxKey{}, 1)
	var got context.Context
	tool := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		got = ctx
		return toolmw.Result{}, nil
	}
	redact.New()(tool)(ctx, nil)
	if got != ctx {
		t.Error("the context was replaced")
	}
	if err := toolmw.LogToClient(ctx, "info", func() {}); err != nil {
		t.Error(err)
	}
}

// TestSessionUnencodable: log data that does not encode is not sent.
func TestSessionUnencodable(t *testing.T) {
	rec := &recorder{}
	tool := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, toolmw.LogToClient(ctx, "info", func() {})
	}
	_, err := redact.New()(tool)(toolmw.WithSession(context.Background(), rec), nil)
	if err == nil || len(rec.sent) != 0 {
		t.Errorf("err %v, sent %q", err, rec.sent)
	}
}

// TestSessionOnce: two redact layers scrub the session once.
func TestSessionOnce(t *testing.T) {
	rec := &recorder{}
	var inner toolmw.Session
	tool := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		inner, _ = toolmw.SessionFrom(ctx)
		return toolmw.Result{}, nil
	}
	mw := redact.New()
	mw(mw(tool))(toolmw.WithSession(context.Background(), rec), nil)
	var outer toolmw.Session
	mw(func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		outer, _ = toolmw.SessionFrom(ctx)
		return toolmw.Result{}, nil
	})(toolmw.WithSession(context.Background(), rec), nil)
	if inner != outer {
		t.Error("the session was wrapped twice")
	}
}
