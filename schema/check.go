package schema

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

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
//     properties and 1000 enum values (schema_too_complex).
//   - Anthropic: only its keywords and formats; minItems 0 or 1.
//   - Gemini: no $ref or $defs (schema_ref_unsupported); only its keywords;
//     one type per schema; its formats per type.
//
// The message names the offending place by its JSON pointer in the schema,
// never by a value. Check is safe for concurrent use.
func Check(doc json.RawMessage, p Profile) error {
	if !p.valid() {
		return definitionError(taxonomy.CodeOptionInvalid, "unknown schema profile")
	}
	root, err := decodeSchema(doc)
	if err != nil {
		return err
	}
	if _, err := compile(root); err != nil {
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
	}
	return nil
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
		switch c.profile {
		case OpenAIStrict:
			if !openAIKeywords[k] && !(k == "$schema" && at == "") {
				return c.fail(taxonomy.CodeSchemaKeywordUnsupported, at, "keyword "+strconv.Quote(k)+" is not accepted in strict mode")
			}
		case Anthropic:
			if !anthropicKeywords[k] && !(k == "$schema" && at == "") {
				return c.fail(taxonomy.CodeSchemaKeywordUnsupported, at, "keyword "+strconv.Quote(k)+" is not accepted")
			}
		case Gemini:
			if k == "$ref" || k == "$defs" || k == "definitions" {
				return c.fail(taxonomy.CodeSchemaRefUnsupported, at, "Gemini accepts no "+k+": inline the schema")
			}
			if !geminiKeywords[k] {
				return c.fail(taxonomy.CodeSchemaKeywordUnsupported, at, "keyword "+strconv.Quote(k)+" is not accepted")
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
			return c.fail(taxonomy.CodeSchemaFormatUnsupported, at, "format "+strconv.Quote(f)+" is not accepted")
		}
	}
	if e, ok := obj["enum"].([]any); ok {
		c.enums += len(e)
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
	}
	return c.children(obj, at, depth)
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
