package langchaingo_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/toolmw/toolmw"
	toollangchaingo "github.com/toolmw/toolmw/adapters/langchaingo"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/turn"
)

type searchIn struct {
	Query string `json:"query"`
	Limit *int   `json:"limit,omitempty"`
}

func searchBox(t *testing.T) *toolmw.Toolbox {
	t.Helper()
	box := toolmw.NewToolbox()
	must(t, box.Register(toolmw.Spec{Name: "search", Description: "Searches the web."},
		toolmw.Typed(func(ctx context.Context, in searchIn) (string, error) { return "found " + in.Query, nil })))
	must(t, box.Register(toolmw.Spec{Name: "now", Description: "The time."},
		toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) { return "noon", nil })))
	return box
}

// encode returns v as JSON, as a langchaingo client sends it.
func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDefinitions: the llms.Tool definitions carry the box's name and
// description and the input schema of the profile, as a map[string]any
// (what langchaingo's Gemini client requires); strict under OpenAIStrict.
func TestDefinitions(t *testing.T) {
	box := searchBox(t)
	for _, tc := range []struct {
		profile schema.Profile
		strict  bool
		search  string
		now     string
	}{
		{schema.Plain, false,
			`{"additionalProperties":false,"properties":{"limit":{"type":["integer","null"]},"query":{"type":"string"}},"required":["query"],"type":"object"}`,
			`{"additionalProperties":false,"properties":{},"type":"object"}`},
		{schema.OpenAIStrict, true,
			`{"additionalProperties":false,"properties":{"limit":{"type":["integer","null"]},"query":{"type":"string"}},"required":["query","limit"],"type":"object"}`,
			`{"additionalProperties":false,"properties":{},"required":[],"type":"object"}`},
		{schema.Gemini, false, "", "null"},
	} {
		lc, err := toollangchaingo.New(box, toollangchaingo.WithProfile(tc.profile))
		must(t, err)
		defs := lc.Definitions()
		if len(defs) != 2 || defs[0].Type != "function" || defs[0].Function.Name != "search" ||
			defs[0].Function.Description != "Searches the web." || defs[0].Function.Strict != tc.strict {
			t.Fatalf("%v: %+v", tc.profile, defs[0].Function)
		}
		if _, ok := defs[0].Function.Parameters.(map[string]any); !ok {
			t.Errorf("%v: parameters of type %T", tc.profile, defs[0].Function.Parameters)
		}
		if tc.search != "" {
			if got := encode(t, defs[0].Function.Parameters); got != tc.search {
				t.Errorf("%v: search's schema %s, want %s", tc.profile, got, tc.search)
			}
		}
		if got := encode(t, defs[1].Function.Parameters); got != tc.now {
			t.Errorf("%v: now's schema %s, want %s", tc.profile, got, tc.now)
		}
		if strings.Contains(encode(t, defs), "$schema") {
			t.Errorf("%v: a $schema keyword went out", tc.profile)
		}
		defs[0].Function.Parameters.(map[string]any)["type"] = "changed"
		if encode(t, lc.Definitions()[0].Function.Parameters) == encode(t, defs[0].Function.Parameters) {
			t.Errorf("%v: Definitions shares its maps between calls", tc.profile)
		}
	}
	if lc, err := toollangchaingo.New(box, toollangchaingo.WithProfile(schema.Gemini)); err != nil ||
		!strings.HasSuffix(lc.Tools()[1].Description(), "Input: {} (the tool takes no arguments).") {
		t.Errorf("Gemini, a tool without parameters: %v", err)
	}

	// A tool strict mode cannot describe: New names it.
	loose := toolmw.NewToolbox()
	must(t, loose.Register(toolmw.Spec{Name: "tags"}, toolmw.Typed(func(ctx context.Context, in struct {
		Tags map[string]string `json:"tags"`
	}) (string, error) {
		return "", nil
	})))
	_, err := toollangchaingo.New(loose, toollangchaingo.WithProfile(schema.OpenAIStrict))
	if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindDefinitionInvalid || info.Tool != "tags" {
		t.Errorf("a map under strict: %v", err)
	}
}

// TestDescriptions: each tool's description ends with its schema, unless
// WithSchemaInDescription(false).
func TestDescriptions(t *testing.T) {
	box := searchBox(t)
	lc, err := toollangchaingo.New(box)
	must(t, err)
	got := lc.Tools()[0].Description()
	if want := `Searches the web. Input: a JSON object with this JSON Schema: {"type":"object","properties":{"query":{"type":"string"},"limit":{"type":["integer","null"]}},"required":["query"],"additionalProperties":false}`; got != want {
		t.Errorf("description %q, want %q", got, want)
	}
	bare, err := toollangchaingo.New(box, toollangchaingo.WithSchemaInDescription(false))
	must(t, err)
	if got := bare.Tools()[0].Description(); got != "Searches the web." {
		t.Errorf("description %q", got)
	}
	if strings.Join(lc.Names(), ",") != "search,now" || lc.Profile() != schema.Plain {
		t.Errorf("names %v, profile %v", lc.Names(), lc.Profile())
	}
}

// TestModel: through Tools.Model, langchaingo's OpenAI functions agent
// declares the box's tools with their real schemas (strict under
// OpenAIStrict) and a tool of the user's as the agent declares it; the
// model's arguments reach the tool whole and are replayed to the model as
// it wrote them.
func TestModel(t *testing.T) {
	box := searchBox(t)
	lc, err := toollangchaingo.New(box, toollangchaingo.WithProfile(schema.OpenAIStrict), toollangchaingo.WithSchemaInDescription(false))
	must(t, err)
	u, err := toollangchaingo.Wrap(&userTool{name: "legacy", answer: func(int, string) (string, error) { return "ok", nil }}, toolmw.Chain())
	must(t, err)
	model := newScripted(
		reply{calls: []llms.ToolCall{call("c1", "search", `{"query":"go","limit":null}`)}},
		reply{text: "found it"})
	agent := agents.NewOpenAIFunctionsAgent(lc.Model(model), append(lc.Tools(), u))
	out, err := chains.Run(budget.WithRun(context.Background()), agents.NewExecutor(agent), "search go")
	if err != nil || out != "found it" {
		t.Fatalf("%q, %v", out, err)
	}
	reqs := model.received()
	fns := reqs[0].Functions
	if len(fns) != 3 || fns[0].Name != "search" || !fns[0].Strict || fns[0].Description != "Searches the web." ||
		encode(t, fns[0].Parameters) != encode(t, lc.Definitions()[0].Function.Parameters) {
		t.Fatalf("the model was declared %s", encode(t, fns))
	}
	if fns[2].Name != "legacy" || fns[2].Strict || !strings.Contains(encode(t, fns[2].Parameters), "__arg1") {
		t.Errorf("the user's tool was declared %s", encode(t, fns[2]))
	}
	if got := model.toolResponses(); len(got) != 1 || got[0].Content != `<untrusted-data source="tool_result">found go</untrusted-data>` {
		t.Errorf("the model was shown %+v", got)
	}
	for _, m := range reqs[1].Messages {
		for _, p := range m.Parts {
			if c, ok := p.(llms.ToolCall); ok && c.FunctionCall.Arguments != `{"query":"go","limit":null}` {
				t.Errorf("the call was replayed as %s", c.FunctionCall.Arguments)
			}
		}
	}
}

// TestDirectLoop: a model called directly with llms.WithTools(Definitions)
// and its calls run by CallTools, their answers sent as tool messages with
// the model's call ids; the layers see those ids.
func TestDirectLoop(t *testing.T) {
	box := toolmw.NewToolbox()
	var ids []string
	must(t, box.Register(toolmw.Spec{Name: "search"}, toolmw.Typed(func(ctx context.Context, in searchIn) (string, error) {
		c, _ := toolmw.CallFrom(ctx)
		ids = append(ids, c.ID)
		return "found " + in.Query, nil
	})))
	lc, err := toollangchaingo.New(box)
	must(t, err)
	model := newScripted(
		reply{calls: []llms.ToolCall{call("call_a", "search", `{"query":"go"}`), call("call_b", "nope", `{}`)}},
		reply{text: "Go is a language."})
	ctx := budget.WithRun(context.Background())
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "What is Go?")}
	for {
		resp, err := model.GenerateContent(ctx, msgs, llms.WithTools(lc.Definitions()))
		must(t, err)
		choice := resp.Choices[0]
		if len(choice.ToolCalls) == 0 {
			if choice.Content != "Go is a language." {
				t.Errorf("answer %q", choice.Content)
			}
			break
		}
		assistant := llms.MessageContent{Role: llms.ChatMessageTypeAI}
		for _, c := range choice.ToolCalls {
			assistant.Parts = append(assistant.Parts, c)
		}
		msgs = append(msgs, assistant)
		turn, err := lc.CallTools(ctx, choice.ToolCalls)
		msgs = append(msgs, turn.Messages()...)
		must(t, err)
	}
	got := model.toolResponses()
	if len(got) != 2 || got[0].ToolCallID != "call_a" || got[0].Name != "search" ||
		got[0].Content != `<untrusted-data source="tool_result">found go</untrusted-data>` ||
		got[1].ToolCallID != "call_b" || got[1].Content != toolmw.ForModel(toolmw.Result{}, turn.NotOffered("nope")) {
		t.Errorf("the model was shown %+v", got)
	}
	if len(ids) != 1 || ids[0] != "call_a" {
		t.Errorf("the layers saw ids %v", ids)
	}
	if n := len(model.received()[0].Tools); n != 1 {
		t.Errorf("the model was given %d tools", n)
	}
}

// TestCallToolsContract runs toolmw's adapter contract on CallTools:
// concurrency within the bound, the model's order, the run budget across
// turns, the stops, unknown tools, panics, Goexit, counted calls.
func TestCallToolsContract(t *testing.T) {
	toolmwtest.TestAdapter(t, func(t *testing.T, box *toolmw.Toolbox, o turn.Options) toolmwtest.Dispatch {
		var opts []toollangchaingo.Option
		if o.MaxParallel > 0 {
			opts = append(opts, toollangchaingo.WithMaxParallel(o.MaxParallel))
		}
		if o.CountCalls {
			opts = append(opts, toollangchaingo.WithCallsCounted())
		}
		lc, err := toollangchaingo.New(box, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context, calls []toolmwtest.ModelCall) ([]toolmwtest.Reply, error) {
			cs := make([]llms.ToolCall, len(calls))
			for i, c := range calls {
				cs[i] = call(c.ID, c.Name, c.Args)
			}
			turn, err := lc.CallTools(ctx, cs)
			out := make([]toolmwtest.Reply, len(turn.Calls))
			for i, a := range turn.Calls {
				out[i] = toolmwtest.Reply{CallID: a.CallID, Text: a.Text, Err: a.Err}
			}
			return out, err
		}
	})
}
