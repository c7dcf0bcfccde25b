package schema

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolmw/toolmw/taxonomy"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// golden renders a corpus type for every profile: each section is the
// profile's name and the indented schema, or the error's code and message.
func golden(s *Schema) string {
	var b strings.Builder
	for _, p := range Profiles() {
		b.WriteString("# " + p.String() + "\n")
		out, err := s.Render(p)
		if err != nil {
			info := taxonomy.InfoOf(err)
			b.WriteString("error " + info.Code + ": " + info.Message + "\n\n")
			continue
		}
		if out == nil {
			b.WriteString("no parameters (the declaration leaves them out)\n\n")
			continue
		}
		var ind bytes.Buffer
		if err := json.Indent(&ind, out, "", "  "); err != nil {
			panic(err)
		}
		b.Write(ind.Bytes())
		b.WriteString("\n\n")
	}
	return b.String()
}

// TestGolden pins every profile's rendering of the corpus; regenerate with
// go test ./schema -update and review the diff.
func TestGolden(t *testing.T) {
	if len(corpus) < 30 {
		t.Fatalf("the corpus has %d types, want at least 30", len(corpus))
	}
	for _, c := range corpus {
		t.Run(c.name, func(t *testing.T) {
			got := golden(Of(c.typ))
			path := filepath.Join("testdata", c.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./schema -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the rendering; run go test ./schema -update and review the diff:\n%s", path, got)
			}
		})
	}
}

// TestMetaschema validates every rendering against the 2020-12 metaschema
// (the one santhosh-tekuri/jsonschema ships).
func TestMetaschema(t *testing.T) {
	c := jsonschema.NewCompiler()
	meta, err := c.Compile("https://json-schema.org/draft/2020-12/schema")
	if err != nil {
		t.Fatal(err)
	}
	rendered := 0
	for _, c := range corpus {
		for _, p := range Profiles() {
			out, err := Of(c.typ).Render(p)
			if err != nil || out == nil {
				continue
			}
			rendered++
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			if err := meta.Validate(doc); err != nil {
				t.Errorf("%s %s: not a valid 2020-12 schema: %v", c.name, p, err)
			}
		}
	}
	t.Logf("%d renderings validated", rendered)
}

// TestStrictRules checks the OpenAI-strict renderings with rules written
// from strict mode's documentation, apart from Check: every object closed
// and fully required, every value typed, only documented keywords and
// formats.
func TestStrictRules(t *testing.T) {
	allowed := map[string]bool{"type": true, "properties": true, "required": true, "additionalProperties": true,
		"items": true, "enum": true, "const": true, "anyOf": true, "$ref": true, "$defs": true, "description": true,
		"title": true, "pattern": true, "format": true, "minimum": true, "maximum": true, "exclusiveMinimum": true,
		"exclusiveMaximum": true, "multipleOf": true, "minItems": true, "maxItems": true}
	formats := map[string]bool{"date-time": true, "time": true, "date": true, "duration": true, "email": true,
		"hostname": true, "ipv4": true, "ipv6": true, "uuid": true}
	var walk func(t *testing.T, v map[string]any, at string)
	walk = func(t *testing.T, v map[string]any, at string) {
		for k := range v {
			if !allowed[k] {
				t.Errorf("%s: keyword %s", at, k)
			}
		}
		if f, ok := v["format"].(string); ok && !formats[f] {
			t.Errorf("%s: format %s", at, f)
		}
		if v["type"] == nil && v["anyOf"] == nil && v["$ref"] == nil {
			t.Errorf("%s: untyped", at)
		}
		if props, ok := v["properties"].(map[string]any); ok || isObjectType(v["type"]) {
			if v["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties is not false", at)
			}
			req := map[string]bool{}
			for _, r := range v["required"].([]any) {
				req[r.(string)] = true
			}
			for name, sub := range props {
				if !req[name] {
					t.Errorf("%s: %s not required", at, name)
				}
				walk(t, sub.(map[string]any), at+"/properties/"+name)
			}
		}
		if items, ok := v["items"].(map[string]any); ok {
			walk(t, items, at+"/items")
		}
		if alts, ok := v["anyOf"].([]any); ok {
			for i, alt := range alts {
				walk(t, alt.(map[string]any), at+"/anyOf/"+itoa(i))
			}
		}
		if defs, ok := v["$defs"].(map[string]any); ok {
			for name, d := range defs {
				walk(t, d.(map[string]any), at+"/$defs/"+name)
			}
		}
	}
	for _, c := range corpus {
		out, err := Of(c.typ).Render(OpenAIStrict)
		if err != nil {
			if taxonomy.InfoOf(err).Code != taxonomy.CodeSchemaNotStrict {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatal(err)
		}
		if v["type"] != "object" {
			t.Errorf("%s: root is not an object", c.name)
		}
		walk(t, v, c.name)
	}
}

func isObjectType(t any) bool {
	switch x := t.(type) {
	case string:
		return x == "object"
	case []any:
		for _, e := range x {
			if e == "object" {
				return true
			}
		}
	}
	return false
}

// TestGeminiNoRefs checks that no Gemini rendering refers to anything.
func TestGeminiNoRefs(t *testing.T) {
	for _, c := range corpus {
		out, err := Of(c.typ).Render(Gemini)
		if err != nil {
			continue
		}
		if bytes.Contains(out, []byte(`"$ref"`)) || bytes.Contains(out, []byte(`"$defs"`)) {
			t.Errorf("%s: %s", c.name, out)
		}
	}
}
