package schema_test

import (
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

type forecastArgs struct {
	City string `json:"city" jsonschema:"City name, such as Lisbon"`
	Days int8   `json:"days,omitempty"`
	Unit string `json:"unit,omitempty" enum:"c,f"`
}

// The schema of a tool's input type, for MCP and for OpenAI's strict mode.
func Example() {
	s := schema.For[forecastArgs]()
	fmt.Println(string(s.MustRender(schema.MCP)))
	fmt.Println(string(s.MustRender(schema.OpenAIStrict)))
	// Output:
	// {"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"city":{"type":"string","description":"City name, such as Lisbon"},"days":{"type":["integer","null"],"minimum":-128,"maximum":127},"unit":{"type":["string","null"],"enum":["c","f",null]}},"required":["city"],"additionalProperties":false}
	// {"type":"object","properties":{"city":{"type":"string","description":"City name, such as Lisbon"},"days":{"type":["integer","null"],"minimum":-128,"maximum":127},"unit":{"type":["string","null"],"enum":["c","f",null]}},"required":["city","days","unit"],"additionalProperties":false}
}

// A hand-written schema validates arguments with value-free field errors.
func ExampleValidator() {
	v, err := schema.Compile([]byte(`{"type":"object","properties":{"email":{"type":"string","format":"email"}},"required":["email"]}`))
	if err != nil {
		panic(err)
	}
	err = v.Validate([]byte(`{"email":"not an email, sk-live-secret","sk-live-key":1}`), 0)
	fields, _ := json.Marshal(taxonomy.InfoOf(err).Fields)
	fmt.Println(err)
	fmt.Println(string(fields))
	// Output:
	// tool-args-invalid args_invalid: arguments do not match the tool's input
	// [{"type":"format","loc":["email"],"msg":"Input should be a valid email string"}]
}

// Check tells why a model API would reject a schema.
func ExampleCheck() {
	doc := []byte(`{"type":"object","properties":{"next":{"$ref":"#"}}}`)
	fmt.Println(schema.Check(doc, schema.Gemini))
	// Output:
	// tool-definition-invalid schema_ref_unsupported: gemini: at /properties/next: Gemini accepts no $ref: inline the schema
}
