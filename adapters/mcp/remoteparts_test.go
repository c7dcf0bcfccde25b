//lint:file-ignore SA1019 MCP deprecated logging and sampling (SEP-2577) in 2026-07-28; servers still send them, and they are relayed while the protocol versions that have them are spoken.

package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// serveHTTP serves srv over streamable HTTP on 127.0.0.1 and returns a
// session of a client made with opts.
func serveHTTP(t *testing.T, srv *sdk.Server, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1.0.0"}, opts).
		Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// answering is a go-sdk tool answering res.
func answering(res *sdk.CallToolResult) sdk.ToolHandler {
	return func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return res, nil }
}

func remoteBox(t *testing.T, cs *sdk.ClientSession) *toolmw.Toolbox {
	t.Helper()
	remote, err := toolmcp.NewRemote(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	box, err := remote.Toolbox()
	if err != nil {
		t.Fatal(err)
	}
	return box
}

var png = []byte("\x89PNG\r\n\x1a\n fake")

func TestRemoteParts(t *testing.T) {
	ann := &sdk.Annotations{Audience: []sdk.Role{"user", "bogus", "user"}, Priority: 0.5, LastModified: "2025-01-12T15:00:58Z"}
	blocks := []sdk.Content{
		&sdk.TextContent{Text: "see the chart", Annotations: ann},
		&sdk.ImageContent{MIMEType: "image/png", Data: png},
		&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF....WAVE")},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain; charset=utf-8", Text: "the notes"}},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///b.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2}}},
		&sdk.ResourceLink{URI: "https://example.com/r?q=1#x", Name: "report", MIMEType: "application/pdf", Title: "dropped"},
	}
	srv := newServer()
	srv.AddTool(&sdk.Tool{Name: "every", InputSchema: anyObject}, answering(&sdk.CallToolResult{Content: blocks}))
	srv.AddTool(&sdk.Tool{Name: "every_structured", InputSchema: anyObject}, answering(&sdk.CallToolResult{
		Content:           append([]sdk.Content{&sdk.TextContent{Text: `{"seats":2}`}}, blocks[1:]...),
		StructuredContent: map[string]any{"seats": 2},
	}))
	srv.AddTool(&sdk.Tool{Name: "text", InputSchema: anyObject}, answering(&sdk.CallToolResult{
		Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}}))
	box := remoteBox(t, serveHTTP(t, srv, nil))
	ctx := context.Background()

	half := 0.5
	wantAnn := &toolmw.Annotations{Audience: []string{"user"}, Priority: &half, LastModified: "2025-01-12T15:00:58Z"}
	text := toolmw.TextPart("see the chart")
	text.Annotations = wantAnn
	rest := []toolmw.Part{
		toolmw.ImagePart(png, "image/png"),
		toolmw.AudioPart([]byte("RIFF....WAVE"), "audio/wav"),
		toolmw.ResourcePart("file:///notes.txt", "text/plain; charset=utf-8", "the notes"),
		toolmw.BlobResourcePart("file:///b.bin", "application/octet-stream", []byte{0, 1, 2}),
		toolmw.ResourceLinkPart("https://example.com/r?q=1#x", "report", "application/pdf"),
	}
	res, err := box.Call(ctx, "every", nil)
	if want := append([]toolmw.Part{text}, rest...); err != nil || res.Content != "" || !reflect.DeepEqual(res.Parts(), want) {
		t.Fatalf("every: %+v, %v", res, err)
	}
	// Structured content is the JSON part; the text blocks are its
	// serialization and are left out.
	res, err = box.Call(ctx, "every_structured", nil)
	if want := append([]toolmw.Part{{Kind: toolmw.PartJSON, Text: `{"seats":2}`}}, rest...); err != nil || !reflect.DeepEqual(res.Parts(), want) {
		t.Fatalf("every_structured: %+v, %v", res, err)
	}
	// Text only: as it has always been.
	res, err = box.Call(ctx, "text", nil)
	if err != nil || res.Content != "a\nb" || res.JSON || res.Parts() != nil {
		t.Fatalf("text: %+v, %v", res, err)
	}
}

// TestRemotePartsRefused: a hostile server's oversized image (the real
// thing, over HTTP) and malformed parts are typed errors, and nothing of
// them is kept. The other bounds are tested on decoded results
// (remoteparts_internal_test.go).
func TestRemotePartsRefused(t *testing.T) {
	big := make([]byte, toolmcp.MaxRemotePartBytes+1)
	for _, c := range []struct {
		name string
		res  *sdk.CallToolResult
		code string
	}{
		{"huge_image", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: big}}}, taxonomy.CodeResultTooLarge},
		{"bad_mime", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png\r\nX-Evil: 1", Data: png}}}, taxonomy.CodeResultPartInvalid},
		{"no_mime", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: png}}}, taxonomy.CodeResultPartInvalid},
		{"mime_no_subtype", &sdk.CallToolResult{Content: []sdk.Content{&sdk.AudioContent{MIMEType: "audio", Data: png}}}, taxonomy.CodeResultPartInvalid},
		{"empty_image", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png"}}}, taxonomy.CodeResultPartInvalid},
		{"long_uri", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "https://x/" + strings.Repeat("a", toolmcp.MaxRemoteURILen), Name: "n"}}}, taxonomy.CodeResultPartInvalid},
		{"control_uri", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "https://x/\x1b[2J", Name: "n"}}}, taxonomy.CodeResultPartInvalid},
		{"no_uri", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{Text: "t"}}}}, taxonomy.CodeResultPartInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer()
			srv.AddTool(&sdk.Tool{Name: "hostile", InputSchema: anyObject}, answering(c.res))
			box := remoteBox(t, serveHTTP(t, srv, nil))
			res, err := box.Call(context.Background(), "hostile", nil)
			wantInfo(t, err, taxonomy.KindResultInvalid, c.code)
			if res.Size() != 0 {
				t.Fatalf("kept %d bytes", res.Size())
			}
		})
	}
}

// recorder is a toolmw.Session that records what reaches it.
type recorder struct {
	mu       sync.Mutex
	progress []toolmw.Progress
	logs     []toolmw.LogLine
	asked    []toolmw.Elicitation
	sampled  []toolmw.SampleRequest
}

func (r *recorder) Progress(_ context.Context, p toolmw.Progress) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, p)
	return nil
}

func (r *recorder) Log(_ context.Context, l toolmw.LogLine) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, l)
	return nil
}

func (r *recorder) Elicit(_ context.Context, q toolmw.Elicitation) (toolmw.ElicitResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, q)
	return toolmw.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
}

func (r *recorder) Sample(_ context.Context, q toolmw.SampleRequest) (toolmw.SampleResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sampled = append(r.sampled, q)
	return toolmw.SampleResult{Role: "assistant", Text: "a haiku", Model: "m"}, nil
}

// remoteSessionServer is a server whose tool "long" reports progress, logs, asks
// the user and samples, and answers what it got.
func remoteSessionServer(secret string) *sdk.Server {
	srv := newServer()
	srv.AddTool(&sdk.Tool{Name: "long", InputSchema: anyObject}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		ss := req.Session
		if tok := req.Params.GetProgressToken(); tok != nil {
			for i := 1; i <= 3; i++ {
				if err := ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: "step " + secret}); err != nil {
					return nil, err
				}
			}
		}
		if err := ss.Log(ctx, &sdk.LoggingMessageParams{Level: "info", Logger: "long", Data: map[string]any{"key": secret}}); err != nil {
			return nil, err
		}
		answer := "none"
		if el, err := ss.Elicit(ctx, &sdk.ElicitParams{Message: "your name?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}); err == nil {
			answer = el.Action
			if name, ok := el.Content["name"].(string); ok {
				answer += " " + name
			}
		}
		sampled := "none"
		if cm, err := ss.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 50, Messages: []*sdk.SamplingMessage{
			{Role: "user", Content: &sdk.TextContent{Text: "write a haiku"}}}}); err == nil {
			if tc, ok := cm.Content.(*sdk.TextContent); ok {
				sampled = tc.Text
			}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: answer + "; " + sampled}}}, nil
	})
	return srv
}

func TestRemoteSessionRelayed(t *testing.T) {
	secret := canary.Values()[0]
	cs := serveHTTP(t, remoteSessionServer(secret), toolmcp.ClientOptions(nil))
	if err := cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	box := remoteBox(t, cs)
	rec := &recorder{}
	res, err := box.Call(toolmw.WithSession(context.Background(), rec), "long", nil)
	if err != nil || res.Content != "accept Ada; a haiku" {
		t.Fatalf("got %+v, %v", res, err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	// The elicitation is handled after the notifications the server sent
	// before it: they have all been relayed.
	if len(rec.progress) != 3 || rec.progress[2].Progress != 3 || rec.progress[2].Total != 3 {
		t.Fatalf("progress %+v", rec.progress)
	}
	if len(rec.logs) != 1 || rec.logs[0].Level != "info" || rec.logs[0].Logger != "long" {
		t.Fatalf("logs %+v", rec.logs)
	}
	if len(rec.asked) != 1 || rec.asked[0].Message != "your name?" || !json.Valid(rec.asked[0].Schema) {
		t.Fatalf("asked %+v", rec.asked)
	}
	if len(rec.sampled) != 1 || rec.sampled[0].Messages[0].Text != "write a haiku" || rec.sampled[0].MaxTokens != 50 {
		t.Fatalf("sampled %+v", rec.sampled)
	}
	// What the server sent is scrubbed on its way to the caller's client.
	seen, _ := json.Marshal(struct {
		P []toolmw.Progress
		L []toolmw.LogLine
	}{rec.progress, rec.logs})
	if leaked := canary.Leaked(string(seen)); leaked != "" {
		t.Fatalf("%s leaked: %s", leaked, seen)
	}
}

// Without a Session, no progress token is sent, elicitation is declined
// and sampling refused.
func TestRemoteSessionNone(t *testing.T) {
	cs := serveHTTP(t, remoteSessionServer("s"), toolmcp.ClientOptions(nil))
	box := remoteBox(t, cs)
	res, err := box.Call(context.Background(), "long", nil)
	if err != nil || res.Content != "decline; none" {
		t.Fatalf("got %+v, %v", res, err)
	}
}

// Two calls in flight: what MCP does not tie to a call reaches neither.
func TestRemoteSessionAmbiguous(t *testing.T) {
	srv := remoteSessionServer("s")
	release := make(chan struct{})
	started := make(chan struct{})
	srv.AddTool(&sdk.Tool{Name: "wait", InputSchema: anyObject}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	})
	cs := serveHTTP(t, srv, toolmcp.ClientOptions(&sdk.ClientOptions{}))
	box := remoteBox(t, cs)
	other := &recorder{}
	done := make(chan error, 1)
	go func() {
		_, err := box.Call(toolmw.WithSession(context.Background(), other), "wait", nil)
		done <- err
	}()
	<-started
	rec := &recorder{}
	res, err := box.Call(toolmw.WithSession(context.Background(), rec), "long", nil)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err != nil || res.Content != "decline; none" {
		t.Fatalf("got %+v, %v", res, err)
	}
	if len(rec.asked)+len(other.asked)+len(rec.sampled)+len(other.sampled)+len(other.progress) != 0 {
		t.Fatalf("relayed to a call: %+v %+v", rec, other)
	}
}

func TestClientOptionsKeepsHandlers(t *testing.T) {
	var asked bool
	opts := toolmcp.ClientOptions(&sdk.ClientOptions{ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		asked = true
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}})
	res, err := opts.ElicitationHandler(context.Background(), &sdk.ElicitRequest{Params: &sdk.ElicitParams{Message: "q"}})
	if err != nil || !asked || res.Action != "cancel" {
		t.Fatalf("got %+v, %v", res, err)
	}
	if _, err := toolmcp.ClientOptions(nil).CreateMessageHandler(context.Background(), &sdk.CreateMessageRequest{Params: &sdk.CreateMessageParams{}}); err == nil {
		t.Fatal("a sampling request no call takes was answered")
	}
}
