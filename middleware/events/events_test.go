package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// collector is a Sink that keeps what it receives.
type collector struct {
	mu     sync.Mutex
	events []events.Event
}

func (c *collector) Emit(e events.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, e)
}

func (c *collector) all() []events.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]events.Event(nil), c.events...)
}

func returning(err error) toolmw.Tool {
	return func(context.Context, json.RawMessage) (toolmw.Result, error) {
		if err != nil {
			return toolmw.Result{}, err
		}
		return toolmw.Text("done"), nil
	}
}

func flush(t *testing.T, e *events.Emitter) {
	t.Helper()
	if err := e.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestEvent(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want *events.Event // nil: no event
	}{
		{name: "success emits nothing", err: nil},
		{
			name: "refusal", err: taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable"),
			want: &events.Event{Outcome: taxonomy.OutcomeRefused, Kind: taxonomy.KindRefused, Code: "booking_not_cancellable", Attempts: 1,
				Told: `<untrusted-data source="tool_refusal">booking_not_cancellable: this fare is non-refundable</untrusted-data>`},
		},
		{
			name: "transient exhausted", err: taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier down").WithRetryAfter(2 * time.Second),
			want: &events.Event{Outcome: taxonomy.OutcomeFailed, Kind: taxonomy.KindFailed, Code: "upstream_unavailable", Retryable: true,
				RetryAfter: taxonomy.Seconds(2 * time.Second), Attempts: 3,
				Told: `<untrusted-data source="tool_error">tool-failed upstream_unavailable: supplier down</untrusted-data>`},
		},
		{
			name: "untyped text withheld", err: errors.New("dial tcp 10.0.0.1: refused"),
			want: &events.Event{Outcome: taxonomy.OutcomeFailed, Kind: taxonomy.KindFailed, Code: "unmapped_failure", Attempts: 1,
				Told: `<untrusted-data source="tool_error">tool-failed unmapped_failure</untrusted-data>`},
		},
		{
			name: "not permitted", err: taxonomy.NotPermitted(taxonomy.CodeNotPermitted, "not for this user"),
			want: &events.Event{Outcome: taxonomy.OutcomeNotPermitted, Kind: taxonomy.KindNotPermitted, Code: "not_permitted", Attempts: 1,
				Told: `<untrusted-data source="tool_error">tool-not-permitted not_permitted: not for this user</untrusted-data>`},
		},
		{
			name: "approval pending names the request", err: taxonomy.New(taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending, "waiting for a reviewer").WithApproval("apr_1", "book_flight {}"),
			want: &events.Event{Outcome: taxonomy.OutcomePending, Kind: taxonomy.KindApprovalPending, Code: "approval_pending", Attempts: 1, ApprovalID: "apr_1",
				Told: `<untrusted-data source="tool_error">approval-pending approval_pending: waiting for a reviewer</untrusted-data>`},
		},
		{
			name: "approval denied", err: taxonomy.New(taxonomy.KindApprovalDenied, taxonomy.CodeApprovalDenied, "a reviewer said no").WithApproval("apr_2", ""),
			want: &events.Event{Outcome: taxonomy.OutcomeDenied, Kind: taxonomy.KindApprovalDenied, Code: "approval_denied", Attempts: 1, ApprovalID: "apr_2",
				Told: `<untrusted-data source="tool_error">approval-denied approval_denied: a reviewer said no</untrusted-data>`},
		},
		{
			name: "cancellation", err: context.Canceled,
			want: &events.Event{Outcome: taxonomy.OutcomeCancelled, Kind: taxonomy.KindCancelled, Code: "cancelled", Attempts: 1,
				Told: `<untrusted-data source="tool_error">tool-cancelled cancelled</untrusted-data>`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sink collector
			em := events.NewEmitter(&sink, events.WithClock(clock.NewFake(epoch)))
			tool := toolmw.MustWrap(toolmw.Spec{Name: "book_flight"}, returning(tt.err), em.Middleware(), testutil.RetryN(3))
			_, err := tool(toolmw.WithCallID(context.Background(), "call_9"), nil)
			if (err != nil) != (tt.err != nil) {
				t.Fatalf("the call returned %v, want %v", err, tt.err)
			}
			flush(t, em)
			got := sink.all()
			if tt.want == nil {
				if len(got) != 0 {
					t.Fatalf("events %v, want none", got)
				}
				return
			}
			want := *tt.want
			want.Type, want.Time, want.Tool, want.CallID = events.TypeToolError, epoch, "book_flight", "call_9"
			if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
				t.Errorf("events\n got %+v\nwant %+v", got, want)
			}
			if s := em.Stats(); s != (events.Stats{Delivered: 1}) {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

func TestEventJSON(t *testing.T) {
	ev := events.Event{Type: events.TypeToolError, Time: epoch, Tool: "t", Outcome: taxonomy.OutcomeFailed, Kind: taxonomy.KindFailed,
		Code: "unmapped_failure", Attempts: 2, Told: "<untrusted-data/>", RetryAfter: taxonomy.Seconds(1500 * time.Millisecond)}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"tool_error","time":"2025-01-02T03:04:05Z","tool":"t","outcome":"failed","kind":"tool-failed","code":"unmapped_failure","retryable":false,"retry_after":1.5,"attempts":2,"told":"\u003cuntrusted-data/\u003e"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// A call that a layer decided on local state, because its shared store
// failed, says so in its event (and in the event's JSON); one that no layer
// marked has no degraded field.
func TestEventSaysDegraded(t *testing.T) {
	for _, degraded := range []string{"breaker", ""} {
		var sink collector
		em := events.NewEmitter(&sink, events.WithClock(clock.NewFake(epoch)))
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			if degraded != "" {
				toolmw.SetDegraded(ctx, degraded)
			}
			return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down")
		}, em.Middleware())
		_, _ = tool(context.Background(), nil)
		flush(t, em)
		got := sink.all()
		if len(got) != 1 || got[0].Degraded != degraded {
			t.Fatalf("events %+v, want one with Degraded %q", got, degraded)
		}
		b, err := json.Marshal(got[0])
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(b), `"degraded":"breaker"`); has != (degraded != "") {
			t.Errorf("JSON %s: degraded field present %v, want %v", b, has, degraded != "")
		}
	}
}

func TestWithoutCall(t *testing.T) {
	var sink collector
	em := events.NewEmitter(&sink, events.WithClock(clock.NewFake(epoch)))
	tool := em.Middleware()(returning(taxonomy.Refusal("no", "no").WithTool("named_by_error")))
	_, _ = tool(context.Background(), nil)
	flush(t, em)
	got := sink.all()
	if len(got) != 1 || got[0].Tool != "named_by_error" || got[0].CallID != "" || got[0].Attempts != 0 {
		t.Errorf("events %+v", got)
	}
}

func TestPanicIsEmittedAndGoesOn(t *testing.T) {
	var sink collector
	em := events.NewEmitter(&sink)
	tool := toolmw.MustWrap(toolmw.Spec{Name: "boom"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		panic("the value of the panic")
	}, em.Middleware())
	func() {
		defer func() {
			if v := recover(); v != "the value of the panic" {
				t.Errorf("recovered %v", v)
			}
		}()
		_, _ = tool(context.Background(), nil)
	}()
	flush(t, em)
	got := sink.all()
	if len(got) != 1 || got[0].Code != taxonomy.CodeToolPanicked || got[0].Told != `<untrusted-data source="tool_error">tool-failed tool_panicked: the tool panicked</untrusted-data>` {
		t.Errorf("events %+v", got)
	}
}

func TestNilSinkReturnsTheToolUnchanged(t *testing.T) {
	tool := returning(nil)
	if got := events.New(nil)(tool); reflect.ValueOf(got).Pointer() != reflect.ValueOf(tool).Pointer() {
		t.Error("the tool was wrapped")
	}
}

func TestPanickingSink(t *testing.T) {
	var sink collector
	calls := 0
	em := events.NewEmitter(events.SinkFunc(func(e events.Event) {
		calls++
		if calls == 1 {
			panic("sink broke")
		}
		sink.Emit(e)
	}))
	tool := em.Middleware()(returning(errors.New("x")))
	for i := 0; i < 3; i++ {
		if _, err := tool(context.Background(), nil); err == nil || err.Error() != "x" {
			t.Fatalf("the call returned %v", err)
		}
	}
	flush(t, em)
	if s := em.Stats(); s != (events.Stats{Delivered: 2, Panicked: 1}) {
		t.Errorf("stats %+v", s)
	}
	if n := len(sink.all()); n != 2 {
		t.Errorf("%d events delivered after the panic, want 2", n)
	}
}

// TestBlockingSink: a sink that blocks stalls no call; events beyond the
// queue are dropped and counted; once the sink returns, Flush returns.
func TestBlockingSink(t *testing.T) {
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var sink collector
	em := events.NewEmitter(events.SinkFunc(func(e events.Event) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
		sink.Emit(e)
	}), events.WithQueueSize(2))
	tool := em.Middleware()(returning(errors.New("x")))

	_, _ = tool(context.Background(), nil)
	<-entered // the sink holds the first event
	for i := 0; i < 9; i++ {
		_, _ = tool(context.Background(), nil) // none of these waits for the sink
	}
	if s := em.Stats(); s != (events.Stats{Dropped: 7}) {
		t.Errorf("stats while blocked %+v, want 7 dropped", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := em.Flush(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Flush with the sink blocked = %v, want context.Canceled", err)
	}
	close(release)
	flush(t, em)
	if s := em.Stats(); s != (events.Stats{Delivered: 3, Dropped: 7}) {
		t.Errorf("stats %+v", s)
	}
}

func TestOrderAndConcurrency(t *testing.T) {
	var sink collector
	em := events.NewEmitter(&sink, events.WithQueueSize(1000))
	tool := em.Middleware()(func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Refusal("no", "no")
	})
	// Sequential calls arrive in order.
	for i := 0; i < 20; i++ {
		_, _ = tool(toolmw.WithCallID(context.Background(), fmt.Sprint(i)), nil)
	}
	flush(t, em)
	for i, e := range sink.all() {
		if e.CallID != "" { // no Wrap: call ids are not carried
			t.Fatalf("event %d: call id %q", i, e.CallID)
		}
	}
	wrapped := toolmw.MustWrap(toolmw.Spec{Name: "t"}, returning(taxonomy.Refusal("no", "no")), em.Middleware())
	for i := 0; i < 20; i++ {
		_, _ = wrapped(toolmw.WithCallID(context.Background(), fmt.Sprint(i)), nil)
	}
	flush(t, em)
	got := sink.all()[20:]
	for i, e := range got {
		if e.CallID != fmt.Sprint(i) {
			t.Fatalf("event %d has call id %q: out of order", i, e.CallID)
		}
	}
	// Concurrent calls all arrive.
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				_, _ = wrapped(context.Background(), nil)
			}
		}()
	}
	wg.Wait()
	flush(t, em)
	if n := len(sink.all()); n != 440 {
		t.Errorf("%d events, want 440", n)
	}
	if s := em.Stats(); s.Dropped != 0 || s.Delivered != 440 {
		t.Errorf("stats %+v", s)
	}
}

func TestFlushIdle(t *testing.T) {
	em := events.NewEmitter(&collector{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := em.Flush(ctx); err != nil {
		t.Errorf("Flush of an idle emitter = %v", err)
	}
}

func TestQueueSizeZeroIsDefault(t *testing.T) {
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	em := events.NewEmitter(events.SinkFunc(func(events.Event) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
	}), events.WithQueueSize(0), nil, events.WithClock(nil))
	tool := em.Middleware()(returning(errors.New("x")))
	_, _ = tool(context.Background(), nil)
	<-entered
	for i := 0; i < events.DefaultQueueSize+5; i++ {
		_, _ = tool(context.Background(), nil)
	}
	if s := em.Stats(); s.Dropped != 5 {
		t.Errorf("dropped %d, want 5", s.Dropped)
	}
	close(release)
	flush(t, em)
}

func TestValidate(t *testing.T) {
	bad := events.WithQueueSize(-1)
	for how, err := range map[string]error{
		"Validate": events.Validate(bad),
		"Wrap": func() error {
			_, err := toolmw.Wrap(toolmw.Spec{Name: "t"}, returning(nil), events.New(&collector{}, bad))
			return err
		}(),
	} {
		if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindDefinitionInvalid || info.Code != taxonomy.CodeOptionInvalid {
			t.Errorf("%s: %v, want tool-definition-invalid/option_invalid", how, err)
		}
	}
	if err := events.Validate(events.WithQueueSize(0), events.WithClock(nil), nil); err != nil {
		t.Errorf("zero and nil values are the defaults: %v", err)
	}
}

// TestQueueBoundedInBytes: a stuck sink and calls failing with 1 MiB
// messages. The queue keeps at most WithQueueBytes of events, each Told cut
// to WithMaxTold, so the heap does not grow by queue size × event size
// (256 MiB here) but by about a megabyte.
func TestQueueBoundedInBytes(t *testing.T) {
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var got []events.Event
	em := events.NewEmitter(events.SinkFunc(func(ev events.Event) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
		got = append(got, ev)
	}))
	huge := strings.Repeat("x", 1<<20)
	tool := em.Middleware()(returning(taxonomy.Failure("ledger_rejected", huge)))

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _ = tool(context.Background(), nil)
	<-entered // the sink holds the first event; the rest queue
	for range events.DefaultQueueSize {
		_, _ = tool(context.Background(), nil)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(tool) // and with it the 1 MiB message, counted in before
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap grew by %d KiB holding %d queued events (dropped %d)", grew>>10, events.DefaultQueueSize-int(em.Stats().Dropped), em.Stats().Dropped)
	if grew > 4<<20 {
		t.Errorf("heap grew by %d bytes; the queue's bound is %d", grew, events.DefaultQueueBytes)
	}
	if em.Stats().Dropped == 0 {
		t.Error("nothing was dropped: the byte bound did not bite")
	}
	close(release)
	flush(t, em)
	for _, ev := range got {
		if !ev.ToldCut || len(ev.Told) > events.DefaultMaxTold || !utf8.ValidString(ev.Told) {
			t.Fatalf("Told of %d bytes, cut=%v, valid UTF-8=%v", len(ev.Told), ev.ToldCut, utf8.ValidString(ev.Told))
		}
	}
	if want := uint64(len(got)) + em.Stats().Dropped; want != events.DefaultQueueSize+1 {
		t.Errorf("delivered %d + dropped %d, want every one of %d calls accounted for", len(got), em.Stats().Dropped, events.DefaultQueueSize+1)
	}
}

func TestValidateBounds(t *testing.T) {
	for _, o := range []events.Option{events.WithQueueBytes(-1), events.WithMaxTold(-1)} {
		if info := taxonomy.InfoOf(events.Validate(o)); info.Code != taxonomy.CodeOptionInvalid {
			t.Errorf("a negative bound: %+v", info)
		}
	}
	if err := events.Validate(events.WithQueueBytes(0), events.WithMaxTold(0)); err != nil {
		t.Errorf("zero bounds are the defaults: %v", err)
	}
}

func TestToldCutAtACharacter(t *testing.T) {
	var got events.Event
	em := events.NewEmitter(events.SinkFunc(func(ev events.Event) { got = ev }), events.WithMaxTold(101))
	_, _ = em.Middleware()(returning(taxonomy.Failure("ledger_rejected", strings.Repeat("é", 100))))(context.Background(), nil)
	flush(t, em)
	if !got.ToldCut || len(got.Told) > 101 || !utf8.ValidString(got.Told) || !strings.HasSuffix(got.Told, "é") {
		t.Fatalf("Told %q (%d bytes), cut=%v", got.Told, len(got.Told), got.ToldCut)
	}
}
