package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// recorder is a TracerProvider that keeps, as text, everything the SDK
// puts on its spans: names, attributes, statuses, events and errors.
type recorder struct {
	embedded.TracerProvider
	mu   sync.Mutex
	text strings.Builder
}

func (r *recorder) Tracer(string, ...trace.TracerOption) trace.Tracer { return tracer{r: r} }

func (r *recorder) write(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(&r.text, format+"\n", args...)
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.text.String()
}

type tracer struct {
	embedded.Tracer
	r *recorder
}

func (t tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	s := &span{r: t.r}
	cfg := trace.NewSpanStartConfig(opts...)
	s.r.write("span %s %v", name, cfg.Attributes())
	return trace.ContextWithSpan(ctx, s), s
}

type span struct {
	embedded.Span
	r *recorder
}

func (s *span) End(...trace.SpanEndOption) {}
func (s *span) AddEvent(name string, o ...trace.EventOption) {
	cfg := trace.NewEventConfig(o...)
	s.r.write("event %s %v", name, cfg.Attributes())
}
func (s *span) AddLink(trace.Link) {}
func (s *span) IsRecording() bool  { return true }
func (s *span) RecordError(err error, o ...trace.EventOption) {
	cfg := trace.NewEventConfig(o...)
	s.r.write("error %v %v", err, cfg.Attributes())
}
func (s *span) SpanContext() trace.SpanContext         { return trace.SpanContext{} }
func (s *span) SetStatus(c codes.Code, desc string)    { s.r.write("status %v %s", c, desc) }
func (s *span) SetName(name string)                    { s.r.write("name %s", name) }
func (s *span) SetAttributes(kv ...attribute.KeyValue) { s.r.write("attributes %v", kv) }
func (s *span) TracerProvider() trace.TracerProvider   { return s.r }

// TestBetaToolsTelemetry: the runner's own telemetry (its OpenTelemetry
// spans in content mode, which record each tool's arguments and result)
// carries no secret of a failing tool made here, while the same tool
// given to the runner unwrapped leaks it there and to the model: the
// runner's "Error: %v".
func TestBetaToolsTelemetry(t *testing.T) {
	secret := canary.Secrets[3].Value
	leaky := betaTool{name: "leaky", exec: func(context.Context, json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
		return nil, errors.New("dial upstream with " + secret)
	}}
	for _, wrapped := range []bool{true, false} {
		t.Run(fmt.Sprintf("wrapped=%v", wrapped), func(t *testing.T) {
			var tool anthropic.BetaTool = leaky
			if wrapped {
				var err error
				if tool, err = toolanthropic.WrapBetaTool(leaky, toolmw.Spec{}, fastStack(t)); err != nil {
					t.Fatal(err)
				}
			}
			rec := &recorder{}
			rp := replay.New("/v1/messages", replay.ToolUses("", replay.ToolUse{ID: "toolu_T", Name: "leaky", Input: `{}`}), replay.Answer("done"))
			srv := httptest.NewServer(rp)
			tr := &http.Transport{}
			t.Cleanup(func() {
				tr.CloseIdleConnections()
				srv.Close()
			})
			client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("sk-ant-test-replay"),
				option.WithMaxRetries(0), option.WithHTTPClient(&http.Client{Transport: tr}),
				option.WithTracerProvider(rec), option.WithOpenTelemetryTracesContentMode(option.OpenTelemetryContentModeContent))
			runner := newRunner(client, []anthropic.BetaTool{tool}, ask("Go."))
			ctx, run := toolanthropic.WithBetaRunner(context.Background(), runner)
			_, err := runner.RunToCompletion(ctx)
			if err := run.End(err); err != nil {
				t.Fatal(err)
			}
			spans := rec.String()
			if !strings.Contains(spans, "toolu_T") || !strings.Contains(spans, "anthropic.custom_tool_use leaky") {
				t.Fatalf("no span of the tool call:\n%s", spans)
			}
			family, _ := canary.Find(spans)
			body := string(withoutEcho(t, rp.Requests()[1]))
			leaked := family != "" || strings.Contains(spans, "dial upstream") || strings.Contains(body, "dial upstream")
			if leaked == wrapped {
				t.Errorf("leaked %v (spans %q), want %v:\n%s\n%s", leaked, family, !wrapped, spans, body)
			}
		})
	}
}
