package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/testrig/sinkrig"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// foreignErr is a taxonomy.Error made outside toolmw that says anything in
// its kind, code and tool.
type foreignErr struct{ s string }

func (f foreignErr) Error() string             { return "foreign " + f.s }
func (f foreignErr) Unwrap() error             { return nil }
func (f foreignErr) Kind() taxonomy.Kind       { return taxonomy.Kind(f.s) }
func (f foreignErr) Code() string              { return f.s }
func (f foreignErr) Tool() string              { return f.s }
func (f foreignErr) Retryable() bool           { return false }
func (f foreignErr) RetryAfter() time.Duration { return 1 << 62 }

// TestHostileInputCanaries plants secrets where the authors of a tool do
// not control them — argument keys, map keys, the model's call id, a
// foreign error's kind, code and tool, header and form dumps in messages —
// and calls through middleware.Default with every sink on: a zerolog
// logger at DEBUG, an OpenTelemetry tracer and meter, an events sink, and
// what the model is told. None of them may hold any piece of a secret.
func TestHostileInputCanaries(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := zerolog.New(zerolog.SyncWriter(&logs)) // DEBUG: every line
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	var evs []events.Event
	em := events.NewEmitter(events.SinkFunc(func(e events.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() }))
	s, err := middleware.Default(
		middleware.WithLogger(logger),
		middleware.WithTracing(tracing.WithTracerProvider(tp), tracing.WithMeterProvider(mp)),
		middleware.WithRetry(retry.WithMaxAttempts(1)),
	).Replace(middleware.Events, em.Middleware())
	if err != nil {
		t.Fatal(err)
	}

	type args struct {
		A int            `json:"a"`
		M map[string]int `json:"m"`
	}
	typedTool, err := s.Wrap(toolmw.Spec{Name: "book"}, toolmw.Typed(func(context.Context, args) (string, error) { return "ok", nil }))
	if err != nil {
		t.Fatal(err)
	}
	var told strings.Builder
	call := func(tool toolmw.Tool, id string, raw string) {
		ctx := toolmw.WithCallID(context.Background(), id)
		res, err := tool(ctx, json.RawMessage(raw))
		if err == nil {
			t.Fatalf("call %s with %s succeeded", id, raw)
		}
		told.WriteString(toolmw.ForModel(res, err))
		b, _ := json.Marshal(taxonomy.InfoOf(err))
		told.Write(b)
	}
	calls := 0
	for _, secret := range canary.Values() {
		key, _ := json.Marshal(secret)
		// Argument keys and map keys.
		call(typedTool, "call_1", fmt.Sprintf(`{"a":1,"m":{},%s:1}`, key))
		call(typedTool, "call_2", fmt.Sprintf(`{"a":1,"m":{%s:"x"}}`, key))
		// The model's call id.
		call(typedTool, secret, `{"a":"one","m":{}}`)
		calls += 3

		for name, fail := range map[string]error{
			"foreign code": foreignErr{secret},
			"header dump":  taxonomy.Failure("upstream_refused", fmt.Sprintf("request headers %v", http.Header{"Authorization": {"Bearer " + secret}, "Cookie": {"session=" + secret}})),
			"form dump":    taxonomy.Failure("upstream_refused", fmt.Sprintf("form %v", url.Values{"password": {secret}, "client_secret": {secret}})),
			"encoded form": taxonomy.Failure("upstream_refused", "body "+url.Values{"api_key": {secret}}.Encode()),
			"json array":   taxonomy.Failure("upstream_refused", fmt.Sprintf(`config {"api_keys":[%s]}`, key)),
			"untyped":      fmt.Errorf("dial with %s", secret),
		} {
			tool, err := s.Wrap(toolmw.Spec{Name: "raw"}, func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Result{}, fail })
			if err != nil {
				t.Fatal(name, err)
			}
			call(tool, "call_3", `{}`)
			calls++
		}
	}
	if err := em.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	evJSON, _ := json.Marshal(evs)
	var spanText strings.Builder
	for _, sp := range spans.GetSpans() {
		fmt.Fprintf(&spanText, "%s %v %q", sp.Name, sp.Attributes, sp.Status.Description)
		for _, e := range sp.Events {
			fmt.Fprintf(&spanText, " %s %v", e.Name, e.Attributes)
		}
	}
	for sink, text := range map[string]string{
		"model":   told.String(),
		"logs":    logs.String(),
		"spans":   spanText.String(),
		"metrics": fmt.Sprintf("%+v", rm),
		"events":  string(evJSON),
	} {
		if family, found := canary.Find(text); family != "" {
			i := strings.Index(text, found)
			t.Errorf("%s: the %s canary leaked (%q) near %q", sink, family, found, text[max(0, i-120):min(len(text), i+60)])
		}
	}
	if len(evs) != calls || len(spans.GetSpans()) != calls {
		t.Errorf("%d events, %d spans for %d calls", len(evs), len(spans.GetSpans()), calls)
	}
}

// TestGluedCallIDCanaries: a model that glues a secret to the prefix of a
// call id (call_ghp_…, call_AKIA…, toolu_01 and a token, fc_…), where a
// scrubber looking for words does not see it, gets the id replaced: through
// the default stack with dedupe inserted and every sink on (logs at DEBUG,
// so every level), on success, failure, refusal, untyped error, bad
// arguments and a repeat, no sink holds any piece of the secret, and the
// spans and events name the call by its replaced id.
func TestGluedCallIDCanaries(t *testing.T) {
	r := sinkrig.New(t)
	r.Insert(t, middleware.Retry, "dedupe", dedupe.New())
	type args struct {
		A int `json:"a"`
	}
	outcomes := map[string]error{
		"success": nil,
		"failure": taxonomy.Failure("ledger_rejected", "the ledger refused"),
		"refusal": taxonomy.Refusal("card_declined", "declined"),
		"untyped": fmt.Errorf("dial upstream: refused"),
	}
	ids := sinkrig.GluedCallIDs()
	if len(ids) < 20 {
		t.Fatalf("%d glued ids", len(ids))
	}
	calls := 0
	for name, fail := range outcomes {
		tool, err := r.Stack.Wrap(toolmw.Spec{Name: "book"}, toolmw.Typed(func(context.Context, args) (string, error) {
			if fail != nil {
				return "", fail
			}
			return "booked", nil
		}))
		if err != nil {
			t.Fatal(name, err)
		}
		for _, id := range ids {
			ctx := toolmw.WithCallID(budget.WithRun(context.Background()), id)
			for _, in := range []string{`{"a":1}`, `{"a":1}`, `{"a":"one"}`} { // a call, its repeat, bad arguments
				res, err := tool(ctx, json.RawMessage(in))
				r.Tell(res, err)
				calls++
			}
		}
	}
	sinks := r.Sinks(t)
	sinkrig.NoLeak(t, sinks)
	for _, sink := range []string{"spans", "events", "logs"} {
		if !strings.Contains(sinks[sink], "invalid_call_id_") {
			t.Errorf("%s: no replaced call id", sink)
		}
	}
	t.Logf("%d calls with %d glued ids", calls, len(ids))
}
