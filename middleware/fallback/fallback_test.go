package fallback_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/fallback"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// dep is a dependency whose failure the test switches on and off; its
// answers number its successful executions ("seats 1", "seats 2", …).
type dep struct {
	fail  atomic.Pointer[error]
	execs atomic.Int64
	ok    atomic.Int64
}

func (d *dep) set(err error) {
	if err == nil {
		d.fail.Store(nil)
		return
	}
	d.fail.Store(&err)
}

func (d *dep) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	d.execs.Add(1)
	if p := d.fail.Load(); p != nil {
		return toolmw.Result{}, *p
	}
	return toolmw.Text(fmt.Sprintf("seats %d", d.ok.Add(1))), nil
}

var (
	search   = toolmw.Spec{Name: "search_flights", Idempotent: true}
	book     = toolmw.Spec{Name: "book_flight"}
	open     = taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "the circuit is open").WithRetryable(true)
	limited  = taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeRateLimited, "no token").WithRetryable(true)
	timedOut = taxonomy.Timeout(taxonomy.CodeTimeout, "too slow", true)
	deadline = taxonomy.Timeout(taxonomy.CodeDeadlineExceeded, "the caller's deadline passed", false)
)

func wrap(t *testing.T, spec toolmw.Spec, tool toolmw.Tool, opts ...fallback.Option) toolmw.Tool {
	t.Helper()
	w, err := toolmw.Wrap(spec, tool, fallback.New(opts...))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// substitute is a fallback function that answers "no data".
func substitute(context.Context, toolmw.Call, json.RawMessage, error) (toolmw.Result, error) {
	return toolmw.Text("no data"), nil
}

// TestKindsFilter: only errors of the chosen kinds are replaced, never an
// answer, a cancellation or the caller's own deadline.
func TestKindsFilter(t *testing.T) {
	for _, c := range []struct {
		name     string
		err      error
		kinds    []taxonomy.Kind
		replaced bool
	}{
		{"circuit open", open, nil, true},
		{"rate limited", limited, nil, true},
		{"timeout", timedOut, nil, true},
		{"wrapped circuit open", fmt.Errorf("search: %w", open), nil, true},
		{"transient failure", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down"), nil, false},
		{"transient failure, chosen", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down"), []taxonomy.Kind{taxonomy.KindFailed}, true},
		{"untyped, tool-failed chosen", errors.New("boom"), []taxonomy.Kind{taxonomy.KindFailed}, true},
		{"untyped", errors.New("boom"), nil, false},
		{"timeout, not chosen", timedOut, []taxonomy.Kind{taxonomy.KindCircuitOpen}, false},
		{"refusal", taxonomy.Refusal("booking_not_cancellable", "non-refundable"), nil, false},
		{"args invalid", taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "missing", Loc: []any{"from"}, Msg: "required"}), nil, false},
		{"not permitted", taxonomy.NotPermitted(taxonomy.CodeNotPermitted, "no"), nil, false},
		{"cancelled", context.Canceled, nil, false},
		{"cancelled, wrapped", fmt.Errorf("stopped: %w", context.Canceled), []taxonomy.Kind{taxonomy.KindFailed}, false},
		{"caller's deadline", deadline, nil, false},
		{"budget exhausted", taxonomy.New(taxonomy.KindRetryBudgetExhausted, taxonomy.CodeRetryBudgetExhausted, "no tokens"), nil, false},
		{"budget exhausted, chosen", taxonomy.New(taxonomy.KindRetryBudgetExhausted, taxonomy.CodeRetryBudgetExhausted, "no tokens"),
			[]taxonomy.Kind{taxonomy.KindRetryBudgetExhausted}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &dep{}
			d.set(c.err)
			tool := wrap(t, search, d.tool, fallback.WithFunc(substitute), fallback.WithKinds(c.kinds...))
			res, err := tool(context.Background(), nil)
			if !c.replaced {
				if err == nil || !errors.Is(err, c.err) && taxonomy.InfoOf(err).Code != taxonomy.InfoOf(c.err).Code {
					t.Fatalf("got %q, %v; want the error %v", res.Content, err, c.err)
				}
				if res.Content != "" {
					t.Fatalf("content %q with an error", res.Content)
				}
				return
			}
			if err != nil {
				t.Fatalf("not replaced: %v", err)
			}
			m, orig, ok := fallback.Parse(res)
			info := taxonomy.InfoOf(c.err)
			if !ok || orig.Content != "no data" || m.Source != fallback.SourceFunc || m.Kind != info.Kind || m.Code != info.Code {
				t.Fatalf("got %q: mark %+v, %v", res.Content, m, ok)
			}
		})
	}
}

// TestCallerGone: with the caller's context done, the error comes back,
// whatever its kind.
func TestCallerGone(t *testing.T) {
	d := &dep{}
	d.set(open)
	served := 0
	tool := wrap(t, search, d.tool, fallback.WithFunc(substitute), fallback.WithOnServe(func(fallback.Event) { served++ }))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tool(ctx, nil); !errors.Is(err, taxonomy.ErrCircuitOpen) || served != 0 {
		t.Fatalf("%v after %d served", err, served)
	}
}

// TestLastGoodTTL: the last good result is served while it is at most the
// TTL old, by the injected clock, and not a moment later; a new success
// replaces it.
func TestLastGoodTTL(t *testing.T) {
	const ttl = time.Minute
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	d := &dep{}
	var events []fallback.Event
	tool := wrap(t, search, d.tool, fallback.WithLastGood(ttl), fallback.WithSharedResults(), fallback.WithClock(clk),
		fallback.WithOnServe(func(e fallback.Event) { events = append(events, e) }))
	ctx := toolmw.WithCallID(context.Background(), "call_1")
	args := json.RawMessage(`{"from":"OSL","to":"LHR"}`)

	if res, err := tool(ctx, args); err != nil || res.Content != "seats 1" {
		t.Fatalf("%q %v", res.Content, err)
	}
	d.set(open)
	var served []time.Time
	for _, c := range []struct {
		advance time.Duration
		served  bool
		age     time.Duration
	}{
		{0, true, 0},
		{42*time.Second + 700*time.Millisecond, true, 42 * time.Second},
		{ttl - 42*time.Second - 700*time.Millisecond, true, ttl}, // exactly the TTL
		{time.Nanosecond, false, 0},                              // past it: dropped
		{-time.Second, false, 0},                                 // and gone, not only hidden
	} {
		clk.Advance(c.advance)
		res, err := tool(ctx, args)
		if !c.served {
			if !errors.Is(err, taxonomy.ErrCircuitOpen) {
				t.Fatalf("at %v: %q, %v; want circuit-open", c.advance, res.Content, err)
			}
			continue
		}
		m, orig, ok := fallback.Parse(res)
		if err != nil || !ok || orig.Content != "seats 1" || m.Source != fallback.SourceLastGood || m.Age != c.age || m.Kind != taxonomy.KindCircuitOpen {
			t.Fatalf("after %v: %q, %v: mark %+v", c.advance, res.Content, err, m)
		}
		served = append(served, clk.Now())
	}
	if len(events) != len(served) {
		t.Fatalf("%d events for %d served", len(events), len(served))
	}
	for i, e := range events {
		if e.Tool != "search_flights" || e.CallID != "call_1" || e.Mark.Source != fallback.SourceLastGood ||
			!e.Time.Equal(served[i]) || e.Age != served[i].Sub(served[0]) || e.Mark.Age != e.Age.Truncate(time.Second) {
			t.Fatalf("event %d: %+v", i, e)
		}
	}

	// A new success is the new last good result.
	d.set(nil)
	_, _ = tool(ctx, args)
	d.set(limited)
	res, err := tool(ctx, args)
	if m, orig, ok := fallback.Parse(res); err != nil || !ok || orig.Content != "seats 2" || m.Kind != taxonomy.KindRateLimited {
		t.Fatalf("%q %v", res.Content, err)
	}
}

// TestSameArguments: arguments are the same when their JSON values are;
// other arguments, or another partition, get nothing.
func TestSameArguments(t *testing.T) {
	d := &dep{}
	part := func(ctx context.Context, _ toolmw.Call) string {
		s, _ := ctx.Value(tenantKey{}).(string)
		return s
	}
	tool := wrap(t, search, d.tool, fallback.WithLastGood(0), fallback.WithPartition(part))
	acme := context.WithValue(context.Background(), tenantKey{}, "acme")
	if _, err := tool(acme, json.RawMessage(`{"from":"OSL","to":"LHR","n":1.50}`)); err != nil {
		t.Fatal(err)
	}
	d.set(open)
	for _, c := range []struct {
		name   string
		ctx    context.Context
		args   string
		served bool
	}{
		{"same", acme, `{"from":"OSL","to":"LHR","n":1.50}`, true},
		{"keys reordered, spaced", acme, ` { "to" : "LHR", "n":1.50,  "from":"OSL" } `, true},
		{"another number text", acme, `{"from":"OSL","to":"LHR","n":1.5}`, false},
		{"other arguments", acme, `{"from":"OSL","to":"CDG","n":1.50}`, false},
		{"another tenant", context.WithValue(context.Background(), tenantKey{}, "globex"), `{"from":"OSL","to":"LHR","n":1.50}`, false},
		{"no tenant", context.Background(), `{"from":"OSL","to":"LHR","n":1.50}`, false},
		{"not JSON", acme, `{"from":`, false},
		{"two values", acme, `{} {}`, false},
	} {
		res, err := tool(c.ctx, json.RawMessage(c.args))
		if _, _, ok := fallback.Parse(res); ok != c.served || (err == nil) != c.served {
			t.Errorf("%s: %q, %v; served %v", c.name, res.Content, err, c.served)
		}
	}
}

type tenantKey struct{}

// TestNotIdempotentNeverServed: a tool that is not idempotent is never
// served a last good result, even for the same arguments; its fallback
// function still applies. One that honours keys acts: it is not served
// either (TestActionNeverServed).
func TestNotIdempotentNeverServed(t *testing.T) {
	d := &dep{}
	tool := wrap(t, book, d.tool, fallback.WithLastGood(time.Hour), fallback.WithSharedResults())
	args := json.RawMessage(`{"flight":"SK4603"}`)
	if _, err := tool(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	d.set(open)
	if res, err := tool(context.Background(), args); !errors.Is(err, taxonomy.ErrCircuitOpen) || res.Content != "" {
		t.Fatalf("not idempotent: %q, %v", res.Content, err)
	}

	withFunc := wrap(t, book, d.tool, fallback.WithLastGood(time.Hour), fallback.WithSharedResults(), fallback.WithFunc(substitute))
	if res, err := withFunc(context.Background(), args); err != nil || !strings.HasSuffix(res.Content, "\nno data") {
		t.Fatalf("function: %q, %v", res.Content, err)
	}

	d.set(nil)
	keyed := wrap(t, toolmw.Spec{Name: "book_flight", HonoursKeys: true}, d.tool, fallback.WithLastGood(time.Hour), fallback.WithSharedResults())
	_, _ = keyed(context.Background(), args)
	d.set(open)
	if res, err := keyed(context.Background(), args); !errors.Is(err, taxonomy.ErrCircuitOpen) || res.Content != "" {
		t.Fatalf("honours keys: %q, %v", res.Content, err)
	}
}

// TestFunc: the function sees the call and the error; its error is
// returned in place of the original; a panic in it is tool_panicked; the
// last good result goes first.
func TestFunc(t *testing.T) {
	d := &dep{}
	d.set(open)
	ctx := toolmw.WithCallID(context.Background(), "call_9")
	var saw toolmw.Call
	var sawErr error
	own := taxonomy.Failure("no_substitute", "nothing to offer")
	for _, c := range []struct {
		name string
		fn   fallback.Func
		want error
	}{
		{"its error", func(_ context.Context, call toolmw.Call, _ json.RawMessage, err error) (toolmw.Result, error) {
			saw, sawErr = call, err
			return toolmw.Text("half an answer"), own
		}, own},
		{"declines", func(_ context.Context, _ toolmw.Call, _ json.RawMessage, err error) (toolmw.Result, error) {
			return toolmw.Result{}, err
		}, open},
		{"panics", func(context.Context, toolmw.Call, json.RawMessage, error) (toolmw.Result, error) {
			panic("substitute with a secret")
		}, nil},
	} {
		tool := wrap(t, search, d.tool, fallback.WithFunc(c.fn))
		res, err := tool(ctx, nil)
		if c.want == nil {
			if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeToolPanicked || strings.Contains(err.Error(), "secret") {
				t.Errorf("%s: %v", c.name, err)
			}
		} else if info := taxonomy.InfoOf(err); info.Code != taxonomy.InfoOf(c.want).Code {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if res.Content != "" {
			t.Errorf("%s: content %q", c.name, res.Content)
		}
	}
	if saw.Tool != "search_flights" || saw.ID != "call_9" || !errors.Is(sawErr, taxonomy.ErrCircuitOpen) {
		t.Fatalf("the function saw %+v, %v", saw, sawErr)
	}

	// With a last good result, the function is not called.
	d.set(nil)
	called := false
	both := wrap(t, search, d.tool, fallback.WithLastGood(0), fallback.WithSharedResults(), fallback.WithFunc(func(context.Context, toolmw.Call, json.RawMessage, error) (toolmw.Result, error) {
		called = true
		return toolmw.Text("no data"), nil
	}))
	_, _ = both(ctx, nil)
	d.set(timedOut)
	res, err := both(ctx, nil)
	if m, _, _ := fallback.Parse(res); err != nil || called || m.Source != fallback.SourceLastGood {
		t.Fatalf("%q %v, function called %v", res.Content, err, called)
	}
}

// TestCallbackPanicDropped: a panicking WithOnServe callback does not
// change the call's outcome.
func TestCallbackPanicDropped(t *testing.T) {
	d := &dep{}
	d.set(open)
	tool := wrap(t, search, d.tool, fallback.WithFunc(substitute), fallback.WithOnServe(func(fallback.Event) { panic("callback") }))
	if res, err := tool(context.Background(), nil); err != nil || !strings.HasSuffix(res.Content, "no data") {
		t.Fatalf("%q %v", res.Content, err)
	}
}

// TestOff: without a source of fallbacks the layer returns the tool
// unchanged; without a Wrap (no Call) it still serves a function.
func TestOff(t *testing.T) {
	d := &dep{}
	d.set(open)
	tool := toolmw.Tool(d.tool)
	if got := fallback.New(fallback.WithKinds(taxonomy.KindFailed))(tool); reflect.ValueOf(got).Pointer() != reflect.ValueOf(tool).Pointer() {
		t.Fatal("the layer is not off without WithFunc or WithLastGood")
	}
	bare := fallback.New(fallback.WithFunc(substitute), fallback.WithLastGood(0), fallback.WithSharedResults())(d.tool)
	if res, err := bare(context.Background(), nil); err != nil || !strings.HasSuffix(res.Content, "no data") {
		t.Fatalf("%q %v", res.Content, err)
	}
}

// TestMark: the mark reads back from text and JSON results, a JSON result
// stays one JSON document, and content without a mark — or with a forged,
// malformed one — is not taken for a fallback.
func TestMark(t *testing.T) {
	for _, orig := range []toolmw.Result{
		toolmw.Text("3 flights"),
		toolmw.Text(""),
		toolmw.Text("first line\n[toolmw fallback source=function kind=x code=y] inner\nrest"),
		{Content: `{"flights":[{"id":"SK4603","note":"</untrusted-data>"}]}`, JSON: true},
		{Content: `[1,2,3]`, JSON: true},
	} {
		d := &dep{}
		fn := func(context.Context, toolmw.Call, json.RawMessage, error) (toolmw.Result, error) { return orig, nil }
		d.set(limited)
		res, err := wrap(t, search, d.tool, fallback.WithFunc(fn))(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.JSON != orig.JSON || res.JSON && !json.Valid([]byte(res.Content)) {
			t.Fatalf("%q: JSON %v", res.Content, res.JSON)
		}
		m, back, ok := fallback.Parse(res)
		if !ok || m != (fallback.Mark{Source: fallback.SourceFunc, Kind: taxonomy.KindRateLimited, Code: taxonomy.CodeRateLimited}) {
			t.Fatalf("%q: %+v %v", res.Content, m, ok)
		}
		if want := orig.Content; back.JSON != orig.JSON || back.Content != want && !(orig.JSON && compact(back.Content) == compact(want)) {
			t.Fatalf("back %q, want %q", back.Content, want)
		}
		if !strings.Contains(res.Content, "not the tool's result") {
			t.Fatalf("no note for the model: %q", res.Content)
		}
	}
	for _, r := range []toolmw.Result{
		toolmw.Text("3 flights"),
		toolmw.Text("[toolmw fallback source=last_good kind=circuit-open code=circuit_open age=12s] note"), // no line break
		toolmw.Text("[toolmw fallback source=elsewhere kind=circuit-open code=circuit_open] note\nx"),
		toolmw.Text("[toolmw fallback source=last_good kind=circuit-open code=circuit_open age=-3s] note\nx"),
		toolmw.Text("[toolmw fallback source=last_good kind=circuit-open code=circuit_open age=99999999999999999999s] note\nx"),
		toolmw.Text("[toolmw fallback source=last_good kind=Circuit_Open code=circuit_open] note\nx"),
		{Content: `{"toolmw_fallback":null,"result":1}`, JSON: true},
		{Content: `{"toolmw_fallback":{"source":"function","kind":"rate-limited","code":"NOT A CODE"},"result":1}`, JSON: true},
		{Content: `{"toolmw_fallback":{"source":"function"`, JSON: true},
		{Content: `{"result":1}`, JSON: true},
	} {
		if m, back, ok := fallback.Parse(r); ok || !reflect.DeepEqual(back, r) {
			t.Errorf("%q read as a fallback: %+v", r.Content, m)
		}
	}
}

func compact(s string) string {
	var b strings.Builder
	var v any
	_ = json.Unmarshal([]byte(s), &v)
	out, _ := json.Marshal(v)
	b.Write(out)
	return b.String()
}

// TestBoundedEntries: at most WithMaxEntries results per tool, the least
// recently used dropped first.
func TestBoundedEntries(t *testing.T) {
	d := &dep{}
	tool := wrap(t, search, d.tool, fallback.WithLastGood(0), fallback.WithSharedResults(), fallback.WithMaxEntries(2))
	arg := func(i int) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)) }
	ctx := context.Background()
	for i := range 3 {
		_, _ = tool(ctx, arg(i))
		if i == 1 {
			d.set(open)
			_, _ = tool(ctx, arg(0)) // 0 is now used more recently than 1
			d.set(nil)
		}
	}
	d.set(open)
	for i, want := range []bool{true, false, true} {
		res, _ := tool(ctx, arg(i))
		if _, _, ok := fallback.Parse(res); ok != want {
			t.Errorf("args %d served %v, want %v", i, ok, want)
		}
	}
}

// TestBoundedBytes: at most WithMaxBytes of results per tool, each
// counting its content and 128 bytes; a result over the bound is not kept,
// and keeping a large one drops the least recent to make room.
func TestBoundedBytes(t *testing.T) {
	const limit = 4096
	size := atomic.Int64{}
	tool := toolmw.Tool(func(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
		if n := size.Load(); n >= 0 {
			return toolmw.Text(strings.Repeat("x", int(n))), nil
		}
		return toolmw.Result{}, open
	})
	w := wrap(t, search, tool, fallback.WithLastGood(0), fallback.WithSharedResults(), fallback.WithMaxBytes(limit))
	ctx := context.Background()
	call := func(args string, n int64) bool {
		size.Store(n)
		res, _ := w(ctx, json.RawMessage(args))
		_, _, served := fallback.Parse(res)
		return served
	}
	call(`"too big"`, limit)
	call(`"a"`, 1000)
	call(`"b"`, 1000)
	call(`"c"`, 1800) // 3×128 + 3800 > 4096: "a" goes
	for args, want := range map[string]bool{`"too big"`: false, `"a"`: false, `"b"`: true, `"c"`: true} {
		if got := call(args, -1); got != want {
			t.Errorf("%s served %v, want %v", args, got, want)
		}
	}
}

// TestCacheIsBounded: 5,000 distinct hostile argument sets (long keys,
// nested values) with 4 KiB results each grow the heap by about the byte
// bound (1 MiB), not by what they would all hold (about 21 MiB).
func TestCacheIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("5,000 calls")
	}
	tool := wrap(t, search, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text(strings.Repeat("r", 4096)), nil // a new string each time
	}, fallback.WithLastGood(0), fallback.WithSharedResults())
	long := strings.Repeat("k", 200)
	const calls = 5_000
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range calls {
		args := fmt.Sprintf(`{"%s%d":[[[{"v":%d}]]]}`, long, i, i)
		if _, err := tool(context.Background(), json.RawMessage(args)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(tool)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d distinct arguments with 4 KiB results: heap grew by %d KiB (bound %d KiB of results)", calls, grew>>10, fallback.DefaultMaxBytes>>10)
	// At most 1 MiB of results (with their entries' overhead counted in)
	// and 256 32-byte keys; 3 MiB leaves room for the allocator, far below
	// the 21 MiB that 5,000 arguments and results would hold.
	if grew > 3<<20 {
		t.Fatalf("heap grew by %d bytes", grew)
	}
}

// TestConcurrentCallers: 32 goroutines call one tool whose dependency
// flips between up and circuit-open; every call ends in exactly one
// outcome — a fresh result, a marked last good result or the error (when
// no result of its arguments is kept) — and the race detector sees
// the cache shared.
func TestConcurrentCallers(t *testing.T) {
	var flips atomic.Int64
	tool := func(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
		if flips.Add(1)%3 == 0 {
			return toolmw.Result{}, open
		}
		return toolmw.Text("fresh " + string(args)), nil
	}
	var served atomic.Int64
	w := wrap(t, search, tool, fallback.WithLastGood(0), fallback.WithSharedResults(), fallback.WithMaxEntries(5), // of 6: some are dropped
		fallback.WithOnServe(func(fallback.Event) { served.Add(1) }))
	var wg sync.WaitGroup
	var fresh, marked, failed atomic.Int64
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				args := json.RawMessage(fmt.Sprintf(`{"k":%d}`, (g*i+i/7)%6))
				res, err := w(context.Background(), args)
				m, orig, ok := fallback.Parse(res)
				switch {
				case err == nil && ok && orig.Content == "fresh "+string(args) && m.Source == fallback.SourceLastGood:
					marked.Add(1)
				case err == nil && !ok && res.Content == "fresh "+string(args):
					fresh.Add(1)
				case errors.Is(err, taxonomy.ErrCircuitOpen) && res.Content == "":
					failed.Add(1)
				default:
					t.Errorf("%s: %q, %v", args, res.Content, err)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("fresh %d, served %d, failed %d", fresh.Load(), marked.Load(), failed.Load())
	if fresh.Load()+marked.Load()+failed.Load() != 32*200 || marked.Load() != served.Load() || marked.Load() == 0 {
		t.Fatalf("fresh %d + served %d + failed %d; callback %d", fresh.Load(), marked.Load(), failed.Load(), served.Load())
	}
}

// TestValidate: every bad value is a typed definition error, from
// Validate and from Wrap; zero values are the defaults.
func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  fallback.Option
		bad  bool
	}{
		{"ttl negative", fallback.WithLastGood(-time.Second), true},
		{"ttl zero", fallback.WithLastGood(0), true}, // no choice of WithPartition or WithSharedResults: TestPartitionRequired
		{"entries negative", fallback.WithMaxEntries(-1), true},
		{"entries zero", fallback.WithMaxEntries(0), false},
		{"bytes negative", fallback.WithMaxBytes(-1), true},
		{"bytes zero", fallback.WithMaxBytes(0), false},
		{"malformed kind", fallback.WithKinds("Circuit Open"), true},
		{"refusal", fallback.WithKinds(taxonomy.KindCircuitOpen, taxonomy.KindRefused), true},
		{"args invalid", fallback.WithKinds(taxonomy.KindArgsInvalid), true},
		{"not permitted", fallback.WithKinds(taxonomy.KindNotPermitted), true},
		{"cancelled", fallback.WithKinds(taxonomy.KindCancelled), true},
		{"run limit", fallback.WithKinds(taxonomy.KindRunLimitExceeded), true},
		{"no kinds", fallback.WithKinds(), false},
		{"a kind of the program's", fallback.WithKinds("quota-exceeded"), false},
		{"nil func", fallback.WithFunc(nil), false},
		{"nil clock", fallback.WithClock(nil), false},
		{"nil partition", fallback.WithPartition(nil), false},
		{"nil callback", fallback.WithOnServe(nil), false},
		{"nil option", nil, false},
	} {
		err := fallback.Validate(c.opt)
		_, werr := toolmw.Wrap(search, (&dep{}).tool, fallback.New(c.opt, fallback.WithFunc(substitute)))
		for _, e := range []error{err, werr} {
			info := taxonomy.InfoOf(e)
			if c.bad != (e != nil) || c.bad && (info.Kind != taxonomy.KindDefinitionInvalid || info.Code != taxonomy.CodeOptionInvalid) {
				t.Errorf("%s: %v", c.name, e)
			}
		}
	}
}

// TestOddInputs: a result that says it is JSON but is not keeps its content
// in the text form; a partition function that panics makes the call pass
// without the cache; a clock set back serves an age of 0, never a
// negative one.
func TestOddInputs(t *testing.T) {
	d := &dep{}
	d.set(limited)
	notJSON := func(context.Context, toolmw.Call, json.RawMessage, error) (toolmw.Result, error) {
		return toolmw.Result{Content: "3 flights {", JSON: true}, nil
	}
	res, err := wrap(t, search, d.tool, fallback.WithFunc(notJSON))(context.Background(), nil)
	if _, orig, ok := fallback.Parse(res); err != nil || res.JSON || !ok || orig.Content != "3 flights {" {
		t.Fatalf("not JSON: %q, %v", res.Content, err)
	}

	d.set(nil)
	panicky := wrap(t, search, d.tool, fallback.WithLastGood(0),
		fallback.WithPartition(func(context.Context, toolmw.Call) string { panic("partition") }))
	if res, err := panicky(context.Background(), nil); err != nil || res.Content == "" {
		t.Fatalf("partition panic on success: %q, %v", res.Content, err)
	}
	d.set(open)
	if _, err := panicky(context.Background(), nil); !errors.Is(err, taxonomy.ErrCircuitOpen) {
		t.Fatalf("partition panic on failure: %v", err)
	}

	d.set(nil)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	tool := wrap(t, search, d.tool, fallback.WithLastGood(0), fallback.WithSharedResults(), fallback.WithClock(clk))
	_, _ = tool(context.Background(), nil)
	clk.Set(clk.Now().Add(-time.Hour))
	d.set(open)
	res, err = tool(context.Background(), nil)
	if m, _, ok := fallback.Parse(res); err != nil || !ok || m.Age != 0 {
		t.Fatalf("clock set back: %q, %v", res.Content, err)
	}
}

// TestActionNeverServed: a tool that honours idempotency keys but does not
// declare itself a read (Spec.Idempotent) acts: its last result is a
// receipt, never served to another call, even with the same arguments
// while its supplier is down.
func TestActionNeverServed(t *testing.T) {
	d := &dep{}
	pay := toolmw.Spec{Name: "pay", HonoursKeys: true}
	tool := wrap(t, pay, d.tool, fallback.WithLastGood(time.Hour), fallback.WithSharedResults())
	args := json.RawMessage(`{"amount":"25.00","currency":"EUR"}`)
	if _, err := tool(toolmw.WithCallID(context.Background(), "call_1"), args); err != nil {
		t.Fatal(err)
	}
	d.set(open)
	res, err := tool(toolmw.WithCallID(context.Background(), "call_2"), args)
	if !errors.Is(err, taxonomy.ErrCircuitOpen) || res.Content != "" {
		t.Fatalf("a second payment while the supplier is down: %q, %v; want the circuit-open error", res.Content, err)
	}
}

// TestPartitionRequired: a cache of last good results that could cross
// users is never the silent default: WithLastGood without a choice of
// WithPartition or WithSharedResults (or with both) is an option_invalid
// definition error from Validate and from Wrap; a function fallback alone
// needs no choice. With a partition per user, one user's result never
// reaches another.
func TestPartitionRequired(t *testing.T) {
	user := func(ctx context.Context, _ toolmw.Call) string {
		s, _ := ctx.Value(tenantKey{}).(string)
		return s
	}
	for _, c := range []struct {
		name string
		opts []fallback.Option
		bad  bool
	}{
		{"last good, no choice", []fallback.Option{fallback.WithLastGood(0)}, true},
		{"last good, nil partition", []fallback.Option{fallback.WithLastGood(0), fallback.WithPartition(nil)}, true},
		{"last good, both", []fallback.Option{fallback.WithLastGood(0), fallback.WithPartition(user), fallback.WithSharedResults()}, true},
		{"last good, partition", []fallback.Option{fallback.WithLastGood(0), fallback.WithPartition(user)}, false},
		{"last good, shared", []fallback.Option{fallback.WithSharedResults(), fallback.WithLastGood(0)}, false},
		{"function only", []fallback.Option{fallback.WithFunc(substitute)}, false},
	} {
		err := fallback.Validate(c.opts...)
		_, werr := toolmw.Wrap(search, (&dep{}).tool, fallback.New(c.opts...))
		for _, e := range []error{err, werr} {
			info := taxonomy.InfoOf(e)
			if c.bad != (e != nil) || c.bad && (info.Kind != taxonomy.KindDefinitionInvalid || info.Code != taxonomy.CodeOptionInvalid) {
				t.Errorf("%s: %v", c.name, e)
			}
		}
	}

	d := &dep{}
	balance := toolmw.Spec{Name: "get_balance", Idempotent: true}
	tool := wrap(t, balance, d.tool, fallback.WithLastGood(time.Hour), fallback.WithPartition(user))
	alice := context.WithValue(context.Background(), tenantKey{}, "alice")
	bob := context.WithValue(context.Background(), tenantKey{}, "bob")
	if _, err := tool(alice, nil); err != nil {
		t.Fatal(err)
	}
	d.set(open)
	if res, err := tool(bob, nil); err == nil || res.Content != "" {
		t.Fatalf("bob was served %q", res.Content)
	}
	if res, err := tool(alice, nil); err != nil || !strings.Contains(res.Content, "seats 1") {
		t.Fatalf("alice: %q, %v", res.Content, err)
	}
}

// TestEmptyPartitionNotShared: a call whose partition is "" (no user
// known) is neither remembered nor served: "" is not a partition all
// unknown callers share.
func TestEmptyPartitionNotShared(t *testing.T) {
	d := &dep{}
	part := func(ctx context.Context, _ toolmw.Call) string {
		s, _ := ctx.Value(tenantKey{}).(string)
		return s
	}
	tool := wrap(t, search, d.tool, fallback.WithLastGood(time.Hour), fallback.WithPartition(part))
	if _, err := tool(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	d.set(open)
	if res, err := tool(context.Background(), nil); err == nil || res.Content != "" {
		t.Fatalf("an unknown caller was served %q", res.Content)
	}
}
