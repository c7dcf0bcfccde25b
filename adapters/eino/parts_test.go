package eino_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/toolmw/toolmw"
	tooleino "github.com/toolmw/toolmw/adapters/eino"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/turn"
)

var (
	pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	pdfBytes = []byte("%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n")
)

// chartBox is a box with one tool whose result has parts: text, an image,
// a PDF and audio.
func chartBox(t testing.TB) *toolmw.Toolbox {
	t.Helper()
	box := toolmw.NewToolbox(middleware.Default().Middleware())
	if err := box.Register(toolmw.Spec{Name: "chart"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Parts(
			toolmw.TextPart("Sales <Q1>"),
			toolmw.ImagePart(pngBytes, "image/png"),
			toolmw.FilePart("report.pdf", "application/pdf", pdfBytes),
			toolmw.AudioPart([]byte("RIFF"), "audio/wav"),
		), nil
	}); err != nil {
		t.Fatal(err)
	}
	return box
}

// TestMultimodalResult: under WithMultimodal the box's tools are enhanced
// tools, and a result's image and PDF reach the model as image and file
// parts of the tool message, its text enveloped, its audio described.
func TestMultimodalResult(t *testing.T) {
	m := newScripted(calls("c1", "chart", `{}`), say("A chart."))
	if err := runAgent(t, context.Background(), chartBox(t), m, tooleino.WithMultimodal(turn.MediaLimits{})); err != nil {
		t.Fatal(err)
	}
	msg := toolMessages(m.last())["c1"]
	parts := msg.UserInputMultiContent
	if len(parts) != 4 {
		t.Fatalf("the tool message has %d parts, want 4: %+v", len(parts), msg)
	}
	if _, content := envelope(t, parts[0].Text); parts[0].Type != schema.ChatMessagePartTypeText || content != "Sales <Q1>" {
		t.Errorf("part 0: %+v", parts[0])
	}
	if p := parts[1]; p.Type != schema.ChatMessagePartTypeImageURL || p.Image == nil || p.Image.MIMEType != "image/png" ||
		p.Image.Base64Data == nil || *p.Image.Base64Data != base64.StdEncoding.EncodeToString(pngBytes) {
		t.Errorf("part 1 is not the image: %+v", p)
	}
	if p := parts[2]; p.Type != schema.ChatMessagePartTypeFileURL || p.File == nil || p.File.MIMEType != "application/pdf" ||
		p.File.Base64Data == nil || *p.File.Base64Data != base64.StdEncoding.EncodeToString(pdfBytes) {
		t.Errorf("part 2 is not the PDF: %+v", p)
	}
	if _, content := envelope(t, parts[3].Text); parts[3].Type != schema.ChatMessagePartTypeText || !strings.Contains(content, "audio/wav") {
		t.Errorf("part 3 is not the audio's descriptor: %+v", parts[3])
	}
}

// TestMultimodalBounds: an image past WithMultimodal's bounds is described,
// not sent.
func TestMultimodalBounds(t *testing.T) {
	m := newScripted(calls("c1", "chart", `{}`), say("A chart."))
	limits := turn.MediaLimits{Image: 8, Document: 1 << 20, Total: 1 << 20}
	if err := runAgent(t, context.Background(), chartBox(t), m, tooleino.WithMultimodal(limits)); err != nil {
		t.Fatal(err)
	}
	parts := toolMessages(m.last())["c1"].UserInputMultiContent
	if len(parts) != 4 || parts[1].Type != schema.ChatMessagePartTypeText || !strings.Contains(parts[1].Text, "image/png") {
		t.Fatalf("the oversized image went as %+v, want its descriptor", parts)
	}
	if parts[2].Type != schema.ChatMessagePartTypeFileURL {
		t.Fatalf("the PDF within bounds went as %+v", parts[2])
	}
}

// TestTextResultByDefault: without WithMultimodal a result with parts is
// text: toolmw.ForModel's, the media described.
func TestTextResultByDefault(t *testing.T) {
	m := newScripted(calls("c1", "chart", `{}`), say("A chart."))
	if err := runAgent(t, context.Background(), chartBox(t), m); err != nil {
		t.Fatal(err)
	}
	msg := toolMessages(m.last())["c1"]
	res, _ := chartBox(t).Call(context.Background(), "chart", json.RawMessage(`{}`))
	if want := toolmw.ForModel(res, nil); msg.Content != want || len(msg.UserInputMultiContent) != 0 {
		t.Fatalf("the tool message %+v, want the text %q", msg, want)
	}
}

// TestOwnEnhancedTool: the user's own enhanced tool under the stack: its
// image comes back an image part, its text enveloped; a failure is one
// enveloped text part.
func TestOwnEnhancedTool(t *testing.T) {
	img := base64.StdEncoding.EncodeToString(pngBytes)
	snap, err := utils.InferEnhancedTool("snapshot", "Takes a snapshot.", func(ctx context.Context, in booking) (*schema.ToolResult, error) {
		return &schema.ToolResult{Parts: []schema.ToolOutputPart{
			{Type: schema.ToolPartTypeText, Text: "snapshot of " + in.Booking},
			{Type: schema.ToolPartTypeImage, Image: &schema.ToolOutputImage{MessagePartCommon: schema.MessagePartCommon{Base64Data: &img, MIMEType: "image/png"}}},
		}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m := newScripted(calls("c1", "snapshot", `{"booking":"BK-1"}`, "c2", "snapshot", `{}`), say("ok"))
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "a", Description: "d", Model: m,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{snap}}},
		Middlewares: []adk.AgentMiddleware{{WrapToolCall: mustMiddleware(t, middleware.Default().Middleware(),
			tooleino.WithSpecs(toolmw.Spec{Name: "snapshot", InputSchema: json.RawMessage(`{"type":"object","properties":{"booking":{"type":"string"}},"required":["booking"]}`)}))}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := eventErr(drainEvents(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "go"))); err != nil {
		t.Fatal(err)
	}
	results := toolMessages(m.last())
	parts := results["c1"].UserInputMultiContent
	if len(parts) != 2 || parts[1].Image == nil || *parts[1].Image.Base64Data != img {
		t.Fatalf("the snapshot went as %+v", parts)
	}
	if _, content := envelope(t, parts[0].Text); content != "snapshot of BK-1" {
		t.Fatalf("its text went as %q", parts[0].Text)
	}
	// The spec's schema refused the call without a booking, typed.
	bad := results["c2"].UserInputMultiContent
	if len(bad) != 1 || !strings.Contains(bad[0].Text, "tool-args-invalid") {
		t.Fatalf("the call without a booking went as %+v", bad)
	}
}
