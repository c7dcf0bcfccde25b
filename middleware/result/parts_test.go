package result_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/result"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// run wraps a tool returning res under spec and the layer, calls it, and
// returns the code of its error ("" for success, when the result must
// come back untouched).
func run(t *testing.T, spec toolmw.Spec, res toolmw.Result, opts ...result.Option) (string, error) {
	t.Helper()
	spec.Name = "shoot"
	tool := toolmw.MustWrap(spec, toolmwtest.Returning(res, nil), result.New(opts...))
	got, err := tool(context.Background(), nil)
	if err == nil {
		if !reflect.DeepEqual(got, res) {
			t.Fatalf("the result was changed: %+v", got)
		}
		return "", nil
	}
	te, ok := taxonomy.From(err)
	if !ok || te.Tool() != "shoot" || te.Retryable() {
		t.Fatalf("err = %v, want a permanent typed error of shoot", err)
	}
	if !reflect.DeepEqual(got, toolmw.Result{}) {
		t.Fatal("an invalid result was passed on")
	}
	if te.Kind() != taxonomy.KindResultInvalid && te.Kind() != taxonomy.KindTimeout {
		t.Fatalf("err = %v, want tool-result-invalid", err)
	}
	return te.Code(), err
}

func image(n int, mimeType string) toolmw.Part {
	return toolmw.ImagePart(make([]byte, n), mimeType)
}

// A 50 MiB image is refused by default, with result_too_large.
func TestFiftyMiBImageRefused(t *testing.T) {
	code, err := run(t, toolmw.Spec{}, toolmw.Parts(toolmw.TextPart("the screen"), image(50<<20, "image/png")))
	if code != taxonomy.CodeResultTooLarge {
		t.Fatalf("50 MiB image: %v, want result_too_large", err)
	}
}

func TestPartCaps(t *testing.T) {
	mib := 1 << 20
	tests := []struct {
		name string
		res  toolmw.Result
		opts []result.Option
		want string
	}{
		{"a 2 MiB image passes by default", toolmw.Parts(image(2*mib, "image/png")), nil, ""},
		{"an image at the part cap", toolmw.Parts(image(result.DefaultMaxPartBytes-len("image/png"), "image/png")), nil, ""},
		{"an image over the part cap", toolmw.Parts(image(result.DefaultMaxPartBytes-len("image/png")+1, "image/png")), nil, taxonomy.CodeResultTooLarge},
		{"images at the binary cap", toolmw.Parts(image(16*mib-9, "image/png"), image(16*mib-9, "image/png")), nil, ""},
		{"images over the binary cap", toolmw.Parts(image(11*mib, "image/png"), image(11*mib, "image/png"), image(11*mib, "image/png")), nil, taxonomy.CodeResultTooLarge},
		{"text parts at the text cap", toolmw.Parts(toolmw.TextPart(strings.Repeat("a", mib/2)), toolmw.TextPart(strings.Repeat("a", mib/2))), nil, ""},
		{"text parts over the text cap", toolmw.Parts(toolmw.TextPart(strings.Repeat("a", mib/2)), toolmw.TextPart(strings.Repeat("a", mib/2+1))), nil, taxonomy.CodeResultTooLarge},
		{"an image's bytes leave the text cap alone", toolmw.Parts(toolmw.TextPart(strings.Repeat("a", mib-9)), image(mib, "image/png")), nil, ""},
		{"content beside parts counts", toolmw.Result{Content: strings.Repeat("a", mib)}.WithParts([]toolmw.Part{toolmw.TextPart("a")}...), nil, taxonomy.CodeResultTooLarge},
		{"WithMaxBytes counts binary data", toolmw.Parts(image(2*mib, "image/png")), []result.Option{result.WithMaxBytes(mib)}, taxonomy.CodeResultTooLarge},
		{"WithMaxBytes raises the cap", toolmw.Parts(image(10*mib, "image/png"), image(10*mib, "image/png"), image(10*mib, "image/png"), image(10*mib, "image/png")), []result.Option{result.WithMaxBytes(64 * mib)}, ""},
		{"WithMaxPartBytes", toolmw.Parts(image(100, "image/png")), []result.Option{result.WithMaxPartBytes(108)}, taxonomy.CodeResultTooLarge},
		{"WithMaxPartBytes, at the cap", toolmw.Parts(image(100, "image/png")), []result.Option{result.WithMaxPartBytes(109)}, ""},
		{"WithMaxPartBytes counts text parts", toolmw.Parts(toolmw.TextPart("123456")), []result.Option{result.WithMaxPartBytes(5)}, taxonomy.CodeResultTooLarge},
		{"WithMaxPartBytes leaves a text result alone", toolmw.Text("123456"), []result.Option{result.WithMaxPartBytes(5)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, err := run(t, toolmw.Spec{}, tt.res, tt.opts...); code != tt.want {
				t.Fatalf("got %v, want code %q", err, tt.want)
			}
		})
	}
}

func TestPartChecks(t *testing.T) {
	long := "image/png; x=" + strings.Repeat("a", 250)
	tests := []struct {
		name string
		res  toolmw.Result
		opts []result.Option
		want string
	}{
		{"every default type", toolmw.Parts(image(4, "image/png"), image(4, "image/jpeg"), image(4, "image/gif"), image(4, "image/webp"),
			toolmw.AudioPart([]byte("RIFF"), "audio/wav"), toolmw.AudioPart([]byte("ID3"), "audio/mpeg"), toolmw.AudioPart([]byte("OggS"), "audio/ogg"),
			toolmw.FilePart("a.pdf", "application/pdf", []byte("%PDF")), toolmw.FilePart("a.csv", "text/csv", []byte("a,b")),
			toolmw.FilePart("a.json", "application/json", []byte("{}")), toolmw.BlobResourcePart("file:///a.txt", "text/plain", []byte("a"))), nil, ""},
		{"case and parameters", toolmw.Parts(toolmw.FilePart("a.txt", "Text/Plain; charset=utf-8", []byte("a")), image(4, "IMAGE/PNG")), nil, ""},
		{"a disallowed image type", toolmw.Parts(image(4, "image/svg+xml")), nil, taxonomy.CodeResultPartInvalid},
		{"a disallowed file type", toolmw.Parts(toolmw.FilePart("a.exe", "application/x-msdownload", []byte("MZ"))), nil, taxonomy.CodeResultPartInvalid},
		{"a disallowed blob", toolmw.Parts(toolmw.BlobResourcePart("file:///a", "application/octet-stream", []byte{0})), nil, taxonomy.CodeResultPartInvalid},
		{"an image without a type", toolmw.Parts(image(4, "")), nil, taxonomy.CodeResultPartInvalid},
		{"a malformed type", toolmw.Parts(image(4, "image/png;;")), nil, taxonomy.CodeResultPartInvalid},
		{"a type too long", toolmw.Parts(image(4, long)), nil, taxonomy.CodeResultPartInvalid},
		{"an image by URI is checked too", toolmw.Parts(toolmw.Part{Kind: toolmw.PartImage, URI: "https://example.com/a.svg", MIMEType: "image/svg+xml"}), nil, taxonomy.CodeResultPartInvalid},
		{"a link's type is not checked", toolmw.Parts(toolmw.ResourceLinkPart("file:///a.bin", "a.bin", "application/octet-stream")), nil, ""},
		{"a text resource's type is not checked", toolmw.Parts(toolmw.ResourcePart("file:///a.x", "application/x-foo", "hello")), nil, ""},
		{"WithMIMETypes allows", toolmw.Parts(image(4, "image/svg+xml")), []result.Option{result.WithMIMETypes("image/*")}, ""},
		{"WithMIMETypes replaces the defaults", toolmw.Parts(image(4, "image/png")), []result.Option{result.WithMIMETypes("image/jpeg")}, taxonomy.CodeResultPartInvalid},
		{"WithMIMETypes any", toolmw.Parts(toolmw.BlobResourcePart("file:///a", "application/octet-stream", []byte{0})), []result.Option{result.WithMIMETypes("*/*")}, ""},
		{"WithMIMETypes none", toolmw.Parts(image(4, "image/png")), []result.Option{result.WithMIMETypes()}, taxonomy.CodeResultPartInvalid},
		{"WithMIMETypes none leaves text alone", toolmw.Parts(toolmw.TextPart("a")), []result.Option{result.WithMIMETypes()}, ""},
		{"an unknown kind", toolmw.Parts(toolmw.Part{Kind: "video", Data: []byte{0}, MIMEType: "video/mp4"}), nil, taxonomy.CodeResultPartInvalid},
		{"an empty kind", toolmw.Parts(toolmw.Part{Text: "a"}), nil, taxonomy.CodeResultPartInvalid},
		{"a text part not UTF-8", toolmw.Parts(toolmw.TextPart("ok \xff")), nil, taxonomy.CodeResultNotUTF8},
		{"a name not UTF-8", toolmw.Parts(toolmw.FilePart("a\xff.pdf", "application/pdf", nil)), nil, taxonomy.CodeResultNotUTF8},
		{"a URI not UTF-8", toolmw.Parts(toolmw.ResourceLinkPart("file:///\xff", "a", "")), nil, taxonomy.CodeResultNotUTF8},
		{"a resource's text not UTF-8", toolmw.Parts(toolmw.ResourcePart("file:///a", "text/plain", "\xed\xa0\x80")), nil, taxonomy.CodeResultNotUTF8},
		{"content beside parts not UTF-8", toolmw.Result{Content: "\xff"}.WithParts([]toolmw.Part{toolmw.TextPart("a")}...), nil, taxonomy.CodeResultNotUTF8},
		{"image bytes need not be UTF-8", toolmw.Parts(toolmw.ImagePart([]byte{0xff, 0xfe}, "image/png")), nil, ""},
		{"a JSON part", toolmw.Parts(toolmw.Part{Kind: toolmw.PartJSON, Text: `{"n":1}`}), nil, ""},
		{"a broken JSON part", toolmw.Parts(toolmw.Part{Kind: toolmw.PartJSON, Text: `{"n":1`}), nil, taxonomy.CodeResultNotJSON},
		{"an empty JSON part", toolmw.Parts(toolmw.Part{Kind: toolmw.PartJSON}), nil, taxonomy.CodeResultNotJSON},
		{"JSON content beside parts", toolmw.Result{Content: `{"n":`, JSON: true}.WithParts([]toolmw.Part{toolmw.TextPart("a")}...), nil, taxonomy.CodeResultNotJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, err := run(t, toolmw.Spec{}, tt.res, tt.opts...); code != tt.want {
				t.Fatalf("got %v, want code %q", err, tt.want)
			}
		})
	}
}

// A result whose spec declares JSON: a text result must be JSON, as
// before; a result of parts alone is held to it by its JSON parts.
func TestPartsDeclaredJSON(t *testing.T) {
	spec := toolmw.Spec{ResultJSON: true}
	if code, err := run(t, spec, toolmw.Parts(toolmw.TextPart("see the image"), image(4, "image/png"))); code != "" {
		t.Fatalf("parts under ResultJSON: %v", err)
	}
	if code, _ := run(t, spec, toolmw.Result{Content: "not JSON"}.WithParts([]toolmw.Part{image(4, "image/png")}...)); code != taxonomy.CodeResultNotJSON {
		t.Fatalf("content beside parts under ResultJSON: %q, want result_not_json", code)
	}
}

// The errors name a part by its index (as AllParts counts), never by what
// it holds: not its MIME type, name, URI or text.
func TestPartErrorsHoldNothingOfThePart(t *testing.T) {
	for _, secret := range canary.Values() {
		for _, p := range []toolmw.Part{
			{Kind: toolmw.PartImage, Data: []byte(secret), MIMEType: "image/" + secret},
			{Kind: toolmw.PartKind(secret), Text: secret},
			toolmw.FilePart(secret+"\xff", "application/pdf", []byte(secret)),
			{Kind: toolmw.PartJSON, Text: `{"k":"` + secret + `"`},
		} {
			_, err := run(t, toolmw.Spec{}, toolmw.Result{Content: "head"}.WithParts([]toolmw.Part{toolmw.TextPart("a"), p}...))
			if err == nil {
				t.Fatalf("%s: passed", p.Describe())
			}
			if fam := canary.Leaked(fmt.Sprintf("%v %+v", err, taxonomy.InfoOf(err))); fam != "" {
				t.Fatalf("the error shows a %s canary: %v", fam, err)
			}
			if msg := err.Error(); !strings.Contains(msg, "part 2 ") && !strings.Contains(msg, "UTF-8") {
				t.Errorf("the error does not name part 2: %v", err)
			}
		}
	}
}

func TestPartOptionsValidate(t *testing.T) {
	for _, opt := range []result.Option{
		result.WithMaxPartBytes(-1),
		result.WithMIMETypes("image"),
		result.WithMIMETypes("*/png"),
		result.WithMIMETypes("image/png; charset=x"),
		result.WithMIMETypes("image/"),
		result.WithMIMETypes("image/png", ""),
	} {
		err := result.Validate(opt)
		if te, ok := taxonomy.From(err); !ok || te.Kind() != taxonomy.KindDefinitionInvalid || te.Code() != taxonomy.CodeOptionInvalid {
			t.Errorf("Validate = %v, want option_invalid", err)
		}
		_, err = toolmw.Wrap(toolmw.Spec{Name: "shoot"}, toolmwtest.OK, result.New(opt))
		if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeOptionInvalid || info.Tool != "shoot" {
			t.Errorf("Wrap = %v, want shoot: option_invalid", err)
		}
	}
	if err := result.Validate(result.WithMaxPartBytes(0), result.WithMaxPartBytes(5), result.WithMIMETypes(), result.WithMIMETypes("Image/*", "*/*", "application/vnd.ms-excel")); err != nil {
		t.Fatal(err)
	}
	// The default list is a copy.
	d := result.DefaultMIMETypes()
	d[0] = "*/*"
	if result.DefaultMIMETypes()[0] != "image/png" {
		t.Fatal("DefaultMIMETypes returns a shared slice")
	}
	// 0 means the default part cap.
	if code, err := run(t, toolmw.Spec{}, toolmw.Parts(image(result.DefaultMaxPartBytes, "image/png")), result.WithMaxPartBytes(5), result.WithMaxPartBytes(0)); code != taxonomy.CodeResultTooLarge {
		t.Fatalf("WithMaxPartBytes(0), over the default: %v", err)
	}
}

type ticket struct {
	ID    string `json:"id"`
	Seats int    `json:"seats"`
}

var ticketSchema = json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","pattern":"^T-"},"seats":{"type":"integer","minimum":1}},"required":["id","seats"]}`)

// Results are checked against the tool's output schema: its JSON content,
// and every JSON part.
func TestOutputSchema(t *testing.T) {
	jsonPart := func(s string) toolmw.Part { return toolmw.Part{Kind: toolmw.PartJSON, Text: s} }
	tests := []struct {
		name string
		res  toolmw.Result
		want string
	}{
		{"a JSON result that matches", toolmw.Result{Content: `{"id":"T-1","seats":2}`, JSON: true}, ""},
		{"a JSON result that does not", toolmw.Result{Content: `{"id":"X-1","seats":0}`, JSON: true}, taxonomy.CodeResultSchemaMismatch},
		{"a field missing", toolmw.Result{Content: `{"id":"T-1"}`, JSON: true}, taxonomy.CodeResultSchemaMismatch},
		{"not an object", toolmw.Result{Content: `[1]`, JSON: true}, taxonomy.CodeResultSchemaMismatch},
		{"null", toolmw.Result{Content: `null`, JSON: true}, taxonomy.CodeResultSchemaMismatch},
		{"a JSON part that matches", toolmw.Parts(toolmw.TextPart("booked"), jsonPart(`{"id":"T-1","seats":2}`)), ""},
		{"a JSON part that does not", toolmw.Parts(toolmw.TextPart("booked"), jsonPart(`{"id":"T-1","seats":"2"}`)), taxonomy.CodeResultSchemaMismatch},
		{"every JSON part", toolmw.Parts(jsonPart(`{"id":"T-1","seats":2}`), jsonPart(`{}`)), taxonomy.CodeResultSchemaMismatch},
		{"a text result: no structured output", toolmw.Text(`{"id":"T-1","seats":2}`), taxonomy.CodeResultSchemaMismatch},
		{"parts without JSON", toolmw.Parts(toolmw.TextPart("booked")), taxonomy.CodeResultSchemaMismatch},
		{"duplicate keys", toolmw.Result{Content: `{"id":"T-1","seats":2,"seats":0}`, JSON: true}, taxonomy.CodeResultSchemaMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, err := run(t, toolmw.Spec{OutputSchema: ticketSchema}, tt.res); code != tt.want {
				t.Fatalf("got %v, want code %q", err, tt.want)
			}
		})
	}
	// A spec that declares JSON results makes a text result structured.
	if code, err := run(t, toolmw.Spec{OutputSchema: ticketSchema, ResultJSON: true}, toolmw.Text(`{"id":"T-1","seats":2}`)); code != "" {
		t.Fatalf("ResultJSON: %v", err)
	}
	// Without an output schema nothing is checked.
	if code, err := run(t, toolmw.Spec{}, toolmw.Result{Content: `{"id":"X"}`, JSON: true}); code != "" {
		t.Fatal(err)
	}
}

// A result violating a hand-set output schema is refused with value-free
// field errors: no value and no key the schema does not declare.
func TestOutputSchemaErrorsHoldNoValue(t *testing.T) {
	for _, secret := range canary.Values() {
		doc, _ := json.Marshal(map[string]any{"id": secret, "seats": 0, secret: secret})
		_, err := run(t, toolmw.Spec{OutputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","pattern":"^T-"},"seats":{"type":"integer","minimum":1}},"additionalProperties":false}`)},
			toolmw.Result{Content: string(doc), JSON: true})
		info := taxonomy.InfoOf(err)
		if info.Code != taxonomy.CodeResultSchemaMismatch || len(info.Fields) != 3 {
			t.Fatalf("err = %v (%+v), want result_schema_mismatch with three field errors", err, info.Fields)
		}
		if fam := canary.Leaked(fmt.Sprintf("%v %+v", err, info)); fam != "" {
			t.Fatalf("the error shows a %s canary: %+v", fam, info)
		}
		want := map[string]bool{`[id]`: true, `[seats]`: true, `[*]`: true}
		for _, f := range info.Fields {
			if !want[fmt.Sprint(f.Loc)] {
				t.Errorf("field error at %v", f.Loc)
			}
		}
	}
}

// A Typed tool's output matches the schema Wrap renders from its type; a
// nil pointer is null, no object, and is refused.
func TestOutputSchemaTyped(t *testing.T) {
	give := &ticket{ID: "T-1", Seats: 2}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, toolmw.Typed(func(context.Context, struct{}) (*ticket, error) {
		return give, nil
	}), result.New())
	res, err := tool(context.Background(), nil)
	if err != nil || res.Content != `{"id":"T-1","seats":2}` || !res.JSON {
		t.Fatalf("got %+v, %v", res, err)
	}
	give = nil
	_, err = tool(context.Background(), nil)
	if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeResultSchemaMismatch {
		t.Fatalf("a nil output: %v, want result_schema_mismatch", err)
	}
}

// Checking a result against the output schema is bounded as validating
// arguments is: past the step budget, the result is refused.
func TestOutputSchemaBounded(t *testing.T) {
	// A two-way anyOf whose alternatives both recurse into "a": a
	// document nested n deep is checked against 2^n schemas.
	const doubling = `{"type":"object","$defs":{"n":{"anyOf":[
		{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}},
		{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"required":["a"]}]}},
		"properties":{"a":{"$ref":"#/$defs/n"}}}`
	doc := strings.Repeat(`{"a":`, 24) + `1` + strings.Repeat(`}`, 24)
	code, err := run(t, toolmw.Spec{OutputSchema: json.RawMessage(doubling)}, toolmw.Result{Content: doc, JSON: true})
	if code != taxonomy.CodeResultSchemaMismatch || !strings.Contains(err.Error(), "step budget") {
		t.Fatalf("got %v, want result_schema_mismatch past the step budget", err)
	}
}

// A call whose deadline has passed is not checked: the layer returns a
// timeout, as argument validation does.
func TestOutputSchemaContext(t *testing.T) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book", OutputSchema: ticketSchema},
		toolmwtest.Returning(toolmw.Result{Content: `{"id":"T-1","seats":2}`, JSON: true}, nil), result.New())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tool(ctx, nil); err != context.Canceled {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}
}

func TestOutputSchemaDeadline(t *testing.T) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book", OutputSchema: ticketSchema},
		toolmwtest.Returning(toolmw.Result{Content: `{"id":"T-1","seats":2}`, JSON: true}, nil), result.New())
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel()
	_, err := tool(ctx, nil)
	info := taxonomy.InfoOf(err)
	if info.Kind != taxonomy.KindTimeout || info.Code != taxonomy.CodeDeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) || strings.Contains(info.Message, "argument") {
		t.Fatalf("past its deadline: %v, want tool-timeout/deadline_exceeded about the result", err)
	}
}
