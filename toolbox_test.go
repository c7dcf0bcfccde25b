package toolmw_test

import (
	"context"
	"encoding/json"
	"strings"
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

// One rule for "no schema": a tool registered without one takes any
// object, and is shown with toolmw.AnyObjectSchema (Gemini: without
// parameters, see below; OpenAI strict cannot describe it).
func TestNoSchemaIsAnyObject(t *testing.T) {
	box := toolmw.NewToolbox()
	ran := 0
	if err := box.Register(toolmw.Spec{Name: "free"}, func(context.Context, json.RawMessage) (toolmw.Result, error) { ran++; return toolmw.Text("x"), nil }); err != nil {
		t.Fatal(err)
	}
	for _, p := range []schema.Profile{schema.Plain, schema.Anthropic} {
		defs, err := box.Definitions(p)
		if err != nil || string(defs[0].InputSchema) != toolmw.AnyObjectSchema {
			t.Fatalf("%s: %+v %v", p, defs, err)
		}
	}
	if _, err := box.Call(context.Background(), "free", json.RawMessage(`{"any":["thing"]}`)); err != nil || ran != 1 {
		t.Fatalf("%v", err)
	}
	if _, err := box.Definitions(schema.OpenAIStrict); codeOf(err) != taxonomy.CodeSchemaNotStrict {
		t.Fatalf("%v", err)
	}
}

// Gemini is shown what its API takes: parameters without a root $schema
// (an OpenAPI Schema object has no such field; TypeScript MCP servers send
// one), and no parameters for a tool that takes none — Gemini rejects
// parameters of type object without properties ("should be non-empty for
// OBJECT type") and lets a function with no parameters leave them unset.
func TestDefinitionsForGemini(t *testing.T) {
	type none struct{}
	raw := func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("x"), nil }
	box := toolmw.NewToolbox()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(box.Register(toolmw.Spec{Name: "ts", InputSchema: json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}, raw))
	must(box.Register(toolmw.Spec{Name: "free"}, raw))
	must(box.Register(toolmw.Spec{Name: "empty", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}, raw))
	must(box.Register(toolmw.Spec{Name: "typed"}, toolmw.Typed(func(context.Context, none) (string, error) { return "", nil })))
	defs, err := box.Definitions(schema.Gemini)
	must(err)
	if string(defs[0].InputSchema) != `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}` {
		t.Fatalf("%s", defs[0].InputSchema)
	}
	for _, d := range defs[1:] {
		js, _ := json.Marshal(d)
		if d.InputSchema != nil || strings.Contains(string(js), "inputSchema") {
			t.Fatalf("%s", js)
		}
	}
	// The MCP profile keeps what it was given.
	mcp, err := box.Definitions(schema.MCP)
	must(err)
	if !strings.Contains(string(mcp[0].InputSchema), "$schema") || string(mcp[1].InputSchema) != toolmw.AnyObjectSchema {
		t.Fatalf("%s %s", mcp[0].InputSchema, mcp[1].InputSchema)
	}
}
