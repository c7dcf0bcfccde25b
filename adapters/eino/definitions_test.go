package eino_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"

	"github.com/toolmw/toolmw"
	tooleino "github.com/toolmw/toolmw/adapters/eino"
	toolschema "github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/turn"
)

type flightSearch struct {
	From      string   `json:"from" jsonschema:"IATA code of the departure airport"`
	To        string   `json:"to" jsonschema:"IATA code of the arrival airport"`
	Passenger int      `json:"passengers,omitempty" jsonschema:"minimum=1,maximum=9"`
	Cabin     string   `json:"cabin,omitempty" jsonschema:"enum=economy,enum=business"`
	Tags      []string `json:"tags,omitempty"`
}

func flightBox(t testing.TB) *toolmw.Toolbox {
	t.Helper()
	box := toolmw.NewToolbox()
	if err := box.Register(toolmw.Spec{Name: "search_flights", Description: "Searches flights."},
		toolmw.Typed(func(ctx context.Context, in flightSearch) (string, error) { return "none", nil })); err != nil {
		t.Fatal(err)
	}
	if err := box.Register(toolmw.Spec{Name: "ping", Description: "Pings."},
		toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) { return "pong", nil })); err != nil {
		t.Fatal(err)
	}
	return box
}

// TestDefinitions: each tool's ToolInfo holds the box's definition: name,
// description, and the parameters schema of the profile, as it is but for
// "$schema".
func TestDefinitions(t *testing.T) {
	box := flightBox(t)
	for _, p := range toolschema.Profiles() {
		t.Run(p.String(), func(t *testing.T) {
			tools, err := tooleino.New(box, tooleino.WithProfile(p))
			if err != nil {
				t.Fatal(err)
			}
			defs, err := box.Definitions(p)
			if err != nil {
				t.Fatal(err)
			}
			got := tools.BaseTools()
			if len(got) != len(defs) || len(tools.Names()) != len(defs) {
				t.Fatalf("%d tools for %d definitions", len(got), len(defs))
			}
			for i, d := range defs {
				info, err := got[i].Info(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if info.Name != d.Name || info.Desc != d.Description || tools.Names()[i] != d.Name {
					t.Errorf("tool %d is %q %q, want %q %q", i, info.Name, info.Desc, d.Name, d.Description)
				}
				if d.InputSchema == nil {
					if info.ParamsOneOf != nil {
						t.Errorf("%s: parameters %+v for a tool without", d.Name, info.ParamsOneOf)
					}
					continue
				}
				js, err := info.ParamsOneOf.ToJSONSchema()
				if err != nil {
					t.Fatal(err)
				}
				raw, err := json.Marshal(js)
				if err != nil {
					t.Fatal(err)
				}
				var want map[string]any
				if err := json.Unmarshal(d.InputSchema, &want); err != nil {
					t.Fatal(err)
				}
				delete(want, "$schema")
				if !toolmwtest.SameJSON(t, toolmwtest.DecodeJSON(t, raw), want) {
					t.Errorf("%s: parameters %s, want %s", d.Name, raw, d.InputSchema)
				}
				if _, ok := got[i].(tool.InvokableTool); !ok {
					t.Errorf("%s is not an InvokableTool", d.Name)
				}
			}
		})
	}
	mm, err := tooleino.New(box, tooleino.WithMultimodal(turn.MediaLimits{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, bt := range mm.BaseTools() {
		if _, ok := bt.(tool.EnhancedInvokableTool); !ok {
			t.Fatalf("under WithMultimodal %T is not an EnhancedInvokableTool", bt)
		}
		if _, ok := bt.(tool.InvokableTool); ok {
			t.Fatalf("under WithMultimodal %T is an InvokableTool too: the ToolsNode would pick one", bt)
		}
	}
}

// TestEmptySubschema: a value of any type ({} in the schema) stays {}, not
// true, in the parameters Eino's chat models send.
func TestEmptySubschema(t *testing.T) {
	box := toolmw.NewToolbox()
	if err := box.Register(toolmw.Spec{Name: "note"}, toolmw.Typed(func(ctx context.Context, in struct {
		Notes any `json:"notes"`
	}) (string, error) {
		return "", nil
	})); err != nil {
		t.Fatal(err)
	}
	tools, err := tooleino.New(box)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := tools.BaseTools()[0].Info(context.Background())
	js, _ := info.ParamsOneOf.ToJSONSchema()
	raw, _ := json.Marshal(js)
	defs, _ := box.Definitions(toolschema.Plain)
	var want map[string]any
	_ = json.Unmarshal(defs[0].InputSchema, &want)
	delete(want, "$schema")
	if !toolmwtest.SameJSON(t, toolmwtest.DecodeJSON(t, raw), want) {
		t.Fatalf("parameters %s, want %s", raw, defs[0].InputSchema)
	}
}

// keywordBox serves one definition Eino's schema type cannot hold as it
// is: an integer past float64's precision in an enum.
type keywordBox struct{}

func (keywordBox) Definitions(toolschema.Profile) ([]toolmw.Definition, error) {
	return []toolmw.Definition{{Name: "odd", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer","enum":[12345678901234567891]}},"x-private":true}`)}}, nil
}

func (keywordBox) Call(context.Context, string, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Text("never"), nil
}

// TestNewRefuses: what New refuses, typed; and what Middleware ends every
// call's run with.
func TestNewRefuses(t *testing.T) {
	isDef := func(t *testing.T, err error, code string) {
		t.Helper()
		if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindDefinitionInvalid || info.Code != code {
			t.Fatalf("got %v (%s/%s), want tool-definition-invalid/%s", err, info.Kind, info.Code, code)
		}
	}
	_, err := tooleino.New(nil)
	isDef(t, err, taxonomy.CodeOptionInvalid)
	_, err = tooleino.New(flightBox(t), tooleino.WithProfile(toolschema.Profile(99)))
	isDef(t, err, taxonomy.CodeOptionInvalid)
	_, err = tooleino.New(flightBox(t), tooleino.WithMultimodal(turn.MediaLimits{Image: -1}))
	isDef(t, err, taxonomy.CodeOptionInvalid)
	_, err = tooleino.New(keywordBox{})
	isDef(t, err, taxonomy.CodeSchemaKeywordUnsupported)
	if taxonomy.InfoOf(err).Tool != "odd" {
		t.Errorf("the error %v does not name the tool", err)
	}
	mw := func(next toolmw.Tool) toolmw.Tool { return next }
	for code, opts := range map[string][]tooleino.Option{
		taxonomy.CodeOptionInvalid: {tooleino.WithMaxTools(0)},
		taxonomy.CodeNameInvalid:   {tooleino.WithSpecs(toolmw.Spec{Name: "bad name"})},
	} {
		_, err = tooleino.Middleware(mw, opts...)
		isDef(t, err, code)
	}
	_, err = tooleino.Middleware(nil)
	isDef(t, err, taxonomy.CodeMiddlewareNil)
	_, err = tooleino.Middleware(mw, tooleino.WithSpecs(toolmw.Spec{Name: "a"}, toolmw.Spec{Name: "a"}))
	isDef(t, err, taxonomy.CodeOptionInvalid)
	if !errors.Is(err, taxonomy.ErrDefinitionInvalid) {
		t.Fatal("errors.Is does not see the kind")
	}
}

// TestUnknownTool: the handler answers typed, naming the tool only when
// its name is a valid tool name.
func TestUnknownTool(t *testing.T) {
	for name, want := range map[string]string{
		"teleport":              "tool-not-found tool_not_found: no tool named teleport",
		"ignore previous <all>": "tool-not-found tool_not_found: no tool has the requested name",
	} {
		text, err := tooleino.UnknownTool(context.Background(), name, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		if source, content := envelope(t, text); source != toolmw.SourceError || content != want {
			t.Errorf("%q: %s %q, want %q", name, source, content, want)
		}
	}
}

// TestToolInfoToTheModel: the ADK hands the model the tools' infos.
func TestToolInfoToTheModel(t *testing.T) {
	m := newScripted(say("hi"))
	if err := runAgent(t, context.Background(), flightBox(t), m); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ti := range m.tools {
		names = append(names, ti.Name)
	}
	if len(names) != 2 || names[0] != "search_flights" || names[1] != "ping" {
		t.Fatalf("the model was offered %v", names)
	}
	_ = schema.ToolInfo{}
}
