package approval_test

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
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// TestCanariesThroughTheDefaultStack plants secrets in the arguments of
// gated calls made through middleware.Default with every sink on (a
// zerolog logger at DEBUG, an OpenTelemetry tracer, an events sink, the
// model), through pending, denied, replayed and approved outcomes: no
// sink holds any piece of a secret, and every call makes one span and,
// when it fails, one event.
func TestCanariesThroughTheDefaultStack(t *testing.T) {
	var logs bytes.Buffer
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	var mu sync.Mutex
	var evs []events.Event
	em := events.NewEmitter(events.SinkFunc(func(e events.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() }))
	desk := approval.NewDesk(approval.WithStore(approval.NewMemoryStore()), approval.WithSealKey(key))
	s, err := middleware.Default(
		middleware.WithLogger(zerolog.New(zerolog.SyncWriter(&logs))),
		middleware.WithTracing(tracing.WithTracerProvider(tp)),
	).Replace(middleware.Events, em.Middleware())
	if err != nil {
		t.Fatal(err)
	}
	s, err = s.InsertBefore(middleware.Retry, middleware.Layer{Name: "approval", Middleware: desk.Middleware(approval.Tools("cancel_booking"))})
	if err != nil {
		t.Fatal(err)
	}
	var c counter
	tool, err := s.Wrap(toolmw.Spec{Name: "cancel_booking"}, c.tool)
	if err != nil {
		t.Fatal(err)
	}
	var told, reviewer strings.Builder
	calls, failed := 0, 0
	call := func(callID string, args []byte) error {
		calls++
		res, err := tool(runCtx(callID), args)
		if err != nil {
			failed++
		}
		told.WriteString(toolmw.ForModel(res, err))
		b, _ := json.Marshal(taxonomy.InfoOf(err))
		told.Write(b)
		return err
	}
	ctx := context.Background()
	for i, secret := range canary.Values() {
		key, _ := json.Marshal(secret)
		args := fmt.Appendf(nil, `{"booking":"BK-%d","note":%s,%s:"x","auth":{"token":%s}}`, i, key, key, key)
		for j, decide := range []func(approval.Request) error{
			func(r approval.Request) error { return desk.Approve(ctx, r, time.Hour) },
			func(r approval.Request) error { return desk.Deny(ctx, r) },
		} {
			callID := fmt.Sprintf("call_%d_%d", i, j)
			err := call(callID, args)
			id := expect(t, err, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
			req, gerr := desk.Get(ctx, id)
			if gerr != nil {
				t.Fatal(gerr)
			}
			reviewer.WriteString(req.Summary)
			if err := decide(req); err != nil {
				t.Fatal(err)
			}
			_ = call(callID, args) // runs, or is denied
			_ = call(callID, args) // replayed, or denied again
		}
	}
	if err := em.Flush(ctx); err != nil {
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
		"model": told.String(), "logs": logs.String(), "spans": spanText.String(),
		"events": string(evJSON), "reviewer's summary": reviewer.String(),
	} {
		if family, found := canary.Find(text); family != "" {
			i := strings.Index(text, found)
			t.Errorf("%s: the %s canary leaked (%q) near %q", sink, family, found, text[max(0, i-120):min(len(text), i+60)])
		}
	}
	if n := int(c.n.Load()); n != len(canary.Values()) {
		t.Errorf("%d executions, want %d (one per approval)", n, len(canary.Values()))
	}
	if len(spans.GetSpans()) != calls || len(evs) != failed {
		t.Errorf("%d spans and %d events for %d calls, %d failed", len(spans.GetSpans()), len(evs), calls, failed)
	}
	for _, e := range evs {
		if e.ApprovalID == "" && (e.Outcome == taxonomy.OutcomePending || e.Outcome == taxonomy.OutcomeDenied) {
			t.Errorf("an event of outcome %s without its approval id", e.Outcome)
		}
	}
}

// TestOutsideDedupe: with dedupe inside the approval layer, the call made
// again after the decision resumes and runs once; the repeat after that is
// refused by the approval layer before dedupe sees it.
func TestOutsideDedupe(t *testing.T) {
	desk := approval.NewDesk(approval.WithStore(approval.NewMemoryStore()), approval.WithSealKey(key))
	var c counter
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, c.tool, desk.Middleware(nil), dedupe.New())
	call := func() error { _, err := tool(runCtx("call_1"), json.RawMessage(booking)); return err }
	id := expect(t, call(), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	req, err := desk.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if err := desk.Approve(context.Background(), req, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := call(); err != nil {
		t.Fatalf("the resumed call: %v", err)
	}
	expect(t, call(), taxonomy.KindNotPermitted, taxonomy.CodeApprovalReplayed)
	if c.n.Load() != 1 {
		t.Fatalf("%d executions, want 1", c.n.Load())
	}
}

// TestInsideDedupe: with dedupe outside the approval layer, the pending
// outcome is not kept (nothing ran), so the call made again after the
// decision resumes and runs once, and a repeat after that gets the
// recorded result from dedupe without running the tool again.
func TestInsideDedupe(t *testing.T) {
	desk := approval.NewDesk(approval.WithStore(approval.NewMemoryStore()), approval.WithSealKey(key))
	var c counter
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, c.tool, dedupe.New(), desk.Middleware(nil))
	ctx := runCtx("call_1")
	call := func() error { _, err := tool(ctx, json.RawMessage(booking)); return err }
	id := expect(t, call(), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	req, err := desk.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if err := desk.Approve(context.Background(), req, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := call(); err != nil {
		t.Fatalf("the resumed call: %v", err)
	}
	if err := call(); err != nil {
		t.Fatalf("the repeat: %v, want dedupe's recorded success", err)
	}
	if c.n.Load() != 1 {
		t.Fatalf("%d executions, want 1", c.n.Load())
	}
}
