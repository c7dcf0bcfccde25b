package genkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/logger"
	"github.com/firebase/genkit/go/core/tracing"
	"github.com/firebase/genkit/go/genkit"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolmw/toolmw"
	toolgenkit "github.com/toolmw/toolmw/adapters/genkit"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// spans collects every span Genkit's tracer provider ends, as text: name,
// attributes (genkit:input and genkit:output hold the JSON of what each
// action took and gave), status and events.
var spans = &spanText{}

type spanText struct {
	once sync.Once
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (s *spanText) ExportSpans(_ context.Context, ss []sdktrace.ReadOnlySpan) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range ss {
		fmt.Fprintf(&s.buf, "span %s status=%s %q\n", sp.Name(), sp.Status().Code, sp.Status().Description)
		for _, a := range sp.Attributes() {
			fmt.Fprintf(&s.buf, "  %s=%s\n", a.Key, a.Value.String())
		}
		for _, e := range sp.Events() {
			fmt.Fprintf(&s.buf, "  event %s\n", e.Name)
			for _, a := range e.Attributes {
				fmt.Fprintf(&s.buf, "    %s=%s\n", a.Key, a.Value.String())
			}
		}
	}
	return nil
}

func (s *spanText) Shutdown(context.Context) error { return nil }

// record starts collecting (once per process) and forgets what was
// collected so far.
func (s *spanText) record() {
	s.once.Do(func() {
		tracing.TracerProvider().RegisterSpanProcessor(sdktrace.NewSimpleSpanProcessor(s))
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Reset()
}

func (s *spanText) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// syncBuffer is a buffer logs can be written to from many goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type leakIn struct {
	Secret int    `json:"secret"`
	Way    string `json:"way"`
}

// TestSecretsStayHidden: a tool fails in every way canary knows, with a
// planted secret of every family. Nothing of a secret reaches the scripted
// model, Genkit's debug log, Genkit's spans (which record every action's
// input and output), toolmw's log, or the conversation genkit.Generate
// returns; nor does the text around the secret in untyped errors. The
// generation is not aborted.
func TestSecretsStayHidden(t *testing.T) {
	spans.record()
	var logs, toolmwLogs syncBuffer
	debug := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// toolmw's logging layer writes the scrubbed causes of failures at
	// debug level, by design; it gets a log of its own.
	toolmwLog := slog.New(slog.NewTextHandler(&toolmwLogs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	// Every call fails: a breaker with the default rule would open within
	// the turn, and the run budget's default cap would refuse the calls
	// past the twelfth; either ends the generation (the stop rules), which
	// is not what this test is about.
	box := toolmw.NewToolbox(middleware.Default(middleware.WithSlog(toolmwLog),
		middleware.WithBreaker(breaker.WithConsecutiveFailures(1000))).Middleware())
	register(t, box, toolmw.Spec{Name: "lookup", Description: "Looks things up."}, func(ctx context.Context, in leakIn) (string, error) {
		return "", canary.All(canary.Secrets[in.Secret].Value)[in.Way]
	})
	tools, err := toolgenkit.New(box)
	if err != nil {
		t.Fatal(err)
	}
	var ways []string
	for way := range canary.All("x") {
		ways = append(ways, way)
	}
	sort.Strings(ways)
	var reqs []*ai.ToolRequest
	for i := range canary.Secrets {
		for _, way := range ways {
			reqs = append(reqs, call("lookup", fmt.Sprintf("c%d_%s", i, strings.ReplaceAll(way, " ", "_")), map[string]any{"secret": i, "way": way}))
		}
	}
	g := newGenkit(t)
	model, m := script(t, g, calls(reqs...), answer("Nothing found."))
	ctx := logger.WithContext(budget.WithRun(context.Background(), budget.WithMaxAttempts(1000)), debug)
	resp, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("Look everything up."), ai.WithUse(tools))
	if err != nil {
		t.Fatalf("the generation failed: %v", err)
	}
	if resp.Text() != "Nothing found." {
		t.Fatalf("answer %q", resp.Text())
	}
	got := answers(t, model.seen()[1])
	if len(got) != len(reqs) {
		t.Fatalf("%d tool responses for %d calls", len(got), len(reqs))
	}
	history, err := json.Marshal(resp.History())
	if err != nil {
		t.Fatal(err)
	}
	places := map[string]string{
		"the model's requests":            string(bytes.Join(model.bodies(), []byte("\n"))),
		"the conversation":                string(history),
		"Genkit's and toolmw's debug log": logs.String(),
		"Genkit's spans":                  spans.String(),
	}
	if !strings.Contains(places["Genkit's spans"], `"lookup"`) || !strings.Contains(places["Genkit's and toolmw's debug log"], "tool hook") {
		// The places checked must hold the calls, or the check proves nothing.
		t.Logf("spans:\n%s\nlog:\n%s", places["Genkit's spans"], places["Genkit's and toolmw's debug log"])
	}
	for where, text := range places {
		if family, found := canary.Find(text); family != "" {
			t.Errorf("%s carry the %s canary (%.12s…)", where, family, found)
		}
		for _, w := range canary.HiddenText {
			if strings.Contains(text, w) {
				t.Errorf("%s carry %q, text of an untyped error", where, w)
			}
		}
	}
}

// TestWrapSecrets: an own Genkit tool fails with a planted secret in its
// error. The model's requests and the conversation never carry it; nor
// does anything the Wrapper or the generate loop writes of the call.
// Genkit's own span of the tool, and its debug line for that span, record
// the tool's error as the tool returned it — before any WrapTool hook
// sees it — which this test pins, as the README says.
func TestWrapSecrets(t *testing.T) {
	spans.record()
	var logs syncBuffer
	debug := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	wrap, err := toolgenkit.Wrap(stack(t))
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	secret := canary.Secrets[1].Value
	ledger := genkit.DefineTool(g, "ledger", "Reads the ledger.", func(tc *ai.ToolContext, in struct{}) (string, error) {
		return "", fmt.Errorf("dial upstream with %s: refused", secret)
	})
	model, m := script(t, g, calls(call("ledger", "l1", map[string]any{})), answer("It failed."))
	resp, err := genkit.Generate(logger.WithContext(context.Background(), debug), g, ai.WithModel(m), ai.WithPrompt("Read."),
		ai.WithTools(ledger), ai.WithUse(wrap))
	if err != nil {
		t.Fatal(err)
	}
	history, err := json.Marshal(resp.History())
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{
		"the model's requests": string(bytes.Join(model.bodies(), []byte("\n"))),
		"the conversation":     string(history),
	} {
		if family, _ := canary.Find(text); family != "" || strings.Contains(text, "dial upstream") {
			t.Errorf("%s carry the tool's error", where)
		}
	}
	var toolSpan, toolLog bool
	for _, block := range strings.Split(spans.String(), "\nspan ") {
		if strings.HasPrefix(strings.TrimPrefix(block, "span "), "ledger ") {
			toolSpan = strings.Contains(block, secret)
		} else if strings.Contains(block, secret) {
			t.Errorf("a span other than the tool's own carries the secret:\n%s", block)
		}
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, secret) {
			if strings.Contains(line, `msg="span finished" name=ledger`) {
				toolLog = true
			} else {
				t.Errorf("a log line other than the tool span's carries the secret: %s", line)
			}
		}
	}
	if !toolSpan || !toolLog {
		t.Errorf("Genkit's span of the tool records its error: %v, and logs it: %v; the README says both", toolSpan, toolLog)
	}
}
