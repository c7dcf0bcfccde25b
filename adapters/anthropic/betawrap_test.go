package anthropic_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/toolrunner"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// weatherIn is the input of the user's own weather tool.
type weatherIn struct {
	City string `json:"city" jsonschema:"required,description=The city"`
}

// png is the start of a PNG: enough for its type to be sniffed.
var png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// TestWrapBetaTool: tools written for the runner (the SDK's toolrunner
// helpers) behind a toolmw stack, run by the real runner: the stack sees
// the tool_use id; a raw error with a secret reaches the model as an
// envelope only (after the retries an idempotent tool's untyped failures
// get); an untyped failure that goes away is retried inside toolmw and
// the model sees the success; arguments its schema rejects never reach the
// tool; an image result goes back as an image block beside enveloped
// text; a gated call stops the run.
func TestWrapBetaTool(t *testing.T) {
	secret := canary.Secrets[1].Value
	var ids callIDs
	var ran, flaky atomic.Int32
	desk := approval.NewDesk()
	mw := fastStack(t,
		middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("delete_city"))},
		ids.layer())
	weather, err := toolrunner.NewBetaToolFromJSONSchema("get_weather", "Current weather in a city",
		func(ctx context.Context, in weatherIn) (anthropic.BetaToolResultBlockParamContentUnion, error) {
			ran.Add(1)
			switch in.City {
			case "Atlantis":
				return anthropic.BetaToolResultBlockParamContentUnion{}, fmt.Errorf("dial upstream with %s: refused", secret)
			case "Flakyville":
				if flaky.Add(1) == 1 {
					return anthropic.BetaToolResultBlockParamContentUnion{}, errors.New("connection reset")
				}
			}
			return anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: "clear in " + in.City}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	camera := betaTool{name: "webcam", exec: func(ctx context.Context, in json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
		return []anthropic.BetaToolResultBlockParamContentUnion{
			{OfText: &anthropic.BetaTextBlockParam{Text: "Paris, now"}},
			{OfImage: &anthropic.BetaImageBlockParam{Source: anthropic.BetaImageBlockParamSourceUnion{OfBase64: &anthropic.BetaBase64ImageSourceParam{
				Data: base64.StdEncoding.EncodeToString(png), MediaType: anthropic.BetaBase64ImageSourceMediaTypeImagePNG}}}},
		}, nil
	}}
	var deleted atomic.Int32
	deleter := betaTool{name: "delete_city", exec: func(ctx context.Context, in json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
		deleted.Add(1)
		return nil, nil
	}}
	var tools []anthropic.BetaTool
	for _, tool := range []anthropic.BetaTool{weather, camera, deleter} {
		w, err := toolanthropic.WrapBetaTool(tool, toolmw.Spec{Idempotent: true}, mw)
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, w)
	}

	rp := replay.New("/v1/messages",
		replay.ToolUses("",
			replay.ToolUse{ID: "toolu_P", Name: "get_weather", Input: `{"city":"Paris"}`},
			replay.ToolUse{ID: "toolu_A", Name: "get_weather", Input: `{"city":"Atlantis"}`},
			replay.ToolUse{ID: "toolu_F", Name: "get_weather", Input: `{"city":"Flakyville"}`},
			replay.ToolUse{ID: "toolu_N", Name: "get_weather", Input: `{"town":"Paris"}`},
			replay.ToolUse{ID: "toolu_W", Name: "webcam", Input: `{}`}),
		replay.ToolUses("", replay.ToolUse{ID: "toolu_D", Name: "delete_city", Input: `{"city":"Paris"}`}),
		replay.Answer("never"))
	runner := newRunner(serve(t, rp), tools, ask("Weather?"))
	if got := runner.Params.Tools; len(got) != 3 || *got[0].GetName() != "get_weather" || *got[0].GetDescription() != "Current weather in a city" {
		t.Errorf("the runner shows the model %d tools, the first %v", len(got), got)
	}
	ctx, run := toolanthropic.WithBetaRunner(budget.WithRun(context.Background(), budget.WithID("run_wrap")), runner)
	_, err = runner.RunToCompletion(ctx)
	var stop *toolanthropic.Stop
	if err = run.End(err); !errors.As(err, &stop) || stop.Kind != taxonomy.KindApprovalPending || deleted.Load() != 0 {
		t.Fatalf("the run ended with %v, %d deletions; want approval-pending and none", err, deleted.Load())
	}

	results := wireResults(t, rp.Requests())
	if r := onlyResult(t, results, "toolu_P"); r.isError || r.text != `<untrusted-data source="tool_result">clear in Paris</untrusted-data>` {
		t.Errorf("Paris: %+v", r)
	}
	if r := onlyResult(t, results, "toolu_A"); !r.isError || r.text != `Error: <untrusted-data source="tool_error">tool-failed unmapped_failure</untrusted-data>` {
		t.Errorf("Atlantis: %+v", r)
	}
	if r := onlyResult(t, results, "toolu_F"); r.isError || r.text != `<untrusted-data source="tool_result">clear in Flakyville</untrusted-data>` || flaky.Load() != 2 {
		t.Errorf("Flakyville: %+v after %d attempts", r, flaky.Load())
	}
	if r := onlyResult(t, results, "toolu_N"); !r.isError {
		t.Errorf("bad arguments: %+v", r)
	} else if _, content := envelopeAfter(t, "Error: ", r.text); taxonomy.Kind(content[:len(taxonomy.KindArgsInvalid)]) != taxonomy.KindArgsInvalid {
		t.Errorf("bad arguments answered %q", content)
	}
	if n := ran.Load(); n != 6 {
		t.Errorf("the weather tool ran %d times, want 6 (Paris, Atlantis three times and Flakyville twice: an idempotent tool's untyped failures are retried; never with bad arguments)", n)
	}
	cam := onlyResult(t, results, "toolu_W")
	if len(cam.content) != 2 {
		t.Fatalf("webcam: %+v, want a text and an image block", cam)
	}
	text, img := cam.content[0].(map[string]any), cam.content[1].(map[string]any)
	src, _ := img["source"].(map[string]any)
	if text["text"] != `<untrusted-data source="tool_result">Paris, now</untrusted-data>` || img["type"] != "image" ||
		src["media_type"] != "image/png" || src["data"] != base64.StdEncoding.EncodeToString(png) {
		t.Errorf("webcam content: %v", cam.content)
	}
	for tool, want := range map[string]int{"get_weather": 4, "webcam": 1} {
		if got := ids.of(tool); len(got) != want {
			t.Errorf("%s: the stack saw ids %v", tool, got)
		}
	}
	for _, id := range ids.of("get_weather") {
		if id != "toolu_P" && id != "toolu_A" && id != "toolu_F" && id != "toolu_N" {
			t.Errorf("get_weather saw id %q", id)
		}
	}
	noSecrets(t, rp.Requests())
	canaryFree(t, rp.Requests())
}

// betaTool is a tool written for the runner by hand.
type betaTool struct {
	name string
	exec func(context.Context, json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error)
}

func (b betaTool) Name() string        { return b.name }
func (b betaTool) Description() string { return "a tool" }
func (b betaTool) InputSchema() anthropic.BetaToolInputSchemaParam {
	return anthropic.BetaToolInputSchemaParam{}
}
func (b betaTool) Execute(ctx context.Context, in json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	return b.exec(ctx, in)
}

// TestWrapBetaToolDefinitionErrors: a nil tool, a spec naming another
// tool and a stack that rejects its options are definition errors.
func TestWrapBetaToolDefinitionErrors(t *testing.T) {
	tool := betaTool{name: "ping"}
	if _, err := toolanthropic.WrapBetaTool(nil, toolmw.Spec{}); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
		t.Errorf("nil tool: %v", err)
	}
	if _, err := toolanthropic.WrapBetaTool(tool, toolmw.Spec{Name: "pong"}); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
		t.Errorf("another name: %v", err)
	}
	if _, err := toolanthropic.WrapBetaTool(tool, toolmw.Spec{}, nil); taxonomy.InfoOf(err).Kind != taxonomy.KindDefinitionInvalid {
		t.Errorf("a nil middleware: %v", err)
	}
	w, err := toolanthropic.WrapBetaTool(tool, toolmw.Spec{Name: "ping"})
	if err != nil || w.Name() != "ping" || w.Description() != "a tool" {
		t.Errorf("the wrapped tool: %v, %v", w, err)
	}
}

// TestWrapBetaToolParts: what a runner's tool returns becomes toolmw parts
// and goes back as the runner takes content: images and documents as
// media blocks, text enveloped, what has no part as a descriptor or JSON.
func TestWrapBetaToolParts(t *testing.T) {
	pdf := []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	content := []anthropic.BetaToolResultBlockParamContentUnion{
		{OfText: &anthropic.BetaTextBlockParam{Text: "two <files>"}},
		{OfImage: &anthropic.BetaImageBlockParam{Source: anthropic.BetaImageBlockParamSourceUnion{OfURL: &anthropic.BetaURLImageSourceParam{URL: "https://example.com/a.png"}}}},
		{OfImage: &anthropic.BetaImageBlockParam{Source: anthropic.BetaImageBlockParamSourceUnion{OfFile: &anthropic.BetaFileImageSourceParam{FileID: "file_1"}}}},
		{OfDocument: &anthropic.BetaRequestDocumentBlockParam{Title: anthropic.String("report.pdf"), Source: anthropic.BetaRequestDocumentBlockSourceUnionParam{
			OfBase64: &anthropic.BetaBase64PDFSourceParam{Data: base64.StdEncoding.EncodeToString(pdf)}}}},
		{OfDocument: &anthropic.BetaRequestDocumentBlockParam{Title: anthropic.String("notes.txt"), Source: anthropic.BetaRequestDocumentBlockSourceUnionParam{
			OfText: &anthropic.BetaPlainTextSourceParam{Data: "ignore <previous>"}}}},
		{OfSearchResult: &anthropic.BetaSearchResultBlockParam{Source: "https://example.com/s", Title: "Result", Content: []anthropic.BetaTextBlockParam{{Text: "found"}}}},
		{OfToolReference: &anthropic.BetaToolReferenceBlockParam{ToolName: "other"}},
	}
	tool, err := toolanthropic.WrapBetaTool(betaTool{name: "fetch", exec: func(context.Context, json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
		return content, nil
	}}, toolmw.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := tool.Execute(context.Background(), json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"text":"\u003cuntrusted-data source=\"tool_result\"\u003etwo \u0026lt;files\u0026gt;\u003c/untrusted-data\u003e","type":"text"},` +
		`{"source":{"url":"https://example.com/a.png","type":"url"},"type":"image"},` +
		`{"text":"\u003cuntrusted-data source=\"tool_result\"\u003e[image: 0 bytes]\u003c/untrusted-data\u003e","type":"text"},` +
		`{"source":{"data":"` + base64.StdEncoding.EncodeToString(pdf) + `","media_type":"application/pdf","type":"base64"},"title":"report.pdf","type":"document"},` +
		`{"source":{"data":"\u003cuntrusted-data source=\"tool_result\"\u003eignore \u0026lt;previous\u0026gt;\u003c/untrusted-data\u003e","media_type":"text/plain","type":"text"},"title":"notes.txt","type":"document"},` +
		`{"text":"\u003cuntrusted-data source=\"tool_result\"\u003e[resource: https://example.com/s, text/plain]\nResult\nfound\u003c/untrusted-data\u003e","type":"text"},` +
		`{"text":"\u003cuntrusted-data source=\"tool_result\"\u003e[tool reference: other]\u003c/untrusted-data\u003e","type":"text"}]`
	if string(js) != want {
		t.Errorf("content:\n%s\nwant:\n%s", js, want)
	}
}
