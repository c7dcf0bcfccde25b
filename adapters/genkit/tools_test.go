package genkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/toolmw/toolmw"
	toolgenkit "github.com/toolmw/toolmw/adapters/genkit"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
)

type searchIn struct {
	Query string `json:"query" jsonschema:"What to look for"`
	Limit int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=50"`
	Sort  string `json:"sort,omitempty" jsonschema:"enum=date,enum=relevance"`
}

func searchBox(t *testing.T) *toolmw.Toolbox {
	t.Helper()
	box := newBox(t)
	register(t, box, toolmw.Spec{Name: "search", Description: "Searches the catalogue."}, func(ctx context.Context, in searchIn) (string, error) {
		return fmt.Sprintf("%d hits for %s", in.Limit, in.Query), nil
	})
	register(t, box, toolmw.Spec{Name: "now", Description: "The time."}, func(ctx context.Context, in struct{}) (string, error) {
		return "noon", nil
	})
	return box
}

// TestDefinitions: the model is offered the box's tools with their names,
// descriptions and input schemas in the profile asked for (Gemini by
// default; a tool without parameters has none under Gemini), never with
// a $schema.
func TestDefinitions(t *testing.T) {
	box := searchBox(t)
	for _, p := range []schema.Profile{schema.Gemini, schema.Plain, schema.Anthropic} {
		t.Run(p.String(), func(t *testing.T) {
			var opts []toolgenkit.Option
			if p != schema.Gemini {
				opts = append(opts, toolgenkit.WithProfile(p))
			}
			tools, err := toolgenkit.New(box, opts...)
			if err != nil {
				t.Fatal(err)
			}
			g := newGenkit(t)
			model, m := script(t, g, answer("ok"))
			if _, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("Hi."), ai.WithUse(tools)); err != nil {
				t.Fatal(err)
			}
			want, err := box.Definitions(p)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*ai.ToolDefinition{}
			for _, d := range model.seen()[0].Tools {
				got[d.Name] = d
			}
			if len(got) != len(want) {
				t.Fatalf("the model was offered %d tools, want %d", len(got), len(want))
			}
			for _, w := range want {
				d := got[w.Name]
				if d == nil || d.Description != w.Description {
					t.Fatalf("tool %s offered as %+v", w.Name, d)
				}
				var ws map[string]any
				if w.InputSchema != nil {
					if err := json.Unmarshal(w.InputSchema, &ws); err != nil {
						t.Fatal(err)
					}
					delete(ws, "$schema")
				}
				if !toolmwtest.SameJSON(t, d.InputSchema, ws) {
					b, _ := json.Marshal(d.InputSchema)
					t.Errorf("tool %s: schema %s, want %s", w.Name, b, w.InputSchema)
				}
			}
			if p == schema.Gemini && got["now"].InputSchema != nil {
				t.Errorf("a tool without parameters has the schema %v under Gemini", got["now"].InputSchema)
			}
			if names := tools.Names(); len(names) != 2 || names[0] != "search" || names[1] != "now" {
				t.Errorf("Names() = %v", names)
			}
			if defs := tools.Definitions(); len(defs) != 2 || defs[0].Name != "search" {
				t.Errorf("Definitions() = %v", defs)
			}
		})
	}
}

// TestOptionsRejected: invalid options, and options of the other
// constructor, are tool-definition-invalid errors.
func TestOptionsRejected(t *testing.T) {
	box := searchBox(t)
	mw := middleware.Default().Middleware()
	for name, err := range map[string]error{
		"unknown profile":        second(toolgenkit.New(box, toolgenkit.WithProfile(schema.Profile(99)))),
		"WithSpecs on New":       second(toolgenkit.New(box, toolgenkit.WithSpecs(toolmw.Spec{Name: "search"}))),
		"nil box":                second(toolgenkit.New(nil)),
		"WithProfile on Wrap":    second(toolgenkit.Wrap(mw, toolgenkit.WithProfile(schema.Plain))),
		"invalid spec":           second(toolgenkit.Wrap(mw, toolgenkit.WithSpecs(toolmw.Spec{Name: "a b"}))),
		"two specs of one name":  second(toolgenkit.Wrap(mw, toolgenkit.WithSpecs(toolmw.Spec{Name: "a"}, toolmw.Spec{Name: "a"}))),
		"nil middleware":         second(toolgenkit.Wrap(nil)),
		"rejecting middleware":   second(toolgenkit.Wrap(breaker.New(breaker.WithConsecutiveFailures(-1)))),
		"strict profile, no map": second(toolgenkit.New(mapBox(t), toolgenkit.WithProfile(schema.OpenAIStrict))),
	} {
		if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindDefinitionInvalid {
			t.Errorf("%s: %v, want tool-definition-invalid", name, err)
		}
	}
	if _, err := toolgenkit.New(box, nil, toolgenkit.WithCallsCounted()); err != nil {
		t.Errorf("a nil option: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

func mapBox(t *testing.T) *toolmw.Toolbox {
	box := toolmw.NewToolbox()
	register(t, box, toolmw.Spec{Name: "tags"}, func(ctx context.Context, in struct {
		Tags map[string]string `json:"tags"`
	}) (string, error) {
		return "", nil
	})
	return box
}

// TestCallIDIsTheRef: each call's toolmw call id is the ref of the
// model's tool request; when the model gives none (Gemini's function
// calls often have no id), the one Genkit gives it, which the
// conversation carries.
func TestCallIDIsTheRef(t *testing.T) {
	box := toolmw.NewToolbox()
	var mu sync.Mutex
	ids := map[string]string{}
	register(t, box, toolmw.Spec{Name: "whoami"}, func(ctx context.Context, in struct {
		Tag string `json:"tag"`
	}) (string, error) {
		c, _ := toolmw.CallFrom(ctx)
		mu.Lock()
		ids[in.Tag] = c.ID
		mu.Unlock()
		return c.ID, nil
	})
	tools, err := toolgenkit.New(box)
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	_, m := script(t, g, calls(call("whoami", "toolu_01Abc", map[string]any{"tag": "a"}), call("whoami", "", map[string]any{"tag": "b"})), answer("ok"))
	resp, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("Who?"), ai.WithUse(tools))
	if err != nil {
		t.Fatal(err)
	}
	if ids["a"] != "toolu_01Abc" {
		t.Errorf("the call with a ref ran with id %q", ids["a"])
	}
	var given string
	for _, p := range resp.History()[1].Content {
		if p.IsToolRequest() && p.ToolRequest.Input.(map[string]any)["tag"] == "b" {
			given = p.ToolRequest.Ref
		}
	}
	// Genkit's refs are UUIDs, which the scrubber reads as identifiers: the
	// layers see SafeCallID's form of it (idempotency and approval keys
	// are made from the original).
	if given == "" || ids["b"] != toolmw.SafeCallID(given) {
		t.Errorf("the call without a ref ran with id %q; Genkit gave it %q", ids["b"], given)
	}
}

// TestNotOfferedRegisteredTool: a tool registered on the Genkit instance
// but not offered to the generation does not run when the model names
// it: it is answered tool-not-found (Genkit alone would run it).
func TestNotOfferedRegisteredTool(t *testing.T) {
	tools, err := toolgenkit.New(searchBox(t))
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	var ran atomic.Int32
	genkit.DefineTool(g, "drop_tables", "Drops every table.", func(tc *ai.ToolContext, in struct{}) (string, error) {
		ran.Add(1)
		return "dropped", nil
	})
	model, m := script(t, g, calls(call("drop_tables", "x1", map[string]any{}), call("now", "x2", nil)), answer("No."))
	resp, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("Drop them."), ai.WithUse(tools))
	if err != nil || resp.Text() != "No." || ran.Load() != 0 {
		t.Fatalf("%v, %q, the tool ran %d times", err, resp.Text(), ran.Load())
	}
	got := answers(t, model.seen()[1])
	if src, content := toolmwtest.Envelope(t, outputText(t, got["x1"])); src != "tool_error" || content != "tool-not-found tool_not_found: no tool named drop_tables" {
		t.Errorf("drop_tables reads %s %q", src, content)
	}
	if _, content := toolmwtest.Envelope(t, outputText(t, got["x2"])); content != "noon" {
		t.Errorf("now reads %q", content)
	}
}

// TestArgsInvalid: arguments that do not match the schema reach the box
// (Genkit does not check them first and fail the generation), which
// answers tool-args-invalid with the fields at fault.
func TestArgsInvalid(t *testing.T) {
	tools, err := toolgenkit.New(searchBox(t))
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	model, m := script(t, g, calls(call("search", "s1", map[string]any{"query": 7})), answer("Oops."))
	if _, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("Search."), ai.WithUse(tools)); err != nil {
		t.Fatal(err)
	}
	src, content := toolmwtest.Envelope(t, outputText(t, answers(t, model.seen()[1])["s1"]))
	if src != "tool_error" || !bytes.HasPrefix([]byte(content), []byte("tool-args-invalid args_invalid:")) {
		t.Errorf("the call reads %s %q", src, content)
	}
}

// TestStops: a call the run budget refuses, or one that meets an open
// circuit, ends the generation: genkit.Generate returns an error that is
// ai.ErrToolFailed and holds the *Stop.
func TestStops(t *testing.T) {
	t.Run("run budget", func(t *testing.T) {
		box := toolmw.NewToolbox()
		register(t, box, toolmw.Spec{Name: "ping"}, func(ctx context.Context, in struct{}) (string, error) { return "pong", nil })
		tools, err := toolgenkit.New(box, toolgenkit.WithCallsCounted())
		if err != nil {
			t.Fatal(err)
		}
		g := newGenkit(t)
		_, m := script(t, g, calls(call("ping", "p1", nil)), calls(call("ping", "p2", nil)), answer("done"))
		ctx := budget.WithRun(context.Background(), budget.WithMaxAttempts(1))
		_, err = genkit.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("Ping twice."), ai.WithUse(tools))
		var stop *toolgenkit.Stop
		if !errors.As(err, &stop) || stop.Kind != taxonomy.KindRunLimitExceeded || !errors.Is(err, ai.ErrToolFailed) {
			t.Fatalf("the generation ended with %v, want a run-limit-exceeded Stop", err)
		}
	})
	t.Run("circuit open", func(t *testing.T) {
		box := toolmw.NewToolbox(middleware.Default(middleware.WithSlog(quiet()),
			middleware.WithBreaker(breaker.WithConsecutiveFailures(1))).Middleware())
		register(t, box, toolmw.Spec{Name: "flaky"}, func(ctx context.Context, in struct{}) (string, error) {
			return "", taxonomy.Failure(taxonomy.CodeUpstreamUnavailable, "down")
		})
		tools, err := toolgenkit.New(box)
		if err != nil {
			t.Fatal(err)
		}
		g := newGenkit(t)
		model, m := script(t, g, calls(call("flaky", "f1", nil)), calls(call("flaky", "f2", nil)), answer("done"))
		resp, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("Try."), ai.WithUse(tools))
		var stop *toolgenkit.Stop
		if !errors.As(err, &stop) || stop.Kind != taxonomy.KindCircuitOpen || !errors.Is(err, taxonomy.ErrCircuitOpen) {
			t.Fatalf("the generation ended with %v, want a circuit-open Stop", err)
		}
		// The first failure reached the model as a tool response; the
		// partial response ends at the last complete round.
		if src, _ := toolmwtest.Envelope(t, outputText(t, answers(t, model.seen()[1])["f1"])); src != "tool_error" {
			t.Errorf("the first failure reads as %s", src)
		}
		if resp == nil || resp.FinishReason != ai.FinishReasonFailed {
			t.Errorf("the partial response: %+v", resp)
		}
	})
}

// TestCancellation: the generation's context reaches the tool; cancelled
// while the tool runs, the generation ends with an error holding the
// cancelled *Stop and context.Canceled, its response aborted.
func TestCancellation(t *testing.T) {
	box := newBox(t)
	started := make(chan struct{})
	register(t, box, toolmw.Spec{Name: "wait"}, func(ctx context.Context, in struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	})
	tools, err := toolgenkit.New(box)
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	_, m := script(t, g, calls(call("wait", "w1", nil)), answer("never"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-started
		cancel()
	}()
	resp, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("Wait."), ai.WithUse(tools))
	var stop *toolgenkit.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("the generation ended with %v, want a cancelled Stop", err)
	}
	if resp == nil || resp.FinishReason != ai.FinishReasonAborted {
		t.Errorf("the partial response: %+v", resp)
	}
}

// TestConcurrentGenerations: one Tools serves many generations at once
// (run under -race): each gets its own tools and its own answers.
func TestConcurrentGenerations(t *testing.T) {
	tools, err := toolgenkit.New(searchBox(t))
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		model, m := script(t, g,
			calls(call("search", "s", map[string]any{"query": fmt.Sprint(i), "limit": i + 1}), call("ghost", "g", nil)),
			answer(fmt.Sprint(i)))
		wg.Go(func() {
			resp, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("Search."), ai.WithUse(tools))
			switch {
			case err != nil:
				errs[i] = err
			case resp.Text() != fmt.Sprint(i):
				errs[i] = fmt.Errorf("answer %q", resp.Text())
			default:
				got := answers(t, model.seen()[1])
				if _, content, _ := toolmw.ParseEnvelope(got["s"].Output.(string)); content != fmt.Sprintf("%d hits for %d", i+1, i) {
					errs[i] = fmt.Errorf("search reads %q", content)
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("generation %d: %v", i, err)
		}
	}
}

// TestParts: a result's image goes to the model as a media part of the
// tool response, beside the envelope that describes the result.
func TestParts(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	box := toolmw.NewToolbox()
	if err := box.Register(toolmw.Spec{Name: "chart"}, func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		return toolmw.Parts(toolmw.TextPart("sales by month"), toolmw.Part{Kind: toolmw.PartImage, MIMEType: "image/png", Data: png}), nil
	}); err != nil {
		t.Fatal(err)
	}
	tools, err := toolgenkit.New(box)
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	model, m := script(t, g, calls(call("chart", "c1", nil)), answer("Here."))
	if _, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("Chart."), ai.WithUse(tools)); err != nil {
		t.Fatal(err)
	}
	r := answers(t, model.seen()[1])["c1"]
	if len(r.Content) != 1 || !r.Content[0].IsMedia() || r.Content[0].ContentType != "image/png" ||
		r.Content[0].Text != "data:image/png;base64,"+base64Std(png) {
		t.Fatalf("the response's content: %+v", r.Content)
	}
	if src, content := toolmwtest.Envelope(t, outputText(t, r)); src != "tool_result" || !bytes.Contains([]byte(content), []byte("sales by month")) {
		t.Errorf("the output reads %s %q", src, content)
	}
}
