package toolmw_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

// Definitions lists the tools in registration order, each schema rendered
// for the profile asked.
func TestToolboxDefinitions(t *testing.T) {
	type searchArgs struct {
		Query string            `json:"query"`
		Where map[string]string `json:"where,omitempty"`
	}
	box := toolmw.NewToolbox()
	raw := json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(box.Register(toolmw.Spec{Name: "weather", Description: "Weather now."}, weather()))
	must(box.Register(toolmw.Spec{Name: "lookup", InputSchema: raw}, func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("x"), nil }))
	must(box.Register(toolmw.Spec{Name: "search"}, toolmw.Typed(func(context.Context, searchArgs) (string, error) { return "", nil })))

	defs, err := box.Definitions(schema.Plain)
	must(err)
	if len(defs) != 3 || defs[0].Name != "weather" || defs[1].Name != "lookup" || defs[2].Name != "search" || defs[0].Description != "Weather now." {
		t.Fatalf("definitions %+v", defs)
	}
	if string(defs[0].InputSchema) != string(schema.For[weatherArgs]().MustRender(schema.Plain)) || string(defs[1].InputSchema) != string(raw) {
		t.Fatalf("schemas %s %s", defs[0].InputSchema, defs[1].InputSchema)
	}
	gem, err := box.Definitions(schema.Gemini)
	must(err)
	if string(gem[0].InputSchema) != string(schema.For[weatherArgs]().MustRender(schema.Gemini)) {
		t.Fatalf("gemini %s", gem[0].InputSchema)
	}
	// lookup's schema is not strict (open, and so is search's map): the
	// error names the first tool.
	_, err = box.Definitions(schema.OpenAIStrict)
	if te, ok := taxonomy.From(err); !ok || te.Code() != taxonomy.CodeSchemaNotStrict || te.Tool() != "lookup" {
		t.Fatalf("strict: %v", err)
	}
}
