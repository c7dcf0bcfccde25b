package openai_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
	toolopenai "github.com/toolmw/toolmw/adapters/openai"
	"github.com/toolmw/toolmw/adapters/openai/internal/replay"
	"github.com/toolmw/toolmw/internal/testrig/partrig"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

var partCalls = []replay.ToolCall{
	{ID: "call_R1e2P3o4R5t6", Name: "report", Arguments: `{}`},
	{ID: "call_S1e2A3r4C5h6", Name: "search", Arguments: `{}`},
	{ID: "call_G1h2O3s4T5t6", Name: "ghost", Arguments: `{}`},
}

// TestResponsesParts: the real SDK sends a result with parts as a
// function_call_output whose output is a list: text and JSON as enveloped
// input_text, the PNG as an input_image data URL, the PDF as an input_file
// data URL with its name, the image and PDF URLs as they are, every other
// part as input_text holding ForModel's descriptor; a text result and a
// failure stay plain string outputs.
func TestResponsesParts(t *testing.T) {
	rp := replay.New("/v1/responses", replay.ResponseToolCalls(partCalls...), replay.ResponseAnswer("Done."))
	tools, err := toolopenai.New(partrig.Box(t))
	if err != nil {
		t.Fatal(err)
	}
	turns, _, err := responsesLoop(context.Background(), serve(t, rp), tools, "Report.")
	if err != nil {
		t.Fatal(err)
	}
	items := toolmwtest.DecodeJSON(t, rp.Requests()[1])["input"].([]any)
	if len(items) != len(partCalls) {
		t.Fatalf("%d input items, want %d", len(items), len(partCalls))
	}
	text := func(s string) map[string]any { return map[string]any{"type": "input_text", "text": s} }
	want := []any{
		text(toolmw.ForModel(toolmw.Text(partrig.Text), nil)),
		text(toolmw.ForModel(toolmw.Text(partrig.JSON), nil)),
		map[string]any{"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64," + base64.StdEncoding.EncodeToString(partrig.PNG)},
		map[string]any{"type": "input_file", "filename": "report.pdf", "file_data": "data:application/pdf;base64," + base64.StdEncoding.EncodeToString(partrig.PDF)},
		map[string]any{"type": "input_image", "detail": "auto", "image_url": partrig.ImageURL},
		map[string]any{"type": "input_file", "file_url": partrig.PDFURL},
	}
	for i := len(want); i < len(partrig.Report().AllParts()); i++ {
		want = append(want, text(partrig.Described(i)))
	}
	report := items[0].(map[string]any)
	if report["type"] != "function_call_output" || report["call_id"] != partCalls[0].ID {
		t.Errorf("item 0 = %v %v, want the report's function_call_output", report["type"], report["call_id"])
	}
	if !toolmwtest.SameJSON(t, report["output"], want) {
		t.Errorf("report output =\n%v\nwant\n%v", report["output"], want)
	}
	// A text result and a failure: the string output of today.
	for i := 1; i < len(partCalls); i++ {
		it := items[i].(map[string]any)
		if it["call_id"] != partCalls[i].ID || it["output"] != turns[0].Calls[i].Text {
			t.Errorf("item %d = %v, want call %s with output %q", i, it, partCalls[i].ID, turns[0].Calls[i].Text)
		}
	}
	if items[1].(map[string]any)["output"] != toolmw.ForModel(toolmw.Text("3 hits for <lisbon>"), nil) {
		t.Errorf("the text result went out as %v", items[1].(map[string]any)["output"])
	}
}

// TestChatParts: a Chat Completions tool message holds text only, so the
// result with parts goes out as ForModel's text, descriptors included.
func TestChatParts(t *testing.T) {
	rp := replay.New("/v1/chat/completions", replay.ChatToolCalls(partCalls[:2]...), replay.ChatAnswer("Done."))
	tools, err := toolopenai.New(partrig.Box(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := chatLoop(context.Background(), serve(t, rp), tools, "Report."); err != nil {
		t.Fatal(err)
	}
	msgs := toolmwtest.DecodeJSON(t, rp.Requests()[1])["messages"].([]any)
	got := msgs[2].(map[string]any)["content"]
	if got != toolmw.ForModel(partrig.Report(), nil) {
		t.Errorf("tool message = %v, want ForModel's text of the report", got)
	}
	if s, _ := got.(string); !strings.Contains(s, "[image: image/png, ") || !strings.Contains(s, "[file: q3/report.pdf, application/pdf, ") {
		t.Errorf("tool message %q lacks the image's and the PDF's descriptors", s)
	}
	if msgs[3].(map[string]any)["content"] != toolmw.ForModel(toolmw.Text("3 hits for <lisbon>"), nil) {
		t.Errorf("text tool message = %v", msgs[3])
	}
}

// TestFailedPartsWithheld: a call that failed is answered with its Text
// alone, whatever parts its Result holds: no canary in them reaches the
// wire.
func TestFailedPartsWithheld(t *testing.T) {
	for _, s := range canary.Secrets {
		res := toolmw.Parts(toolmw.TextPart(s.Value), toolmw.ImagePart(partrig.PNG, "image/png"),
			toolmw.FilePart(s.Value+".pdf", "application/pdf", partrig.PDF))
		turn := &toolopenai.Turn{Calls: []toolopenai.Answer{{CallID: "call_1", Result: res,
			Err: errors.New("boom"), Text: toolmw.ForModel(res, errors.New("boom"))}}}
		js, err := json.Marshal(turn.Items())
		if err != nil {
			t.Fatal(err)
		}
		if f := canary.Leaked(string(js)); f != "" {
			t.Errorf("%s leaked from a failed call's parts: %s", f, js)
		}
		var items []map[string]any
		_ = json.Unmarshal(js, &items)
		if _, ok := items[0]["output"].(string); !ok {
			t.Errorf("a failed call's output is %v, want its Text", items[0]["output"])
		}
	}
}
