package schema

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/toolmw/toolmw/taxonomy"
)

// Profile names a model API's dialect of JSON Schema: which keywords, types
// and formats its tool definitions accept. The zero Profile is Plain.
type Profile int

// The profiles.
const (
	// Plain is JSON Schema 2020-12 as is, what MCP servers publish; the
	// rendering says so in $schema. It is exact: it accepts precisely what
	// the decoder accepts, except a 64-bit integer past its type's range,
	// which only the decoder rejects (the schema shows no such bound).
	Plain Profile = iota
	// OpenAIStrict is OpenAI's strict function calling (Chat Completions
	// and Responses, strict: true): every property listed in required,
	// optional ones typed [T, "null"], additionalProperties false on every
	// object, only the keywords and formats strict mode documents. Exact
	// like Plain; a type it cannot express (a map, a value of any type) is
	// a schema_not_strict error.
	OpenAIStrict
	// Anthropic is the subset Anthropic's tool use supports: constraints it
	// ignores (minimum, maximum, pattern, lengths, maxItems, minItems above
	// 1) move into the description, and only its formats stay. Looser than
	// the decoder where constraints moved; maps stay open objects, which
	// strict tool use rejects.
	Anthropic
	// Gemini is the OpenAPI subset of Gemini's function declarations
	// (parameters): no $ref or $defs (recursive types are inlined to
	// MaxInlineDepth), one type per schema with "nullable", no
	// additionalProperties, enums of strings only, formats date-time and
	// enum, parameter names of a letter or underscore, then letters,
	// digits and underscores, at most 64 (schema_name_unsupported). An
	// input without properties renders as nil: Gemini declares a function
	// that takes no parameters by leaving them out. Looser than the
	// decoder; a value of any type is a schema_keyword_unsupported error.
	Gemini

	numProfiles = iota
)

// MCP is the profile of MCP tool definitions: Plain.
const MCP = Plain

// Profiles lists every profile, Plain first.
func Profiles() []Profile { return []Profile{Plain, OpenAIStrict, Anthropic, Gemini} }

func (p Profile) valid() bool { return p >= 0 && p < numProfiles }

// String returns the profile's name: plain, openai-strict, anthropic or
// gemini.
func (p Profile) String() string {
	switch p {
	case Plain:
		return "plain"
	case OpenAIStrict:
		return "openai-strict"
	case Anthropic:
		return "anthropic"
	case Gemini:
		return "gemini"
	}
	return "profile(" + strconv.Itoa(int(p)) + ")"
}

// Keywords and formats each profile accepts.
var (
	openAIKeywords = set("type", "properties", "required", "additionalProperties", "items", "enum", "const",
		"anyOf", "$ref", "$defs", "description", "title", "pattern", "format", "minimum", "maximum",
		"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems")
	openAIFormats = set("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid")

	anthropicKeywords = set("type", "properties", "required", "additionalProperties", "items", "enum", "const",
		"anyOf", "allOf", "$ref", "$defs", "definitions", "description", "title", "default", "examples",
		"format", "minItems")
	anthropicFormats = set("date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid")

	geminiKeywords = set("type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
		"properties", "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern",
		"example", "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum")
	geminiFormats = map[string]map[string]bool{
		"string":  set("date-time", "enum"),
		"number":  set("float", "double"),
		"integer": set("int32", "int64"),
	}
)

// OpenAI strict mode's documented size limits.
const (
	openAIMaxDepth          = 10
	openAIMaxProperties     = 5000
	openAIMaxEnumValues     = 1000
	openAIMaxChars          = 120_000 // names, enum and const values, all told
	openAILargeEnum         = 250     // a string enum of more values …
	openAIMaxLargeEnumChars = 15_000  // … has at most this many characters
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// transform turns a plain rendering into profile p's.
func transform(root *object, p Profile) (*object, error) {
	switch p {
	case OpenAIStrict:
		root = root.clone()
		return root, walkObjects(root, func(o *object) error {
			o.del("contentEncoding")
			if len(o.keys) == 0 {
				return definitionError(taxonomy.CodeSchemaNotStrict, "OpenAI strict mode cannot describe a value of any type (an interface or json.RawMessage field)")
			}
			if ap, ok := o.get("additionalProperties"); ok && ap != false {
				return definitionError(taxonomy.CodeSchemaNotStrict, "OpenAI strict mode cannot describe an object with free-form keys (a map)")
			}
			if props, ok := o.get("properties"); ok {
				var all []any
				for _, k := range props.(*object).keys {
					all = append(all, k)
				}
				if all == nil {
					all = []any{}
				}
				o.set("required", all)
			}
			return nil
		})
	case Anthropic:
		root = root.clone()
		return root, walkObjects(root, func(o *object) error {
			var moved []string
			if enc, ok := o.get("contentEncoding"); ok && enc == "base64" {
				o.del("pattern") // the pattern spells out base64: say so instead
				moved = append(moved, "base64-encoded")
			}
			for _, k := range append([]string(nil), o.keys...) {
				v := o.vals[k]
				switch {
				case k == "contentEncoding" || k == "propertyNames":
					o.del(k)
				case k == "format" && !anthropicFormats[v.(string)],
					k == "minItems" && v != json.Number("0") && v != json.Number("1"),
					k == "pattern", k == "minimum", k == "maximum", k == "exclusiveMinimum", k == "exclusiveMaximum",
					k == "multipleOf", k == "minLength", k == "maxLength", k == "maxItems":
					o.del(k)
					if !fullRange(k, v) {
						moved = append(moved, k+": "+plain(v))
					}
				}
			}
			describe(o, moved)
			return nil
		})
	case Gemini:
		root = root.clone()
		return root, walkObjects(root, func(o *object) error {
			if len(o.keys) == 0 {
				return definitionError(taxonomy.CodeSchemaKeywordUnsupported, "Gemini needs a type for every value: it cannot describe a value of any type (an interface or json.RawMessage field)")
			}
			nullable := false
			if a, ok := o.get("anyOf"); ok {
				var rest []any
				for _, alt := range a.([]any) {
					if t, _ := alt.(*object).get("type"); t == "null" && len(alt.(*object).keys) == 1 {
						nullable = true
						continue
					}
					rest = append(rest, alt)
				}
				if len(rest) == 1 {
					o.del("anyOf")
					inner := rest[0].(*object)
					for _, k := range inner.keys {
						if _, have := o.get(k); !have {
							o.set(k, inner.vals[k])
						}
					}
				} else {
					o.set("anyOf", rest)
				}
			}
			if t, ok := o.get("type"); ok {
				if l, ok := t.([]any); ok {
					var rest []any
					for _, x := range l {
						if x == "null" {
							nullable = true
						} else {
							rest = append(rest, x)
						}
					}
					if len(rest) == 1 {
						o.set("type", rest[0])
					} else {
						o.set("type", rest)
					}
				}
			}
			var moved []string
			if e, ok := o.get("enum"); ok {
				var vals []any
				for _, x := range e.([]any) {
					if x != nil {
						vals = append(vals, x)
					}
				}
				if t, _ := o.get("type"); t == "string" {
					o.set("enum", vals).set("format", "enum")
				} else {
					o.del("enum")
					var parts []string
					for _, x := range vals {
						parts = append(parts, plain(x))
					}
					moved = append(moved, "one of "+strings.Join(parts, ", "))
				}
			}
			for _, k := range append([]string(nil), o.keys...) {
				v := o.vals[k]
				switch k {
				case "additionalProperties", "propertyNames", "contentEncoding":
					o.del(k)
				case "minimum", "maximum":
					if fullRange(k, v) {
						o.del(k)
					}
				}
			}
			if nullable {
				o.set("nullable", true)
			}
			describe(o, moved)
			return nil
		})
	}
	return root, nil
}

// fullRange reports whether a bound is that of a 64-bit integer or a
// float64, which tells a model nothing.
func fullRange(k string, v any) bool {
	if k != "minimum" && k != "maximum" {
		return false
	}
	switch plain(v) {
	case "-9223372036854775808", "9223372036854775807", "18446744073709551615",
		"-" + maxFloat64Text, maxFloat64Text:
		return true
	}
	return false
}

const maxFloat64Text = "1.7976931348623157e+308"

// describe appends the constraints a profile cannot carry to o's
// description, so the model still reads them.
func describe(o *object, moved []string) {
	if len(moved) == 0 {
		return
	}
	note := "(" + strings.Join(moved, ", ") + ")"
	if d, ok := o.get("description"); ok {
		note = d.(string) + " " + note
	}
	o.set("description", note)
}

func plain(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return string(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// walkObjects calls fn on every schema object in o, o included, parents
// before children.
func walkObjects(o *object, fn func(*object) error) error {
	if err := fn(o); err != nil {
		return err
	}
	for _, k := range o.keys {
		switch k {
		case "properties", "$defs":
			for _, name := range o.vals[k].(*object).keys {
				if err := walkObjects(o.vals[k].(*object).vals[name].(*object), fn); err != nil {
					return err
				}
			}
		case "items", "additionalProperties", "not", "propertyNames":
			if sub, ok := o.vals[k].(*object); ok {
				if err := walkObjects(sub, fn); err != nil {
					return err
				}
			}
		case "anyOf":
			for _, alt := range o.vals[k].([]any) {
				if err := walkObjects(alt.(*object), fn); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func definitionError(code, msg string) error {
	return taxonomy.New(taxonomy.KindDefinitionInvalid, code, msg)
}

func itoa(i int) string     { return strconv.Itoa(i) }
func itoa64(i int64) string { return strconv.FormatInt(i, 10) }
func utoa(u uint64) string  { return strconv.FormatUint(u, 10) }
