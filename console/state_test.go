package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/console"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// gauge is a layer instance publishing one value into a test's registry.
type gauge struct {
	i            state.Instrument
	name, detail string
	v            atomic.Int64
}

func publish(r *state.Registry, i state.Instrument, name, detail string, v int64) *gauge {
	g := &gauge{i: i, name: name, detail: detail}
	g.v.Store(v)
	state.Register(r, g, func(g *gauge, emit state.Emit) { emit(g.i, g.name, g.detail, float64(g.v.Load())) })
	return g
}

// stateView is the JSON of state.json, as a client reads it.
type stateView struct {
	At    time.Time `json:"at"`
	Tools []struct {
		Name    string `json:"name"`
		Breaker string `json:"breaker"`
		Series  []struct {
			Instrument, Label, Detail, Text string
			Value                           float64
		} `json:"series"`
	} `json:"tools"`
	Stores []struct {
		Port     string  `json:"port"`
		Errors   float64 `json:"errors"`
		Degraded float64 `json:"degraded"`
	} `json:"stores"`
	Failures *struct {
		Total  int64                  `json:"total"`
		Counts []console.FailureCount `json:"counts"`
		Recent []console.Failure      `json:"recent"`
	} `json:"failures"`
}

func (v stateView) value(tool, instrument, detail string) (string, bool) {
	for _, t := range v.Tools {
		if t.Name != tool {
			continue
		}
		for _, s := range t.Series {
			if s.Instrument == instrument && s.Detail == detail {
				return s.Text, true
			}
		}
	}
	return "", false
}

func serveState(t *testing.T, opts ...console.StateOption) *httptest.Server {
	t.Helper()
	if err := console.Validate(console.WithState(opts...)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(console.New(console.WithState(opts...)))
	t.Cleanup(srv.Close)
	return srv
}

func getState(t *testing.T, srv *httptest.Server) (stateView, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/state.json")
	if err != nil {
		t.Fatal(err)
	}
	body := mustBody(t, resp)
	var v stateView
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("state.json: %v\n%s", err, body)
	}
	return v, body
}

func mustBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", resp.Request.URL.Path, resp.StatusCode, b)
	}
	return string(b)
}

func TestStateView(t *testing.T) {
	r := state.NewRegistry()
	keep := []*gauge{
		publish(r, state.BreakerState, "search", "", 2),
		publish(r, state.BreakerTransitions, "search", "open", 1),
		publish(r, state.BulkheadQueued, "search", "", 3),
		publish(r, state.BulkheadQueued, "search", "", 4), // two instances: summed
		publish(r, state.RetryBudgetTokens, "book", "", 7),
		publish(r, state.StoreErrors, "breaker", "load", 5),
		publish(r, state.StoreErrors, "breaker", "save", 1),
		publish(r, state.StoreDegraded, "breaker", "", 2),
	}
	failures := console.NewFailures(2)
	for i, code := range []string{"upstream_unavailable", "upstream_unavailable", "rate_limited"} {
		failures.Emit(events.Event{Time: time.Unix(int64(i), 0), Tool: "search", Outcome: taxonomy.OutcomeFailed,
			Kind: taxonomy.KindFailed, Code: code, Retryable: true, Attempts: 3})
	}
	srv := serveState(t, console.WithRegistry(r), console.WithFailures(failures))
	v, _ := getState(t, srv)

	for _, c := range []struct{ tool, instrument, detail, want string }{
		{"search", "breaker_state", "", "open"},
		{"search", "breaker_transitions", "open", "1"},
		{"search", "bulkhead_queued", "", "7"},
		{"book", "retry_budget_tokens", "", "7"},
	} {
		if got, ok := v.value(c.tool, c.instrument, c.detail); !ok || got != c.want {
			t.Errorf("%s %s(%s) = %q (%v), want %q", c.tool, c.instrument, c.detail, got, ok, c.want)
		}
	}
	if len(v.Tools) != 2 || v.Tools[0].Name != "book" || v.Tools[1].Breaker != "open" {
		t.Errorf("tools = %+v, want book, then search with its breaker open", v.Tools)
	}
	if len(v.Stores) != 1 || v.Stores[0].Port != "breaker" || v.Stores[0].Errors != 6 || v.Stores[0].Degraded != 2 {
		t.Errorf("stores = %+v, want the breaker port with 6 errors and 2 degraded calls", v.Stores)
	}
	f := v.Failures
	if f == nil || f.Total != 3 || len(f.Recent) != 2 || f.Recent[0].Code != "rate_limited" ||
		len(f.Counts) != 2 || f.Counts[0].Code != "upstream_unavailable" || f.Counts[0].Count != 2 {
		t.Errorf("failures = %+v, want 3 counted, the last two kept (latest first)", f)
	}

	// The page shows the same.
	resp, err := srv.Client().Get(srv.URL + "/state")
	if err != nil {
		t.Fatal(err)
	}
	page := mustBody(t, resp)
	for _, want := range []string{`data-tool="search"`, `class="breaker breaker-open"`, `data-instrument="bulkhead_queued"`,
		`data-port="breaker"`, "rate_limited", `src="static/state.js"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	resp, err = srv.Client().Get(srv.URL + "/static/state.js")
	if err != nil {
		t.Fatal(err)
	}
	if js := mustBody(t, resp); !strings.Contains(js, "EventSource") || strings.Contains(js, "innerHTML") {
		t.Error("state.js must read the event stream and never parse text as HTML")
	}
	runtime.KeepAlive(keep)
}

// events reads server-sent events of one stream.
type eventReader struct {
	resp *http.Response
	sc   *bufio.Scanner
}

func openEvents(t *testing.T, ctx context.Context, srv *httptest.Server) *eventReader {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/state/events", nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("state/events: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	t.Cleanup(func() { resp.Body.Close() })
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	return &eventReader{resp: resp, sc: sc}
}

// next returns the data of the next "state" event, and every line read on
// the way.
func (e *eventReader) next() (stateView, string, error) {
	var raw strings.Builder
	kind := ""
	for e.sc.Scan() {
		line := e.sc.Text()
		raw.WriteString(line + "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			kind = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && kind == "state":
			var v stateView
			err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &v)
			return v, raw.String(), err
		}
	}
	return stateView{}, raw.String(), cmpErr(e.sc.Err())
}

func cmpErr(err error) error {
	if err == nil {
		return io.ErrUnexpectedEOF
	}
	return err
}

func TestStateEvents(t *testing.T) {
	r := state.NewRegistry()
	g := publish(r, state.BreakerState, "search", "", 0)
	srv := serveState(t, console.WithRegistry(r), console.WithRefresh(console.MinRefresh))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ev := openEvents(t, ctx, srv)
	v, _, err := ev.next()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := v.value("search", "breaker_state", ""); got != "closed" {
		t.Fatalf("first event: breaker %q, want closed", got)
	}
	g.v.Store(2)
	// The next event is the change: nothing is sent while nothing changes.
	v, _, err = ev.next()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := v.value("search", "breaker_state", ""); got != "open" {
		t.Fatalf("after the trip: breaker %q, want open", got)
	}
	runtime.KeepAlive(g)
}

func TestStateStreamsBounded(t *testing.T) {
	srv := serveState(t, console.WithRegistry(state.NewRegistry()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range console.MaxStreams {
		ev := openEvents(t, ctx, srv)
		if _, _, err := ev.next(); err != nil {
			t.Fatal(err)
		}
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/state/events", nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("stream %d: %d, want 503 with Retry-After", console.MaxStreams+1, resp.StatusCode)
	}
}

func TestStateValidate(t *testing.T) {
	for _, d := range []time.Duration{-time.Second, time.Millisecond, 2 * time.Minute} {
		err := console.Validate(console.WithState(console.WithRefresh(d)))
		if !errors.Is(err, taxonomy.ErrDefinitionInvalid) && taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
			t.Errorf("WithRefresh(%v): %v, want option_invalid", d, err)
		}
	}
	if err := console.Validate(console.WithState(console.WithRefresh(0))); err != nil {
		t.Errorf("WithRefresh(0): %v", err)
	}
}

// TestStateNoSecret plants secrets where the state view reads: the names
// of shared breakers and keys (the layers' names are the application's,
// and a key function may return anything), the codes and tool names of
// failures, the model's call ids, and the errors' text; none may appear in
// the page, its JSON or its event stream.
func TestStateNoSecret(t *testing.T) {
	r := state.NewRegistry()
	failures := console.NewFailures(0)
	emitter := events.NewEmitter(failures)
	var keep []any
	for i, s := range canary.Values() {
		keep = append(keep,
			publish(r, state.BulkheadQueued, "pool "+s, "", int64(i)),
			publish(r, state.StoreErrors, "port "+s, "load "+s, 1),
			publish(r, state.BreakerTransitions, "search", s, 1))
		for name, err := range canary.All(s) {
			failures.Emit(events.Event{Time: time.Now(), Tool: "tool " + s, CallID: s, Outcome: taxonomy.OutcomeFailed,
				Kind: taxonomy.InfoOf(err).Kind, Code: "code_" + s, Told: name + " " + s})
			ctx := toolmw.WithCallID(context.Background(), "call_"+s)
			tool := toolmw.MustWrap(toolmw.Spec{Name: fmt.Sprintf("tool_%d", i)}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
				return toolmw.Result{}, err
			}, emitter.Middleware())
			_, _ = tool(ctx, json.RawMessage(`{"token":"`+s+`"}`))
		}
	}
	if err := emitter.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A real shared breaker named by a secret, tripped.
	b := breaker.NewBreaker("shared "+canary.Secrets[0].Value, breaker.WithConsecutiveFailures(1))
	tripped := toolmw.MustWrap(toolmw.Spec{Name: "tripped"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down "+canary.Secrets[1].Value)
	}, breaker.New(breaker.WithShared(b)))
	_, _ = tripped(context.Background(), nil)

	srv := serveState(t, console.WithRegistry(r), console.WithFailures(failures), console.WithRefresh(console.MinRefresh))
	_, body := getState(t, srv)
	resp, err := srv.Client().Get(srv.URL + "/state")
	if err != nil {
		t.Fatal(err)
	}
	page := mustBody(t, resp)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, stream, err := openEvents(t, ctx, srv).next()
	if err != nil {
		t.Fatal(err)
	}
	// The shared breaker publishes into state.Default: read that too.
	srvDefault := serveState(t)
	_, bodyDefault := getState(t, srvDefault)
	if !strings.Contains(bodyDefault, `"breaker":"open"`) {
		t.Errorf("the tripped shared breaker is not shown open:\n%s", bodyDefault)
	}
	for what, text := range map[string]string{"page": page, "JSON": body, "event stream": stream, "default JSON": bodyDefault} {
		if fam, frag := canary.Find(text); fam != "" {
			t.Errorf("the %s shows the %s canary (%q)", what, fam, frag)
		}
		for _, w := range append(canary.HiddenText, canary.MessageText...) {
			if strings.Contains(text, w) {
				t.Errorf("the %s shows error text %q", what, w)
			}
		}
	}
	if !strings.Contains(body, "REDACTED") {
		t.Error("the planted names are not shown redacted: did the test plant anything?")
	}
	runtime.KeepAlive(keep)
	runtime.KeepAlive(b)
}

func TestFailuresBounded(t *testing.T) {
	f := console.NewFailures(console.MaxRecentFailures + 10)
	for i := range 3 * console.MaxFailureCounts {
		f.Emit(events.Event{Tool: fmt.Sprintf("tool_%d_%s", i, strings.Repeat("t", 300)), Code: "code\n", Kind: "Made Up!"})
	}
	counts, total := f.Counts()
	if len(counts) != console.MaxFailureCounts+1 || total != 3*console.MaxFailureCounts {
		t.Fatalf("%d counts, %d in all; want %d counts (the rest folded), %d in all",
			len(counts), total, console.MaxFailureCounts+1, 3*console.MaxFailureCounts)
	}
	if counts[0].Code != "_OTHER" || counts[0].Count != 2*console.MaxFailureCounts {
		t.Errorf("the largest count is %+v, want the folded rest", counts[0])
	}
	recent := f.Recent()
	if len(recent) != 3*console.MaxFailureCounts || len(recent[0].Tool) > 64 ||
		recent[0].Code != taxonomy.CodeInvalidCode || recent[0].Kind != taxonomy.KindFailed {
		t.Errorf("recent: %d kept, tool of %d bytes, kind %q, code %q", len(recent), len(recent[0].Tool), recent[0].Kind, recent[0].Code)
	}
	if got := len(console.NewFailures(console.MaxRecentFailures + 1).Recent()); got != 0 {
		t.Errorf("a new Failures holds %d", got)
	}
}

// TestStateLabels: every instrument has a label a person reads.
func TestStateLabels(t *testing.T) {
	r := state.NewRegistry()
	var keep []*gauge
	for _, i := range state.Instruments() {
		if i != state.StoreErrors && i != state.StoreDegraded {
			keep = append(keep, publish(r, i, "tool", "", 1))
		}
	}
	v, _ := getState(t, serveState(t, console.WithRegistry(r)))
	if len(v.Tools) != 1 {
		t.Fatalf("tools: %+v", v.Tools)
	}
	for _, s := range v.Tools[0].Series {
		if s.Label == s.Instrument {
			t.Errorf("%s has no label", s.Instrument)
		}
	}
	if len(v.Tools[0].Series) != len(state.Instruments())-2 {
		t.Errorf("%d series shown, want %d", len(v.Tools[0].Series), len(state.Instruments())-2)
	}
	runtime.KeepAlive(keep)
}
