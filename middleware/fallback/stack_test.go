package fallback_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/middleware/fallback"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// TestOutsideRetry: in the default stack, just outside retry, the layer
// acts only once the retries gave up. A dependency that goes down is
// retried (3 attempts a call) while its failures are tool-failed, which is
// not a chosen kind; once the real breaker opens, retry fails closed on
// the 30 s open period (WithMaxWait 1 s) with the breaker's kind, and the
// call is served the last good result, marked. The observers see the
// served call as a success, and its span says what stood in.
func TestOutsideRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spans := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
		var mu sync.Mutex
		var evs []events.Event
		em := events.NewEmitter(events.SinkFunc(func(e events.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() }))
		stack, err := middleware.Default(
			middleware.WithTracing(tracing.WithTracerProvider(tp)),
			middleware.WithRetry(retry.WithMaxWait(time.Second)),
		).Replace(middleware.Events, em.Middleware())
		if err != nil {
			t.Fatal(err)
		}
		stack, err = stack.InsertBefore(middleware.Retry, middleware.Layer{Name: middleware.Fallback, Middleware: fallback.New(fallback.WithLastGood(time.Hour), fallback.WithSharedResults())})
		if err != nil {
			t.Fatal(err)
		}
		if want := "tracing → logging → events → fallback → retry"; !strings.HasPrefix(stack.String(), want) {
			t.Fatalf("stack %s", stack)
		}
		var down atomic.Bool
		var execs atomic.Int64
		tool, err := stack.Wrap(search, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			execs.Add(1)
			if down.Load() {
				return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier is down")
			}
			return toolmw.Text("3 flights"), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := tool(ctx, nil); err != nil {
			t.Fatal(err)
		}
		down.Store(true)
		execs.Store(0)
		res, err := tool(ctx, nil)
		if taxonomy.InfoOf(err).Code != taxonomy.CodeUpstreamUnavailable || execs.Load() != 3 {
			t.Fatalf("first failing call: %q, %v after %d executions; want the failure after 3 attempts", res.Content, err, execs.Load())
		}
		var m fallback.Mark
		for i := 0; ; i++ {
			res, err = tool(ctx, nil)
			var ok bool
			if m, _, ok = fallback.Parse(res); ok {
				break
			}
			if i == 10 {
				t.Fatalf("never served: %v", err)
			}
		}
		if err != nil || m.Source != fallback.SourceLastGood || m.Kind != taxonomy.KindCircuitOpen {
			t.Fatalf("%q, %v, mark %+v", res.Content, err, m)
		}
		if err := em.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		got := spans.GetSpans()
		last := got[len(got)-1]
		marked := false
		for _, a := range last.Attributes {
			if a.Key == tracing.KeyOutcome && a.Value.AsString() != "ok" {
				t.Fatalf("the served call's span: %v", last.Attributes)
			}
			marked = marked || a.Key == tracing.KeyFallback && a.Value.AsString() == string(fallback.SourceLastGood)
		}
		if !marked {
			t.Errorf("the served call's span has no %s=last_good: %v", tracing.KeyFallback, last.Attributes)
		}
		for _, a := range got[0].Attributes {
			if a.Key == tracing.KeyFallback {
				t.Errorf("the tool's own success is marked %v", a)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(evs) != len(got)-2 { // every failed call has an event; the first and the served one do not
			t.Fatalf("%d events for %d spans", len(evs), len(got))
		}
	})
}

// TestCanaries plants secrets in the arguments, the call id, and the
// errors (their messages, causes and wrappers) of a tool served by the
// layer in the default stack, and reads every sink: what the model is
// told of a served call, the Event of WithOnServe, the tool_error events
// and the spans. None holds any piece of a secret; a served result holds
// no word of the error either.
func TestCanaries(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	var mu sync.Mutex
	var evs []events.Event
	var served []fallback.Event
	em := events.NewEmitter(events.SinkFunc(func(e events.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() }))
	stack, err := middleware.Default(
		middleware.WithTracing(tracing.WithTracerProvider(tp)),
		middleware.WithRetry(retry.WithMaxAttempts(1)),
	).Replace(middleware.Events, em.Middleware())
	if err != nil {
		t.Fatal(err)
	}
	layer := fallback.New(
		fallback.WithKinds(taxonomy.KindFailed, taxonomy.KindTimeout, taxonomy.KindCircuitOpen, taxonomy.KindRateLimited),
		fallback.WithLastGood(0), fallback.WithSharedResults(),
		fallback.WithOnServe(func(e fallback.Event) { mu.Lock(); served = append(served, e); mu.Unlock() }))
	stack, err = stack.InsertBefore(middleware.Retry, middleware.Layer{Name: middleware.Fallback, Middleware: layer})
	if err != nil {
		t.Fatal(err)
	}

	var told strings.Builder
	calls, marked := 0, 0
	for _, secret := range canary.Values() {
		key, _ := json.Marshal(secret)
		args := json.RawMessage(fmt.Sprintf(`{"q":%s,%s:1}`, key, key))
		for name, fail := range canary.All(secret) {
			var down atomic.Bool
			tool, err := stack.Wrap(search, func(context.Context, json.RawMessage) (toolmw.Result, error) {
				if down.Load() {
					return toolmw.Result{}, fail
				}
				return toolmw.Text("3 flights"), nil
			})
			if err != nil {
				t.Fatal(name, err)
			}
			for _, id := range []string{"call_1", secret} {
				ctx := toolmw.WithCallID(context.Background(), id)
				down.Store(false)
				if _, err := tool(ctx, args); err != nil {
					t.Fatal(name, err)
				}
				down.Store(true)
				res, err := tool(ctx, args)
				calls++
				if _, _, ok := fallback.Parse(res); ok && err == nil {
					marked++
					told.WriteString(toolmw.ForModel(res, nil))
					for _, w := range append(canary.HiddenText, canary.MessageText...) {
						if strings.Contains(res.Content, w) {
							t.Errorf("%s: the served result holds %q of the error: %q", name, w, res.Content)
						}
					}
				}
			}
		}
	}
	if err := em.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var spanText strings.Builder
	for _, sp := range spans.GetSpans() {
		fmt.Fprintf(&spanText, "%s %v %q", sp.Name, sp.Attributes, sp.Status.Description)
		for _, e := range sp.Events {
			fmt.Fprintf(&spanText, " %s %v", e.Name, e.Attributes)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	evJSON, _ := json.Marshal(evs)
	if len(served) != marked || marked == 0 || marked == calls {
		t.Fatalf("%d of %d calls served, %d callbacks: the canaries must cover both", marked, calls, len(served))
	}
	for sink, text := range map[string]string{
		"model":    told.String(),
		"callback": fmt.Sprintf("%+v", served),
		"events":   string(evJSON),
		"spans":    spanText.String(),
	} {
		if family, found := canary.Find(text); family != "" {
			t.Errorf("%s: a %s canary leaked (%q)", sink, family, found)
		}
	}
	t.Logf("%d calls, %d served a marked fallback", calls, marked)
}
