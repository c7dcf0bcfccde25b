package toolmw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

type weatherArgs struct {
	City string `json:"city" jsonschema:"City name"`
	Unit string `json:"unit,omitempty" enum:"c,f"`
}

func weather() toolmw.Tool {
	return toolmw.Typed(func(ctx context.Context, a weatherArgs) (string, error) { return "sunny in " + a.City, nil })
}

func codeOf(err error) string { return taxonomy.InfoOf(err).Code }

// Wrap gives a Typed tool's spec the schema of its input, rendered once.
func TestWrapFillsInputSchema(t *testing.T) {
	box := toolmw.NewToolbox()
	if err := box.Register(toolmw.Spec{Name: "weather"}, weather()); err != nil {
		t.Fatal(err)
	}
	got := string(box.Specs()[0].InputSchema)
	want := string(schema.For[weatherArgs]().MustRender(schema.Plain))
	if got != want {
		t.Fatalf("InputSchema\n got %s\nwant %s", got, want)
	}
	if s, ok := toolmw.InputSchemaOf(weather()); !ok || s.Type().String() != "toolmw_test.weatherArgs" {
		t.Fatalf("InputSchemaOf: %v %v", s, ok)
	}
	if _, ok := toolmw.InputSchemaOf(func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Result{}, nil }); ok {
		t.Fatal("a raw tool has no input type")
	}
}

func TestWrapSchemaErrors(t *testing.T) {
	raw := func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ran"), nil }
	type tagged struct {
		N int `json:"n" enum:"one,two"`
	}
	type withMap struct {
		M map[string]int `json:"m"`
	}
	for _, tc := range []struct {
		name string
		spec toolmw.Spec
		tool toolmw.Tool
		code string
	}{
		{"not JSON", toolmw.Spec{Name: "t", InputSchema: json.RawMessage(`{`)}, raw, taxonomy.CodeSchemaInvalid},
		{"not a schema", toolmw.Spec{Name: "t", InputSchema: json.RawMessage(`{"type":"object","minimum":"x"}`)}, raw, taxonomy.CodeSchemaInvalid},
		{"not an object", toolmw.Spec{Name: "t", InputSchema: json.RawMessage(`{"type":"array"}`)}, raw, taxonomy.CodeSchemaNotObject},
		{"external ref", toolmw.Spec{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`)}, raw, taxonomy.CodeSchemaInvalid},
		{"explicit schema names no field", toolmw.Spec{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"town":{"type":"string"}}}`)}, weather(), taxonomy.CodeSchemaTypeMismatch},
		{"explicit schema does not require a required field", toolmw.Spec{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}, weather(), taxonomy.CodeSchemaTypeMismatch},
		{"bad enum tag", toolmw.Spec{Name: "t"}, toolmw.Typed(func(context.Context, tagged) (string, error) { return "", nil }), taxonomy.CodeSchemaTagInvalid},
		{"negative size cap", toolmw.Spec{Name: "t", MaxArgsBytes: -1}, raw, taxonomy.CodeOptionInvalid},
		{"map for OpenAI strict", toolmw.Spec{Name: "t", Profiles: []schema.Profile{schema.OpenAIStrict}}, toolmw.Typed(func(context.Context, withMap) (string, error) { return "", nil }), taxonomy.CodeSchemaNotStrict},
		{"ref for Gemini", toolmw.Spec{Name: "t", Profiles: []schema.Profile{schema.Gemini}, InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`)}, raw, taxonomy.CodeSchemaRefUnsupported},
		{"keyword for OpenAI strict", toolmw.Spec{Name: "t", Profiles: []schema.Profile{schema.OpenAIStrict}, InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","minLength":2}},"required":["a"],"additionalProperties":false}`)}, raw, taxonomy.CodeSchemaKeywordUnsupported},
		{"format for Anthropic", toolmw.Spec{Name: "t", Profiles: []schema.Profile{schema.Anthropic}, InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","format":"semver"}}}`)}, raw, taxonomy.CodeSchemaFormatUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := toolmw.Wrap(tc.spec, tc.tool)
			te, ok := taxonomy.From(err)
			if !ok || te.Kind() != taxonomy.KindDefinitionInvalid || te.Code() != tc.code {
				t.Fatalf("err = %v, want tool-definition-invalid %s", err, tc.code)
			}
		})
	}
	// What every profile accepts passes.
	if _, err := toolmw.Wrap(toolmw.Spec{Name: "w", Profiles: schema.Profiles()}, weather()); err != nil {
		t.Fatalf("weather on every profile: %v", err)
	}
}

// A hand-written schema checks every call before the tool runs, with
// value-free field errors.
func TestWrapValidatesArguments(t *testing.T) {
	ran := 0
	tool, err := toolmw.Wrap(toolmw.Spec{Name: "remote", InputSchema: json.RawMessage(`{
		"type":"object",
		"properties":{"email":{"type":"string","format":"email"},"n":{"type":"integer","maximum":5},"tags":{"type":"object","additionalProperties":{"type":"integer"}}},
		"required":["email"],"additionalProperties":false}`)},
		func(context.Context, json.RawMessage) (toolmw.Result, error) { ran++; return toolmw.Text("ok"), nil })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := tool(ctx, json.RawMessage(`{"email":"a@example.com","n":5}`)); err != nil || ran != 1 {
		t.Fatalf("valid call: %v (ran %d)", err, ran)
	}
	secret := canary.Secrets[0].Value
	_, err = tool(ctx, json.RawMessage(`{"email":"`+secret+`","n":"`+secret+`","`+secret+`":1,"tags":{"`+secret+`":"x"}}`))
	if ran != 1 {
		t.Fatal("the tool ran with invalid arguments")
	}
	want := []taxonomy.FieldError{
		{Type: "extra_forbidden", Loc: []any{"*"}, Msg: "Extra inputs are not permitted"},
		{Type: "format", Loc: []any{"email"}, Msg: "Input should be a valid email string"},
		{Type: "int_type", Loc: []any{"n"}, Msg: "Input should be a valid integer"},
		{Type: "int_type", Loc: []any{"tags", "*"}, Msg: "Input should be a valid integer"},
	}
	got := taxonomy.InfoOf(err).Fields
	if len(got) != len(want) {
		t.Fatalf("fields %+v, want %+v", got, want)
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g.Type == w.Type && g.Msg == w.Msg && equalLoc(g.Loc, w.Loc)
		}
		if !found {
			t.Errorf("missing %+v in %+v", w, got)
		}
	}
	js, _ := json.Marshal(taxonomy.InfoOf(err))
	if f, what := canary.Find(string(js) + err.Error() + toolmw.ForModel(toolmw.Result{}, err)); f != "" {
		t.Fatalf("%s leaked: %s", what, js)
	}
}

func equalLoc(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestArgsSizeCap(t *testing.T) {
	ctx := context.Background()
	big := json.RawMessage(`{"city":"` + strings.Repeat("x", toolmw.DefaultMaxArgsBytes) + `"}`)
	raw := func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ran"), nil }
	for name, tool := range map[string]toolmw.Tool{
		"typed alone":   weather(),
		"typed wrapped": toolmw.MustWrap(toolmw.Spec{Name: "w"}, weather()),
		"raw wrapped":   toolmw.MustWrap(toolmw.Spec{Name: "r"}, raw),
	} {
		if _, err := tool(ctx, big); codeOf(err) != taxonomy.CodeArgsTooLarge {
			t.Errorf("%s: %v, want args_too_large", name, err)
		}
	}
	roomy := toolmw.MustWrap(toolmw.Spec{Name: "w", MaxArgsBytes: 2 * toolmw.DefaultMaxArgsBytes}, weather())
	if _, err := roomy(ctx, big); err != nil {
		t.Fatalf("a spec's larger cap: %v", err)
	}
	tight := toolmw.MustWrap(toolmw.Spec{Name: "w", MaxArgsBytes: 16}, weather())
	if _, err := tight(ctx, json.RawMessage(`{"city":"Lisbon, Portugal"}`)); codeOf(err) != taxonomy.CodeArgsTooLarge {
		t.Fatalf("a spec's smaller cap: %v", err)
	}
}

func TestNilContext(t *testing.T) {
	for name, tool := range map[string]toolmw.Tool{"typed": weather(), "wrapped": toolmw.MustWrap(toolmw.Spec{Name: "w"}, weather())} {
		_, err := tool(nil, json.RawMessage(`{"city":"x"}`)) //nolint:staticcheck
		if te, ok := taxonomy.From(err); !ok || te.Code() != taxonomy.CodeContextNil {
			t.Errorf("%s: %v, want context_nil", name, err)
		}
	}
}

// An optional field accepts null (so a strict-mode model may send it), and
// an integer field any integral number.
func TestTypedNullAndIntegers(t *testing.T) {
	type args struct {
		Name  string `json:"name,omitempty"`
		Count int8   `json:"count"`
	}
	tool := toolmw.Typed(func(ctx context.Context, a args) (string, error) {
		return a.Name + ":" + string(rune('0'+a.Count)), nil
	})
	for in, want := range map[string]string{
		`{"name":null,"count":2}`: ":2", `{"count":2.0}`: ":2", `{"count":2e0}`: ":2", `{"count":-0}`: ":0",
	} {
		res, err := tool(context.Background(), json.RawMessage(in))
		if err != nil || res.Content != want {
			t.Errorf("%s: %v %v", in, res, err)
		}
	}
	if _, err := tool(context.Background(), json.RawMessage(`{"count":2.5}`)); err == nil {
		t.Error("2.5 accepted for an int")
	}
}

// TestSchemaCanaries plants secrets in argument values, object keys and
// map keys of calls that fail validation — of a Typed tool and of a tool
// with a hand-written schema — through middleware.Default with every sink
// on: a zerolog logger at DEBUG, an in-memory span exporter and an events
// sink. No sink, no error text, no InfoOf and no ForModel holds any piece
// of a secret.
func TestSchemaCanaries(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := zerolog.New(zerolog.SyncWriter(&logs))
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	var evs []events.Event
	em := events.NewEmitter(events.SinkFunc(func(e events.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() }))
	s, err := middleware.Default(
		middleware.WithLogger(logger),
		middleware.WithTracing(tracing.WithTracerProvider(tp)),
		middleware.WithRetry(retry.WithMaxAttempts(1)),
	).Replace(middleware.Events, em.Middleware())
	if err != nil {
		t.Fatal(err)
	}
	type args struct {
		City string         `json:"city"`
		Tags map[string]int `json:"tags"`
	}
	typed, err := s.Wrap(toolmw.Spec{Name: "typed"}, toolmw.Typed(func(context.Context, args) (string, error) { return "ok", nil }))
	if err != nil {
		t.Fatal(err)
	}
	remote, err := s.Wrap(toolmw.Spec{Name: "remote", InputSchema: schema.For[args]().MustRender(schema.Plain)},
		func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil })
	if err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	for _, sec := range canary.Secrets {
		v, _ := json.Marshal(sec.Value)
		for _, in := range []string{
			`{"city":1,"tags":{"a":` + string(v) + `}}`,                     // value of the wrong type
			`{"city":"c","tags":{},` + string(v) + `:1}`,                    // unknown key
			`{"city":"c","tags":{` + string(v) + `:"x"}}`,                   // map key, bad value
			`{"city":"c","tags":{` + string(v) + `:1,` + string(v) + `:2}}`, // duplicate map key
			`{"city":` + string(v) + `,"city":` + string(v) + `}`,           // duplicate field
			`{"city":"c","tags":[` + string(v) + `]}`,                       // wrong kind
			"{\"city\":\"\xff" + sec.Value + "\",\"tags\":{}}",              // invalid UTF-8
		} {
			for _, tool := range []toolmw.Tool{typed, remote} {
				res, err := tool(toolmw.WithCallID(context.Background(), "call-1"), json.RawMessage(in))
				if err == nil {
					t.Fatalf("%s accepted", in)
				}
				js, _ := json.Marshal(taxonomy.InfoOf(err))
				seen.WriteString(err.Error() + string(js) + toolmw.ForModel(res, err))
			}
		}
	}
	seen.WriteString(logs.String())
	for _, sp := range spans.GetSpans() {
		seen.WriteString(sp.Name + sp.Status.Description)
		for _, a := range sp.Attributes {
			seen.WriteString(a.Value.String())
		}
		for _, e := range sp.Events {
			for _, a := range e.Attributes {
				seen.WriteString(a.Value.String())
			}
		}
	}
	if err := em.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	for _, e := range evs {
		js, _ := json.Marshal(e)
		seen.WriteString(string(js))
	}
	n := len(evs)
	mu.Unlock()
	if n == 0 || len(spans.GetSpans()) == 0 || logs.Len() == 0 {
		t.Fatalf("a sink saw nothing: %d events, %d spans, %d bytes of logs", n, len(spans.GetSpans()), logs.Len())
	}
	if fam, what := canary.Find(seen.String()); fam != "" {
		t.Fatalf("the %s canary leaked (%q)", fam, what)
	}
}

// bombSchema is the schema of issue 27: 18 levels of
// anyOf [{$ref: next}, {$ref: next}] (1.2 KB); each call was validated for
// 0.7–2.4 s, past any deadline.
func bombSchema(levels int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","$ref":"#/$defs/d0","$defs":{`)
	for i := range levels {
		fmt.Fprintf(&b, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"string"}}}`, levels)
	return json.RawMessage(b.String())
}

// The bomb is refused at start-up, by Wrap and by Toolbox.Register: a
// tool-definition-invalid error with code schema_too_costly.
func TestWrapRefusesSchemaBomb(t *testing.T) {
	raw := func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ran"), nil }
	_, err := toolmw.Wrap(toolmw.Spec{Name: "bomb", InputSchema: bombSchema(18)}, raw)
	if te, ok := taxonomy.From(err); !ok || te.Code() != taxonomy.CodeSchemaTooCostly || te.Kind() != taxonomy.KindDefinitionInvalid || te.Tool() != "bomb" {
		t.Fatalf("%v", err)
	}
	if err := toolmw.NewToolbox().Register(toolmw.Spec{Name: "bomb", InputSchema: bombSchema(18)}, raw); codeOf(err) != taxonomy.CodeSchemaTooCostly {
		t.Fatalf("%v", err)
	}
}

// doubling passes every bound at start-up, but each level of the
// arguments doubles the work of validating them.
const doubling = `{"type":"object","$defs":{"n":{"anyOf":[
	{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}},
	{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"required":["a"]}]}},
	"properties":{"a":{"$ref":"#/$defs/n"}}}`

func nestedArgs(n int) json.RawMessage {
	return json.RawMessage(strings.Repeat(`{"a":`, n) + `1` + strings.Repeat(`}`, n))
}

// Arguments that would take too long to validate end the call, within a
// 100 ms deadline, with a typed error (args_too_costly: the steps are
// counted before the validator runs), and the tool does not run; 400
// concurrent callers each get the same, within their own budget.
func TestWrapBoundsValidationPerCall(t *testing.T) {
	var ran atomic.Int64
	tool, err := toolmw.Wrap(toolmw.Spec{Name: "deep", InputSchema: json.RawMessage(doubling)},
		func(context.Context, json.RawMessage) (toolmw.Result, error) {
			ran.Add(1)
			return toolmw.Text("ran"), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = tool(ctx, nestedArgs(40))
	if te, ok := taxonomy.From(err); !ok || (te.Code() != taxonomy.CodeArgsTooCostly && te.Code() != taxonomy.CodeDeadlineExceeded) {
		t.Fatalf("%v", err)
	}
	var wg sync.WaitGroup
	var costly atomic.Int64
	for range 400 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := tool(context.Background(), nestedArgs(40)); codeOf(err) == taxonomy.CodeArgsTooCostly {
				costly.Add(1)
			}
		}()
	}
	wg.Wait()
	if costly.Load() != 400 || ran.Load() != 0 {
		t.Fatalf("%d of 400 too costly; the tool ran %d times", costly.Load(), ran.Load())
	}
	if _, err := tool(context.Background(), json.RawMessage(`{"a":{"a":{}}}`)); err != nil || ran.Load() != 1 {
		t.Fatalf("%v", err)
	}
}

// Validation runs under the call's context: a call whose deadline has
// passed, or which was cancelled, ends typed (deadline_exceeded, matching
// context.DeadlineExceeded) or with the cancellation, and the tool does not
// run.
func TestWrapValidationUnderCallContext(t *testing.T) {
	ran := 0
	tool, err := toolmw.Wrap(toolmw.Spec{Name: "remote", InputSchema: json.RawMessage(doubling)},
		func(context.Context, json.RawMessage) (toolmw.Result, error) { ran++; return toolmw.Text("ran"), nil })
	if err != nil {
		t.Fatal(err)
	}
	past, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel()
	_, err = tool(past, nestedArgs(3))
	if codeOf(err) != taxonomy.CodeDeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v", err)
	}
	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := tool(cancelled, nestedArgs(3)); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	if ran != 0 {
		t.Fatalf("the tool ran %d times", ran)
	}
}

// tree is recursive behind a pointer.
type tree struct {
	Value int   `json:"value"`
	Left  *tree `json:"left"`
	Right *tree `json:"right,omitempty"`
}

// Typed(func(ctx, *tree)) wraps in every profile (it failed with
// schema_not_object in plain, OpenAI strict and Anthropic) and decodes a
// tree.
func TestTypedRecursivePointer(t *testing.T) {
	tool := toolmw.Typed(func(ctx context.Context, t *tree) (int, error) {
		sum := 0
		var walk func(*tree)
		walk = func(n *tree) {
			if n != nil {
				sum += n.Value
				walk(n.Left)
				walk(n.Right)
			}
		}
		walk(t)
		return sum, nil
	})
	wrapped, err := toolmw.Wrap(toolmw.Spec{Name: "tree", Profiles: schema.Profiles()}, tool)
	if err != nil {
		t.Fatal(err)
	}
	res, err := wrapped(context.Background(), json.RawMessage(`{"value":1,"left":{"value":2,"left":null},"right":{"value":3,"left":null}}`))
	if err != nil || res.Content != "6" {
		t.Fatalf("%+v %v", res, err)
	}
}
