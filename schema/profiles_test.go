package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/toolmw/toolmw/internal/jsonarg"
	"github.com/toolmw/toolmw/taxonomy"
)

// Tree is recursive behind a pointer: Typed(func(ctx, *Tree)) takes it.
type Tree struct {
	Value    int     `json:"value"`
	Children []*Tree `json:"children,omitempty"`
	Left     *Tree   `json:"left"`
}

// A recursive struct behind a pointer at the root renders as an object in
// every profile (it was a bare $ref, schema_not_object, in plain, OpenAI
// and Anthropic), and its plain rendering accepts what the decoder does.
func TestRecursivePointerRoot(t *testing.T) {
	s := Of(reflect.TypeFor[*Tree]())
	for _, p := range Profiles() {
		out, err := s.Render(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var root map[string]any
		if err := json.Unmarshal(out, &root); err != nil || root["type"] != "object" {
			t.Fatalf("%s: %s", p, out)
		}
	}
	v, err := Compile(s.MustRender(Plain))
	if err != nil {
		t.Fatal(err)
	}
	model := jsonarg.For(reflect.TypeFor[*Tree]())
	for _, doc := range []string{
		`{"value":1,"left":null}`,
		`{"value":1,"left":{"value":2,"left":null,"children":[{"value":3,"left":null}]}}`,
		`{"value":1}`,
		`{"value":1,"left":{"value":"x","left":null}}`,
		`null`,
		`{"value":1,"left":null,"other":1}`,
	} {
		decErr := model.DecodeValue([]byte(doc), reflect.New(reflect.TypeFor[*Tree]()).Elem(), 0)
		valErr := v.Validate([]byte(doc), 0)
		if (decErr == nil) != (valErr == nil) {
			t.Errorf("%s: decoder %v, schema %v", doc, decErr, valErr)
		}
	}
}

// Gemini's function declarations are OpenAPI Schema objects, which have no
// "$schema" field; a root $schema (every MCP server made with the
// TypeScript SDK sends one) is accepted by Check, as OpenAI strict and
// Anthropic accept it, and dropped by Adapt.
func TestGeminiRootSchemaKeyword(t *testing.T) {
	doc := json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	if err := Check(doc, Gemini); err != nil {
		t.Fatal(err)
	}
	out, err := Adapt(doc, Gemini)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "$schema") {
		t.Fatalf("%s", out)
	}
	if string(out) != `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}` {
		t.Fatalf("%s", out)
	}
	// Only at the root.
	nested := json.RawMessage(`{"type":"object","properties":{"city":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"string"}}}`)
	wantCode(t, Check(nested, Gemini), taxonomy.CodeSchemaKeywordUnsupported)
	// Other profiles keep what they are given.
	for _, p := range []Profile{Plain, Anthropic} {
		out, err := Adapt(doc, p)
		if err != nil || string(out) != string(doc) {
			t.Fatalf("%s: %s %v", p, out, err)
		}
	}
}

// Vertex AI's FunctionDeclaration.parameters: "Parameter names must start
// with a letter or an underscore and must only contain chars a-z, A-Z,
// 0-9, or underscores with a maximum length of 64."
func TestGeminiParameterNames(t *testing.T) {
	doc := func(name string) json.RawMessage {
		b, _ := json.Marshal(name)
		return json.RawMessage(`{"type":"object","properties":{` + string(b) + `:{"type":"string"}}}`)
	}
	for _, bad := range []string{"first-name", "a.b", "1st", "名前", "a b", "", strings.Repeat("a", 65), "$x"} {
		err := Check(doc(bad), Gemini)
		wantCode(t, err, taxonomy.CodeSchemaNameUnsupported)
		if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("the message quotes the name: %v", err)
		}
	}
	for _, good := range []string{"first_name", "_x", "A1", "x", strings.Repeat("a", 64)} {
		if err := Check(doc(good), Gemini); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	// Other profiles have no such rule.
	for _, p := range []Profile{Plain, Anthropic} {
		if err := Check(doc("first-name"), p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	// A Typed input whose field names break the rule cannot be offered.
	type dashed struct {
		First string `json:"first-name"`
	}
	_, err := For[dashed]().Render(Gemini)
	wantCode(t, err, taxonomy.CodeSchemaNameUnsupported)
}

// Gemini's Schema.enum: "Possible values of the element of Type.STRING
// with enum format" (a list of strings): an integer enum is not accepted.
func TestGeminiEnumStringsOnly(t *testing.T) {
	for _, doc := range []string{
		`{"type":"object","properties":{"n":{"type":"integer","enum":[1,2,3]}}}`,
		`{"type":"object","properties":{"n":{"type":"string","enum":["a",2]}}}`,
		`{"type":"object","properties":{"n":{"enum":["a","b"]}}}`,
	} {
		wantCode(t, Check(json.RawMessage(doc), Gemini), taxonomy.CodeSchemaKeywordUnsupported)
	}
	if err := Check(json.RawMessage(`{"type":"object","properties":{"n":{"type":"string","format":"enum","enum":["a","b"]}}}`), Gemini); err != nil {
		t.Fatal(err)
	}
}

// Gemini rejects a function's parameters that are an object without
// properties ("parameters.properties: should be non-empty for OBJECT
// type"); a function without parameters leaves them unset ("For function
// with no parameters, this can be left unset"). Such an input is rendered
// and adapted as no schema at all.
func TestGeminiNoParameters(t *testing.T) {
	type none struct{}
	out, err := For[none]().Render(Gemini)
	if err != nil || out != nil {
		t.Fatalf("%s %v", out, err)
	}
	for _, doc := range []string{`{"type":"object"}`, `{"type":"object","properties":{}}`, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{}}`} {
		if err := Check(json.RawMessage(doc), Gemini); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		out, err := Adapt(json.RawMessage(doc), Gemini)
		if err != nil || out != nil {
			t.Fatalf("%s: %s %v", doc, out, err)
		}
	}
	// Other profiles show an object without properties.
	if out := For[none]().MustRender(OpenAIStrict); string(out) != `{"type":"object","properties":{},"additionalProperties":false,"required":[]}` {
		t.Fatalf("%s", out)
	}
}

// OpenAI's structured outputs: "In a schema, total string length of all
// property names, definition names, enum values, and const values cannot
// exceed 120,000 characters", and "For a single enum property with string
// values, the total string length of all enum values cannot exceed 15,000
// characters when there are more than 250 enum values." Both hold exactly
// at their boundaries.
func TestOpenAIStringLimits(t *testing.T) {
	// names: 120 properties whose names total n characters.
	names := func(n int) json.RawMessage {
		var props, req []string
		per := n / 120
		for i := range 120 {
			l := per
			if i == 0 {
				l += n - per*120
			}
			name := fmt.Sprintf("%03d", i) + strings.Repeat("n", l-3)
			props = append(props, `"`+name+`":{"type":"string"}`)
			req = append(req, `"`+name+`"`)
		}
		return json.RawMessage(`{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + strings.Join(req, ",") + `],"additionalProperties":false}`)
	}
	if err := Check(names(120_000), OpenAIStrict); err != nil {
		t.Fatalf("at 120,000: %v", err)
	}
	wantCode(t, Check(names(120_001), OpenAIStrict), taxonomy.CodeSchemaTooComplex)
	// Characters, not bytes: 60,001 two-byte characters are 60,001.
	wide := strings.Repeat("é", 60_001)
	if err := Check(json.RawMessage(`{"type":"object","properties":{"`+wide+`":{"type":"string"}},"required":["`+wide+`"],"additionalProperties":false}`), OpenAIStrict); err != nil {
		t.Fatalf("%v", err)
	}

	// enum: count values whose lengths total n.
	enum := func(count, n int) json.RawMessage {
		vals := make([]string, count)
		per := n / count
		for i := range vals {
			l := per
			if i == 0 {
				l += n - per*count
			}
			vals[i] = `"` + fmt.Sprintf("%04d", i) + strings.Repeat("x", l-4) + `"`
		}
		return json.RawMessage(`{"type":"object","properties":{"e":{"type":"string","enum":[` + strings.Join(vals, ",") + `]}},"required":["e"],"additionalProperties":false}`)
	}
	if err := Check(enum(251, 15_000), OpenAIStrict); err != nil {
		t.Fatalf("251 values, 15,000 characters: %v", err)
	}
	wantCode(t, Check(enum(251, 15_001), OpenAIStrict), taxonomy.CodeSchemaTooComplex)
	if err := Check(enum(250, 15_001), OpenAIStrict); err != nil {
		t.Fatalf("250 values are not limited: %v", err)
	}
	// Definition names and const values count towards the total.
	def := `{"type":"object","properties":{"a":{"$ref":"#/$defs/` + strings.Repeat("d", 60_000) + `"},"b":{"type":"string","const":"` + strings.Repeat("c", 59_998) + `"}},"required":["a","b"],"additionalProperties":false,"$defs":{"` + strings.Repeat("d", 60_000) + `":{"type":"string"}}}`
	if err := Check(json.RawMessage(def), OpenAIStrict); err != nil {
		t.Fatalf("%v", err)
	}
	wantCode(t, Check(json.RawMessage(strings.Replace(def, `"const":"c`, `"const":"cc`, 1)), OpenAIStrict), taxonomy.CodeSchemaTooComplex)
}

// Go's int, int64, uint and uint64 carry no ±2^63 bounds (JavaScript
// reads 9223372036854775807 as 9223372036854776000; they inform nothing
// and cost tokens in every definition): an unsigned integer keeps its
// minimum 0, narrower integers keep both bounds. The decoder still
// rejects what does not fit.
func TestWideIntegersCarryNoBounds(t *testing.T) {
	type ints struct {
		I   int    `json:"i"`
		I64 int64  `json:"i64"`
		U   uint   `json:"u"`
		U64 uint64 `json:"u64"`
		I32 int32  `json:"i32"`
		U8  uint8  `json:"u8"`
		F   float64
	}
	s := For[ints]()
	for _, p := range Profiles() {
		out := string(s.MustRender(p))
		for _, big := range []string{"9223372036854775807", "9223372036854775808", "18446744073709551615", "1.7976931348623157e+308"} {
			if strings.Contains(out, big) {
				t.Errorf("%s: %s in %s", p, big, out)
			}
		}
	}
	plain := string(s.MustRender(Plain))
	for _, want := range []string{
		`"i":{"type":"integer"}`, `"i64":{"type":"integer"}`,
		`"u":{"type":"integer","minimum":0}`, `"u64":{"type":"integer","minimum":0}`,
		`"i32":{"type":"integer","minimum":-2147483648,"maximum":2147483647}`,
		`"u8":{"type":"integer","minimum":0,"maximum":255}`, `"F":{"type":"number"}`,
	} {
		if !strings.Contains(plain, want) {
			t.Errorf("plain lacks %s: %s", want, plain)
		}
	}
	model := jsonarg.For(reflect.TypeFor[ints]())
	for _, doc := range []string{
		`{"i":9223372036854775808,"i64":0,"u":0,"u64":0,"i32":0,"u8":0,"F":0}`,
		`{"i":0,"i64":-9223372036854775809,"u":0,"u64":0,"i32":0,"u8":0,"F":0}`,
		`{"i":0,"i64":0,"u":18446744073709551616,"u64":0,"i32":0,"u8":0,"F":0}`,
		`{"i":0,"i64":0,"u":0,"u64":-1,"i32":0,"u8":0,"F":0}`,
	} {
		if err := model.DecodeValue([]byte(doc), reflect.New(reflect.TypeFor[ints]()).Elem(), 0); err == nil {
			t.Errorf("the decoder accepts %s", doc)
		}
	}
}

// Check's messages name the place by its JSON pointer and never quote a
// value of the schema: not a URL it refers to, not a format, not a
// pattern.
func TestCheckMessagesQuoteNoValue(t *testing.T) {
	const secret = "sk_live_51HxQ"
	for _, c := range []struct {
		doc string
		p   Profile
	}{
		{`{"type":"object","properties":{"a":{"$ref":"https://example.com/` + secret + `.json"}}}`, Plain},
		{`{"type":"object","properties":{"a":{"$ref":"#/$defs/` + secret + `"}}}`, Plain},
		{`{"type":"object","properties":{"a":{"type":"string","pattern":"(` + secret + `"}}}`, Plain},
		{`{"type":"object","properties":{"a":{"type":"string","format":"` + secret + `"}}}`, OpenAIStrict},
		{`{"type":"object","properties":{"a":{"type":"string","format":"` + secret + `"}}}`, Anthropic},
		{`{"type":"object","properties":{"a":{"type":"string","format":"` + secret + `"}}}`, Gemini},
		{`{"$schema":"https://example.com/` + secret + `","type":"object"}`, Plain},
		{`{"type":"object","properties":{"a":{"type":"` + secret + `"}}}`, Plain},
		{`{"type":"object","minimum":"` + secret + `"}`, Plain},
	} {
		err := Check(json.RawMessage(c.doc), c.p)
		if err == nil {
			t.Errorf("%s: accepted", c.doc)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "example.com") {
			t.Errorf("%s: %v", c.doc, err)
		}
		if _, err := Compile(json.RawMessage(c.doc)); err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("Compile %s: %v", c.doc, err)
		}
	}
}
