// Package sinkrig is a test rig: the default stack with every sink on — a
// zerolog logger at DEBUG, an OpenTelemetry tracer and meter, an events
// sink — and a record of what the model was told, for the canary tests of
// the layers that are inserted into it. It is for tests only.
package sinkrig

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// Rig is the default stack with every sink on, and a record of what the
// model was told. Its methods are safe for concurrent use, but for Insert.
type Rig struct {
	Stack  middleware.Stack // the stack to wrap tools with
	logs   bytes.Buffer
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
	em     *events.Emitter

	mu   sync.Mutex
	evs  []events.Event
	told strings.Builder
}

// New returns a Rig; it fails t when the stack cannot be made.
func New(t testing.TB) *Rig {
	t.Helper()
	r := &Rig{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	r.em = events.NewEmitter(events.SinkFunc(func(e events.Event) { r.mu.Lock(); r.evs = append(r.evs, e); r.mu.Unlock() }))
	s, err := middleware.Default(
		middleware.WithLogger(zerolog.New(zerolog.SyncWriter(&r.logs))), // DEBUG: every line
		middleware.WithTracing(
			tracing.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(r.spans))),
			tracing.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader)))),
		middleware.WithRetry(retry.WithBackoff(time.Microsecond, time.Microsecond)),
	).Replace(middleware.Events, r.em.Middleware())
	if err != nil {
		t.Fatal(err)
	}
	r.Stack = s
	return r
}

// Insert puts mw into the stack before the layer named.
func (r *Rig) Insert(t testing.TB, before, name string, mw toolmw.Middleware) {
	t.Helper()
	s, err := r.Stack.InsertBefore(before, middleware.Layer{Name: name, Middleware: mw})
	if err != nil {
		t.Fatal(err)
	}
	r.Stack = s
}

// Tell records what the model is told of a call's outcome, and its record.
func (r *Rig) Tell(res toolmw.Result, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.told.WriteString(toolmw.ForModel(res, err))
	b, _ := json.Marshal(taxonomy.InfoOf(err))
	r.told.Write(b)
}

// Sinks returns the text of every sink, by name: model, logs, spans,
// metrics and events.
func (r *Rig) Sinks(t testing.TB) map[string]string {
	t.Helper()
	if err := r.em.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var spans strings.Builder
	for _, sp := range r.spans.GetSpans() {
		fmt.Fprintf(&spans, "%s %v %q\n", sp.Name, sp.Attributes, sp.Status.Description)
		for _, e := range sp.Events {
			fmt.Fprintf(&spans, " %s %v", e.Name, e.Attributes)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	evs, _ := json.Marshal(r.evs)
	return map[string]string{
		"model":   r.told.String(),
		"logs":    r.logs.String(),
		"spans":   spans.String(),
		"metrics": fmt.Sprintf("%+v", rm),
		"events":  string(evs),
	}
}

// NoLeak fails when a sink holds a piece of a planted secret, or when a
// sink other than the logs holds one of words: the logging layer writes
// the scrubbed text of errors and causes on its DEBUG line, by design, so
// only secrets are looked for there.
func NoLeak(t testing.TB, sinks map[string]string, words ...string) {
	t.Helper()
	for sink, text := range sinks {
		if family, found := canary.Find(text); family != "" {
			i := strings.Index(text, found)
			t.Errorf("%s: the %s canary leaked (%q) near %q", sink, family, found, text[max(0, i-120):min(len(text), i+60)])
		}
		for _, w := range words {
			if sink == "logs" {
				break
			}
			if strings.Contains(text, w) {
				t.Errorf("%s holds %q", sink, w)
			}
		}
	}
}

// CallIDPrefixes begin the call ids model APIs make (OpenAI's call_ and
// fc_, Anthropic's toolu_01, and a few more): a secret glued to one hides
// from a scrubber that looks where words start.
var CallIDPrefixes = []string{"call_", "call", "toolu_01", "toolu_01Ab3", "fc_", "fc_67ab", "call-", "x", "0"}

// GluedCallIDs returns the call ids a hostile model may send to carry a
// canary into the sinks: each canary that a call id can hold (letters,
// digits and "_-.:") glued to each of CallIDPrefixes.
func GluedCallIDs() []string {
	var out []string
	for _, secret := range canary.Values() {
		if strings.Trim(secret, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:") != "" {
			continue // a blank, an '@': the id is replaced whole
		}
		for _, p := range CallIDPrefixes {
			out = append(out, p+secret)
		}
	}
	return out
}
