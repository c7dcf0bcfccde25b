package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/toolmw/toolmw/taxonomy"
)

// Check reports why profile p's API would reject doc as a tool's input
// schema, as a tool-definition-invalid error, or nil. Every profile wants a
// valid JSON Schema (schema_invalid) of an object (schema_not_object); the
// others add their rules:
//
//   - OpenAIStrict: only strict mode's keywords (schema_keyword_unsupported)
//     and formats (schema_format_unsupported); on every object
//     additionalProperties false and every property required, and a type on
//     every value (schema_not_strict); at most 10 levels of nesting, 5000
//     properties, 1000 enum values, 120,000 characters of property names,
//     definition names, enum values and const values all told, and 15,000
//     characters in the values of one string enum of more than 250
//     (schema_too_complex).
//   - Anthropic: only its keywords and formats; minItems 0 or 1.
//   - Gemini: no $ref or $defs (schema_ref_unsupported); only its keywords;
//     one type per schema; its formats per type; enum only on strings, of
//     strings; parameter names (the root's properties) of a letter or
//     underscore, then letters, digits and underscores, at most 64
//     (schema_name_unsupported). A root object without properties is
//     accepted: Gemini declares it by leaving the parameters out ([Adapt]).
//
// Every profile accepts a $schema at the root. Every schema is first held
// to the bounds on the work a schema may cause (schema_too_costly; see
// MaxSchemaBytes and the rest). The message names the offending place by
// its JSON pointer in the schema, never by a value the schema holds (a URL,
// a format, a pattern). Check is safe for concurrent use.
func Check(doc json.RawMessage, p Profile) error {
	if !p.valid() {
		return definitionError(taxonomy.CodeOptionInvalid, "unknown schema profile")
	}
	root, err := load(doc)
	if err != nil {
		return err
	}
	if _, _, err := compile(context.Background(), root); err != nil {
		return err
	}
	if err := objectRoot(root); err != nil {
		return err
	}
	c := checker{profile: p}
	if err := c.schema(root, "", 0); err != nil {
		return err
	}
	if p == OpenAIStrict {
		if c.props > openAIMaxProperties {
			return definitionError(taxonomy.CodeSchemaTooComplex, "OpenAI strict mode allows at most "+itoa(openAIMaxProperties)+" properties in all")
		}
		if c.enums > openAIMaxEnumValues {
			return definitionError(taxonomy.CodeSchemaTooComplex, "OpenAI strict mode allows at most "+itoa(openAIMaxEnumValues)+" enum values in all")
		}
		if c.chars > openAIMaxChars {
			return definitionError(taxonomy.CodeSchemaTooComplex, "OpenAI strict mode allows at most "+itoa(openAIMaxChars)+
				" characters of property names, definition names, enum values and const values in all")
		}
	}
	return nil
}

// Adapt returns doc, a hand-written or remote input schema, as profile p's
// API is shown it, after checking that p's API accepts it ([Check]). Plain,
// OpenAIStrict and Anthropic take it as it is. Gemini takes it without a
// root $schema (an OpenAPI Schema object has no such field), and a root
// object without properties as nil: a function declaration without
// parameters, which is how Gemini declares a function that takes none
// (it rejects parameters of type object without properties). Adapt is
// safe for concurrent use; the result may share doc's bytes.
func Adapt(doc json.RawMessage, p Profile) (json.RawMessage, error) {
	if err := Check(doc, p); err != nil {
		return nil, err
	}
	if p != Gemini {
		return doc, nil
	}
	members, err := rootMembers(doc)
	if err != nil {
		return nil, err
	}
	out := doc
	for _, m := range members {
		if m.name == "$schema" {
			out = without(members, "$schema")
			break
		}
	}
	var root map[string]any
	if err := json.Unmarshal(out, &root); err != nil {
		return nil, definitionError(taxonomy.CodeSchemaInvalid, "the input schema is not a JSON document")
	}
	if noProperties(root) {
		return nil, nil
	}
	return out, nil
}

// without re-assembles an object from members, leaving out the one named
// name; the others keep their order and their bytes.
func without(members []member, name string) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, m := range members {
		if m.name == name {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		key, _ := json.Marshal(m.name)
		b.Write(key)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

type member struct {
	name  string
	value json.RawMessage
}

// rootMembers returns the members of the object doc, in order, their
// values as written.
func rootMembers(doc json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, definitionError(taxonomy.CodeSchemaNotObject, `the input schema must have "type": "object"`)
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, definitionError(taxonomy.CodeSchemaInvalid, "the input schema is not a JSON document")
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, definitionError(taxonomy.CodeSchemaInvalid, "the input schema is not a JSON document")
		}
		out = append(out, member{name, v})
	}
	return out, nil
}

// noProperties reports whether the root object schema declares no
// properties.
func noProperties(root map[string]any) bool {
	props, _ := root["properties"].(map[string]any)
	return len(props) == 0
}

// decodeSchema parses a schema document, numbers kept exact.
func decodeSchema(doc json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, definitionError(taxonomy.CodeSchemaInvalid, "the input schema is not a JSON document")
	}
	return v, nil
}

// objectRoot checks that a schema describes objects: its type is "object"
// (MCP and every model API ask for that).
func objectRoot(root any) error {
	obj, ok := root.(map[string]any)
	if !ok || obj["type"] != "object" {
		return definitionError(taxonomy.CodeSchemaNotObject, `the input schema must have "type": "object"`)
	}
	return nil
}

type checker struct {
	profile Profile
	props   int
	enums   int
	chars   int // OpenAI: characters of names, enum and const values
}

func (c *checker) fail(code, at, msg string) error {
	if at == "" {
		at = "/"
	}
	return definitionError(code, c.profile.String()+": at "+at+": "+msg)
}

// schema checks one schema at JSON pointer at; depth counts enclosing
// objects.
func (c *checker) schema(v any, at string, depth int) error {
	obj, ok := v.(map[string]any)
	if !ok {
		if b, isBool := v.(bool); isBool && c.profile != Plain && !(!b && strings.HasSuffix(at, "/additionalProperties")) {
			return c.fail(taxonomy.CodeSchemaKeywordUnsupported, at, "a boolean schema is not accepted")
		}
		return nil
	}
	if c.profile == Plain {
		return c.children(obj, at, depth)
	}
	for _, k := range sortedKeys(obj) {
		if k == "$schema" && at == "" {
			continue // every profile's API takes (or Adapt drops) the root's
		}
		switch c.profile {
		case OpenAIStrict:
			if !openAIKeywords[k] {
				return c.fail(taxonomy.CodeSchemaKeywordUnsupported, at+"/"+pointerToken(k), "the keyword is not accepted in strict mode")
			}
		case Anthropic:
			if !anthropicKeywords[k] {
				return c.fail(taxonomy.CodeSchemaKeywordUnsupported, at+"/"+pointerToken(k), "the keyword is not accepted")
			}
		case Gemini:
			if k == "$ref" || k == "$defs" || k == "definitions" {
				return c.fail(taxonomy.CodeSchemaRefUnsupported, at, "Gemini accepts no "+k+": inline the schema")
			}
			if !geminiKeywords[k] {
				return c.fail(taxonomy.CodeSchemaKeywordUnsupported, at+"/"+pointerToken(k), "the keyword is not accepted")
			}
		}
	}
	types := typesOf(obj["type"])
	if f, ok := obj["format"].(string); ok {
		var okFormat bool
		switch c.profile {
		case OpenAIStrict:
			okFormat = openAIFormats[f]
		case Anthropic:
			okFormat = anthropicFormats[f]
		case Gemini:
			okFormat = len(types) == 1 && geminiFormats[types[0]][f]
		}
		if !okFormat {
			return c.fail(taxonomy.CodeSchemaFormatUnsupported, at+"/format", "the format is not accepted")
		}
	}
	if e, ok := obj["enum"].([]any); ok {
		c.enums += len(e)
		if c.profile == OpenAIStrict {
			chars, strs := 0, true
			for _, v := range e {
				s, ok := v.(string)
				strs = strs && ok
				chars += utf8.RuneCountInString(s)
			}
			c.chars += chars
			if strs && len(e) > openAILargeEnum && chars > openAIMaxLargeEnumChars {
				return c.fail(taxonomy.CodeSchemaTooComplex, at+"/enum", "a string enum of more than "+itoa(openAILargeEnum)+
					" values may have at most "+itoa(openAIMaxLargeEnumChars)+" characters in all")
			}
		}
	}
	if v, ok := obj["const"].(string); ok && c.profile == OpenAIStrict {
		c.chars += utf8.RuneCountInString(v)
	}
	if c.profile == OpenAIStrict {
		for _, k := range []string{"properties", "$defs", "definitions"} {
			if m, ok := obj[k].(map[string]any); ok {
				for name := range m {
					c.chars += utf8.RuneCountInString(name)
				}
			}
		}
	}
	switch c.profile {
	case OpenAIStrict:
		if at == "" && obj["anyOf"] != nil {
			return c.fail(taxonomy.CodeSchemaNotStrict, at, "the root may not be an anyOf")
		}
		if len(types) == 0 && obj["anyOf"] == nil && obj["$ref"] == nil && obj["enum"] == nil && obj["const"] == nil {
			return c.fail(taxonomy.CodeSchemaNotStrict, at, "every value needs a type")
		}
		if contains(types, "object") || obj["properties"] != nil {
			if depth+1 > openAIMaxDepth {
				return c.fail(taxonomy.CodeSchemaTooComplex, at, "objects nest more than "+itoa(openAIMaxDepth)+" levels deep")
			}
			if obj["additionalProperties"] != false {
				return c.fail(taxonomy.CodeSchemaNotStrict, at, `every object needs "additionalProperties": false`)
			}
			props, _ := obj["properties"].(map[string]any)
			req := map[string]bool{}
			if r, ok := obj["required"].([]any); ok {
				for _, x := range r {
					if s, ok := x.(string); ok {
						req[s] = true
					}
				}
			}
			for _, name := range sortedKeys(props) {
				if !req[name] {
					return c.fail(taxonomy.CodeSchemaNotStrict, at+"/properties/"+pointerToken(name), "every property must be listed in required (make it nullable to let it be empty)")
				}
			}
			c.props += len(props)
			depth++
		}
	case Anthropic:
		if m, ok := obj["minItems"].(json.Number); ok && m != "0" && m != "1" {
			return c.fail(taxonomy.CodeSchemaKeywordUnsupported, at, "minItems may only be 0 or 1")
		}
	case Gemini:
		if _, isList := obj["type"].([]any); isList {
			return c.fail(taxonomy.CodeSchemaKeywordUnsupported, at, `a type list is not accepted: use one type and "nullable": true`)
		}
		if e, ok := obj["enum"].([]any); ok {
			strs := len(types) == 1 && types[0] == "string"
			for _, v := range e {
				_, s := v.(string)
				strs = strs && s
			}
			if !strs {
				return c.fail(taxonomy.CodeSchemaKeywordUnsupported, at+"/enum", `Gemini accepts an enum only of strings, on "type": "string"`)
			}
		}
		if at == "" {
			props, _ := obj["properties"].(map[string]any)
			for i, name := range sortedKeys(props) {
				if !geminiName(name) {
					return c.fail(taxonomy.CodeSchemaNameUnsupported, "/properties", "parameter name "+itoa(i+1)+" of "+itoa(len(props))+
						" (in sorted order) is not a letter or underscore, then letters, digits and underscores, at most 64")
				}
			}
		}
	}
	return c.children(obj, at, depth)
}

// geminiName reports whether name is a parameter name Vertex AI accepts:
// a letter or underscore, then letters, digits and underscores, at most 64.
func geminiName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// children checks the subschemas of obj.
func (c *checker) children(obj map[string]any, at string, depth int) error {
	for _, k := range sortedKeys(obj) {
		v := obj[k]
		switch k {
		case "properties", "$defs", "definitions", "patternProperties", "dependentSchemas":
			m, _ := v.(map[string]any)
			for _, name := range sortedKeys(m) {
				if err := c.schema(m[name], at+"/"+k+"/"+pointerToken(name), depth); err != nil {
					return err
				}
			}
		case "items", "additionalProperties", "not", "propertyNames", "contains", "if", "then", "else",
			"unevaluatedProperties", "unevaluatedItems", "additionalItems":
			if err := c.schema(v, at+"/"+k, depth); err != nil {
				return err
			}
		case "anyOf", "allOf", "oneOf", "prefixItems":
			l, _ := v.([]any)
			for i, alt := range l {
				if err := c.schema(alt, at+"/"+k+"/"+itoa(i), depth); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func typesOf(t any) []string {
	switch x := t.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pointerToken escapes a JSON pointer token (RFC 6901).
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
