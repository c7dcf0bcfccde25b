package anthropic_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
	"github.com/toolmw/toolmw/internal/testrig/partrig"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// TestPartsWire: the real SDK sends a result with parts as a tool_result
// of content blocks: text and JSON as enveloped text blocks, the PNG as a
// base64 image, the PDF as a base64 document titled with its name, the
// image and PDF URLs as URL sources, the plain-text file as an enveloped
// text document, every other part as a text block holding ForModel's
// descriptor; a text result and a failure keep today's one text block.
func TestPartsWire(t *testing.T) {
	uses := []replay.ToolUse{
		{ID: "toolu_R1e2P3o4R5t6", Name: "report", Input: `{}`},
		{ID: "toolu_S1e2A3r4C5h6", Name: "search", Input: `{}`},
		{ID: "toolu_G1h2O3s4T5t6", Name: "ghost", Input: `{}`},
	}
	rp := replay.New("/v1/messages", replay.ToolUses("Let me look.", uses...), replay.Answer("Done."))
	tools, err := toolanthropic.New(partrig.Box(t))
	if err != nil {
		t.Fatal(err)
	}
	turns, _, err := loop(context.Background(), serve(t, rp), tools, "Report.")
	if err != nil {
		t.Fatal(err)
	}
	msgs := toolmwtest.DecodeJSON(t, rp.Requests()[1])["messages"].([]any)
	results := msgs[2].(map[string]any)["content"].([]any)
	if len(results) != len(uses) {
		t.Fatalf("%d tool_result blocks, want %d", len(results), len(uses))
	}
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	b64 := base64.StdEncoding.EncodeToString
	want := []any{
		text(toolmw.ForModel(toolmw.Text(partrig.Text), nil)),
		text(toolmw.ForModel(toolmw.Text(partrig.JSON), nil)),
		map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": b64(partrig.PNG)}},
		map[string]any{"type": "document", "title": "report.pdf", "source": map[string]any{"type": "base64", "media_type": "application/pdf", "data": b64(partrig.PDF)}},
		map[string]any{"type": "image", "source": map[string]any{"type": "url", "url": partrig.ImageURL}},
		map[string]any{"type": "document", "title": "q3.pdf", "source": map[string]any{"type": "url", "url": partrig.PDFURL}},
	}
	parts := partrig.Report().AllParts()
	for i := len(want); i < len(parts)-1; i++ {
		want = append(want, text(partrig.Described(i)))
	}
	want = append(want, map[string]any{"type": "document", "title": "notes.txt", "source": map[string]any{
		"type": "text", "media_type": "text/plain", "data": toolmw.ForModel(toolmw.Text(string(parts[len(parts)-1].Data)), nil)}})
	report := results[0].(map[string]any)
	if report["type"] != "tool_result" || report["tool_use_id"] != uses[0].ID || report["is_error"] != false {
		t.Errorf("block 0 = %v %v is_error %v, want the report's tool_result, not an error", report["type"], report["tool_use_id"], report["is_error"])
	}
	if !toolmwtest.SameJSON(t, report["content"], want) {
		t.Errorf("report content =\n%v\nwant\n%v", report["content"], want)
	}
	// A text result and a failure: today's one text block.
	for i := 1; i < len(uses); i++ {
		b := results[i].(map[string]any)
		if b["tool_use_id"] != uses[i].ID || resultText(t, b) != turns[0].Calls[i].Text || b["is_error"] != (i == 2) {
			t.Errorf("block %d = %v, want %s with %q", i, b, uses[i].ID, turns[0].Calls[i].Text)
		}
	}
	if resultText(t, results[1].(map[string]any)) != toolmw.ForModel(toolmw.Text("3 hits for <lisbon>"), nil) {
		t.Errorf("the text result went out as %v", results[1])
	}
}

// TestFailedPartsWithheld: a call that failed is answered with its Text
// alone, whatever parts its Result holds: no canary in them reaches the
// wire.
func TestFailedPartsWithheld(t *testing.T) {
	for _, s := range canary.Secrets {
		res := toolmw.Parts(toolmw.TextPart(s.Value), toolmw.ImagePart(partrig.PNG, "image/png"),
			toolmw.FilePart(s.Value+".pdf", "application/pdf", partrig.PDF))
		turn := &toolanthropic.Turn{Calls: []toolanthropic.Answer{{ToolUseID: "toolu_1", Result: res,
			Err: errors.New("boom"), Text: toolmw.ForModel(res, errors.New("boom"))}}}
		js, err := json.Marshal(turn.Blocks())
		if err != nil {
			t.Fatal(err)
		}
		if f := canary.Leaked(string(js)); f != "" {
			t.Errorf("%s leaked from a failed call's parts: %s", f, js)
		}
		var blocks []map[string]any
		_ = json.Unmarshal(js, &blocks)
		if got := resultText(t, blocks[0]); got != turn.Calls[0].Text || blocks[0]["is_error"] != true {
			t.Errorf("a failed call's tool_result is %v, want its Text as an error", blocks[0])
		}
	}
}
