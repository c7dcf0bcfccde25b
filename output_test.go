package toolmw_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

type booking struct {
	ID     string   `json:"id"`
	Seats  int      `json:"seats"`
	Note   *string  `json:"note,omitempty"`
	Guests []string `json:"guests"`
}

func bookTool() toolmw.Tool {
	return toolmw.Typed(func(_ context.Context, in struct {
		Flight string `json:"flight"`
	}) (booking, error) {
		return booking{ID: "B-" + in.Flight, Seats: 2, Guests: []string{"Ann"}}, nil
	})
}

// A Typed tool whose output type is a struct publishes its output schema
// in every profile's definitions, rendered from that type per profile.
func TestTypedOutputSchemaEveryProfile(t *testing.T) {
	b := toolmw.NewToolbox()
	if err := b.Register(toolmw.Spec{Name: "book"}, bookTool()); err != nil {
		t.Fatal(err)
	}
	out := schema.For[booking]()
	for _, p := range schema.Profiles() {
		defs, err := b.Definitions(p)
		if err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		want := out.MustRender(p)
		if got := defs[0].OutputSchema; string(got) != string(want) || len(got) == 0 {
			t.Errorf("%v: output schema %s, want %s", p, got, want)
		}
		again, _ := b.Definitions(p)
		if len(again[0].OutputSchema) == 0 || &again[0].OutputSchema[0] != &defs[0].OutputSchema[0] {
			t.Errorf("%v: the output schema is rendered again", p)
		}
	}
	spec := b.Specs()[0]
	if string(spec.OutputSchema) != string(out.MustRender(schema.Plain)) {
		t.Errorf("Spec.OutputSchema = %s, want the plain rendering", spec.OutputSchema)
	}
	d, _ := b.Definitions(schema.MCP)
	j, _ := json.Marshal(d[0])
	if !strings.Contains(string(j), `"outputSchema":{"$schema"`) {
		t.Errorf("the MCP definition leaves the output schema out: %s", j)
	}
}

// Only a JSON object type has an output schema: a struct, or a map with
// string keys, or a pointer to one, that does not encode itself.
func TestTypedOutputSchemaOnlyForObjects(t *testing.T) {
	cases := []struct {
		name string
		tool toolmw.Tool
		want bool
	}{
		{"struct", bookTool(), true},
		{"pointer to struct", toolmw.Typed(func(context.Context, struct{}) (*booking, error) { return &booking{}, nil }), true},
		{"map of strings", toolmw.Typed(func(context.Context, struct{}) (map[string]int, error) { return nil, nil }), true},
		{"map of ints", toolmw.Typed(func(context.Context, struct{}) (map[int]string, error) { return nil, nil }), false},
		{"string", toolmw.Typed(func(context.Context, struct{}) (string, error) { return "", nil }), false},
		{"number", toolmw.Typed(func(context.Context, struct{}) (float64, error) { return 0, nil }), false},
		{"slice", toolmw.Typed(func(context.Context, struct{}) ([]booking, error) { return nil, nil }), false},
		{"raw JSON", toolmw.Typed(func(context.Context, struct{}) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }), false},
		{"Result", toolmw.Typed(func(context.Context, struct{}) (toolmw.Result, error) { return toolmw.Text("ok"), nil }), false},
		{"encodes itself", toolmw.Typed(func(context.Context, struct{}) (time.Time, error) { return time.Time{}, nil }), false},
		{"any", toolmw.Typed(func(context.Context, struct{}) (any, error) { return nil, nil }), false},
	}
	for _, c := range cases {
		_, ok := toolmw.OutputSchemaOf(c.tool)
		b := toolmw.NewToolbox()
		if err := b.Register(toolmw.Spec{Name: "t"}, c.tool); err != nil {
			t.Fatal(err)
		}
		has := b.Specs()[0].OutputSchema != nil
		if ok != c.want || has != c.want {
			t.Errorf("%s: OutputSchemaOf ok = %v, Spec.OutputSchema set = %v; want %v", c.name, ok, has, c.want)
		}
	}
	if _, ok := toolmw.OutputSchemaOf(func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Result{}, nil }); ok {
		t.Error("OutputSchemaOf: a raw tool has an output schema")
	}
}

// A Typed tool's result stays the JSON text it was, byte for byte, and
// its structured value is available.
func TestTypedResultStructured(t *testing.T) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, bookTool())
	res, err := tool(context.Background(), json.RawMessage(`{"flight":"LX8"}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != `{"id":"B-LX8","seats":2,"guests":["Ann"]}` || !res.JSON || res.Parts() != nil {
		t.Fatalf("result %+v", res)
	}
	v, ok := res.Structured()
	want := map[string]any{"id": "B-LX8", "seats": 2.0, "guests": []any{"Ann"}}
	if !ok || !reflect.DeepEqual(v, want) {
		t.Fatalf("Structured() = %v, %v; want %v", v, ok, want)
	}
	part, _ := toolmw.JSONPart(map[string]int{"n": 1})
	if v, ok := toolmw.Parts(toolmw.TextPart("see"), part).Structured(); !ok || !reflect.DeepEqual(v, map[string]any{"n": 1.0}) {
		t.Fatalf("Structured() of a JSON part = %v, %v", v, ok)
	}
	if _, ok := toolmw.Text(`{"n":1}`).Structured(); ok {
		t.Fatal("a text result has a structured value")
	}
}

// A hand-set output schema wins over a Typed tool's, and is shown as
// given (Gemini: adapted); a profile that cannot express one shows none.
func TestHandSetOutputSchema(t *testing.T) {
	own := json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)
	b := toolmw.NewToolbox()
	if err := b.Register(toolmw.Spec{Name: "book", OutputSchema: own}, bookTool()); err != nil {
		t.Fatal(err)
	}
	refs := json.RawMessage(`{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"id":{"$ref":"#/$defs/s"}}}`)
	if err := b.Register(toolmw.Spec{Name: "raw", OutputSchema: refs}, toolmw.Typed(func(context.Context, struct{}) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	})); err != nil {
		t.Fatal(err)
	}
	for _, p := range schema.Profiles() {
		defs, err := b.Definitions(p)
		if err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		want, _ := schema.Adapt(own, p)
		if string(defs[0].OutputSchema) != string(want) {
			t.Errorf("%v: output schema %s, want %s", p, defs[0].OutputSchema, want)
		}
		// Gemini takes no $ref, OpenAI strict mode no optional property:
		// they show none.
		if want := refs; p == schema.Gemini || p == schema.OpenAIStrict {
			if defs[1].OutputSchema != nil {
				t.Errorf("%v: an output schema it cannot express is shown: %s", p, defs[1].OutputSchema)
			}
		} else if string(defs[1].OutputSchema) != string(want) {
			t.Errorf("%v: output schema %s, want it as given", p, defs[1].OutputSchema)
		}
	}
}

// A hand-set output schema is checked at Wrap as an input schema is; its
// errors name the output schema.
func TestHandSetOutputSchemaChecked(t *testing.T) {
	raw := func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("{}"), nil }
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 80) + `{}` + strings.Repeat(`}}`, 80)
	cases := []struct {
		name, schema, code string
	}{
		{"not JSON", `{"type":`, taxonomy.CodeSchemaInvalid},
		{"not a schema", `{"type":"objekt"}`, taxonomy.CodeSchemaInvalid},
		{"not an object", `{"type":"array"}`, taxonomy.CodeSchemaNotObject},
		{"outside reference", `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`, taxonomy.CodeSchemaInvalid},
		{"too costly", deep, taxonomy.CodeSchemaTooCostly},
	}
	for _, c := range cases {
		for _, tool := range []toolmw.Tool{raw, bookTool()} {
			_, err := toolmw.Wrap(toolmw.Spec{Name: "book", OutputSchema: json.RawMessage(c.schema)}, tool)
			info := taxonomy.InfoOf(err)
			if info.Kind != taxonomy.KindDefinitionInvalid || info.Code != c.code || info.Tool != "book" {
				t.Errorf("%s: Wrap = %v, want book: tool-definition-invalid/%s", c.name, err, c.code)
			}
			if strings.Contains(info.Message, "input") {
				t.Errorf("%s: the message speaks of the input: %q", c.name, info.Message)
			}
		}
	}
}
