package cache_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/cache"
	"github.com/toolmw/toolmw/middleware/fallback"
	"github.com/toolmw/toolmw/middleware/internal/resultcodec"
	"github.com/toolmw/toolmw/middleware/internal/resultkey"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/store/storetest"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// dep is a dependency whose failure the test switches on and off; its
// answers number its successful executions ("rate 1", "rate 2", …).
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
	return toolmw.Text(fmt.Sprintf("rate %d", d.ok.Add(1))), nil
}

var (
	rates = toolmw.Spec{Name: "exchange_rate", Idempotent: true}
	open  = taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "the circuit is open").WithRetryable(true)
	t0    = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	args  = json.RawMessage(`{"from":"EUR","to":"NOK"}`)
	same  = json.RawMessage(` { "to" : "NOK", "from" : "EUR" } `) // the same value
)

// lookups collects the Lookups of a layer.
type lookups struct {
	mu   sync.Mutex
	seen []cache.Lookup
}

func (l *lookups) add(lk cache.Lookup) {
	l.mu.Lock()
	l.seen = append(l.seen, lk)
	l.mu.Unlock()
}

// take returns the Lookups seen since the last take.
func (l *lookups) take() []cache.Lookup {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.seen
	l.seen = nil
	return s
}

// outcomes returns how many lookups had each outcome, and source for hits.
func outcomes(ls []cache.Lookup) map[string]int {
	m := map[string]int{}
	for _, l := range ls {
		k := string(l.Outcome)
		if l.Source != "" {
			k += "/" + string(l.Source)
		}
		m[k]++
	}
	return m
}

func wrap(t *testing.T, spec toolmw.Spec, tool toolmw.Tool, mws ...toolmw.Middleware) toolmw.Tool {
	t.Helper()
	w, err := toolmw.Wrap(spec, tool, mws...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func call(t *testing.T, tool toolmw.Tool, ctx context.Context, args json.RawMessage) string {
	t.Helper()
	res, err := tool(ctx, args)
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	return res.Content
}

// TestHitMissTTL: the first call misses and calls the tool; the same
// arguments, however spaced or ordered, hit while the result is at most
// the TTL old, without calling it; past the TTL, the call misses again.
func TestHitMissTTL(t *testing.T) {
	var d dep
	clk := clock.NewFake(t0)
	var seen lookups
	tool := wrap(t, rates, d.tool, cache.New(time.Minute, cache.WithSharedResults(), cache.WithClock(clk), cache.WithOnLookup(seen.add)))
	ctx := toolmw.WithCallID(context.Background(), "call-1")
	if got := call(t, tool, ctx, args); got != "rate 1" {
		t.Fatalf("first call: %q", got)
	}
	clk.Advance(time.Minute)
	if got := call(t, tool, ctx, same); got != "rate 1" {
		t.Fatalf("a minute later: %q, want the kept result", got)
	}
	if n := d.execs.Load(); n != 1 {
		t.Fatalf("%d executions after a hit, want 1", n)
	}
	clk.Advance(time.Nanosecond)
	if got := call(t, tool, ctx, args); got != "rate 2" {
		t.Fatalf("past the TTL: %q, want a new result", got)
	}
	ls := seen.take()
	want := []cache.Lookup{
		{Tool: "exchange_rate", CallID: "call-1", Outcome: cache.Miss, Time: t0},
		{Tool: "exchange_rate", CallID: "call-1", Outcome: cache.Hit, Source: cache.SourceMemory, Age: time.Minute, Time: t0.Add(time.Minute)},
		{Tool: "exchange_rate", CallID: "call-1", Outcome: cache.Miss, Time: t0.Add(time.Minute + time.Nanosecond)},
	}
	if fmt.Sprint(ls) != fmt.Sprint(want) {
		t.Fatalf("lookups\n%+v\nwant\n%+v", ls, want)
	}
	// Other arguments are another result.
	if got := call(t, tool, ctx, json.RawMessage(`{"from":"EUR","to":"SEK"}`)); got != "rate 3" {
		t.Fatalf("other arguments: %q", got)
	}
}

// TestOnlyReads: a tool not declared Idempotent, one that only honours
// keys included, is never served nor kept, and not looked up.
func TestOnlyReads(t *testing.T) {
	for _, spec := range []toolmw.Spec{{Name: "book"}, {Name: "charge", HonoursKeys: true}} {
		var d dep
		var seen lookups
		tool := wrap(t, spec, d.tool, cache.New(time.Hour, cache.WithSharedResults(), cache.WithOnLookup(seen.add)))
		for range 3 {
			call(t, tool, context.Background(), args)
		}
		if n := d.execs.Load(); n != 3 {
			t.Errorf("%s: %d executions of 3 calls", spec.Name, n)
		}
		if ls := seen.take(); len(ls) != 0 {
			t.Errorf("%s: lookups %+v", spec.Name, ls)
		}
	}
	// Unwrapped, a tool has no Spec: it passes through.
	var d dep
	tool := cache.New(time.Hour, cache.WithSharedResults())(d.tool)
	tool(context.Background(), args)
	tool(context.Background(), args)
	if n := d.execs.Load(); n != 2 {
		t.Errorf("unwrapped: %d executions of 2 calls", n)
	}
}

type tenantKey struct{}

func tenant(ctx context.Context, _ toolmw.Call) string {
	s, _ := ctx.Value(tenantKey{}).(string)
	if s == "panic" {
		panic("no tenant")
	}
	return s
}

// TestPartition: a result made in one partition is never served in
// another; a call whose partition is "" or whose partition function
// panics is a bypass.
func TestPartition(t *testing.T) {
	var d dep
	var seen lookups
	tool := wrap(t, rates, d.tool, cache.New(time.Hour, cache.WithPartition(tenant), cache.WithOnLookup(seen.add)))
	in := func(t string) context.Context { return context.WithValue(context.Background(), tenantKey{}, t) }
	a1 := call(t, tool, in("a"), args)
	b1 := call(t, tool, in("b"), args)
	if a1 == b1 {
		t.Fatalf("tenant b was served tenant a's result %q", a1)
	}
	if got := call(t, tool, in("a"), args); got != a1 {
		t.Fatalf("tenant a again: %q, want %q", got, a1)
	}
	for _, p := range []string{"", "", "panic", "panic"} {
		call(t, tool, in(p), args)
	}
	if n := d.execs.Load(); n != 6 {
		t.Fatalf("%d executions, want 6 (a, b, and four bypasses)", n)
	}
	if got := outcomes(seen.take()); got["miss"] != 2 || got["hit/memory"] != 1 || got["bypass"] != 4 {
		t.Fatalf("lookups %v", got)
	}
}

// TestHostileArgs: arguments with no canonical form, or over
// MaxArgsBytes, are neither served nor kept: each call calls the tool.
func TestHostileArgs(t *testing.T) {
	for _, a := range []string{`{"to":"NOK","to":"SEK"}`, `{"To":"NOK","to":"SEK"}`, `"\ud800"`, `{`,
		`"` + strings.Repeat("x", cache.MaxArgsBytes) + `"`} {
		var d dep
		var seen lookups
		tool := wrap(t, rates, d.tool, cache.New(time.Hour, cache.WithSharedResults(), cache.WithOnLookup(seen.add)))
		call(t, tool, context.Background(), json.RawMessage(a))
		call(t, tool, context.Background(), json.RawMessage(a))
		if n := d.execs.Load(); n != 2 {
			t.Errorf("%.30q: %d executions of 2 calls", a, n)
		}
		if got := outcomes(seen.take()); got["bypass"] != 2 {
			t.Errorf("%.30q: lookups %v, want two bypasses", a, got)
		}
	}
}

// TestBounds: a result over the byte bound is not kept; past the entry
// bound, the result used least recently is dropped.
func TestBounds(t *testing.T) {
	big := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text(strings.Repeat("x", 1000)), nil
	}
	var n atomic.Int64
	counted := func(ctx context.Context, a json.RawMessage) (toolmw.Result, error) {
		n.Add(1)
		return big(ctx, a)
	}
	tool := wrap(t, rates, counted, cache.New(time.Hour, cache.WithSharedResults(), cache.WithMaxBytes(1000)))
	call(t, tool, context.Background(), args)
	call(t, tool, context.Background(), args)
	if n.Load() != 2 {
		t.Fatalf("a result over the byte bound: %d executions of 2 calls, want 2", n.Load())
	}
	var d dep
	tool = wrap(t, rates, d.tool, cache.New(time.Hour, cache.WithSharedResults(), cache.WithMaxEntries(2)))
	a, b, c := json.RawMessage(`"a"`), json.RawMessage(`"b"`), json.RawMessage(`"c"`)
	call(t, tool, context.Background(), a) // 1
	call(t, tool, context.Background(), b) // 2
	call(t, tool, context.Background(), a) // hit: a is used most recently
	call(t, tool, context.Background(), c) // 3: b goes
	if got := call(t, tool, context.Background(), a); got != "rate 1" {
		t.Errorf("a after c: %q, want the kept rate 1", got)
	}
	if got := call(t, tool, context.Background(), b); got != "rate 4" {
		t.Errorf("b after c: %q, want a new result (dropped)", got)
	}
}

// TestCopies: neither the caller served nor the one whose call was kept
// can change what is kept.
func TestCopies(t *testing.T) {
	img := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Parts(toolmw.ImagePart([]byte("png"), "image/png")), nil
	}
	tool := wrap(t, rates, img, cache.New(time.Hour, cache.WithSharedResults()))
	res, _ := tool(context.Background(), args)
	res.Parts()[0].Data[0] = 'X' // the maker's copy
	res, _ = tool(context.Background(), args)
	if got := string(res.Parts()[0].Data); got != "png" {
		t.Fatalf("served %q after the maker changed its result", got)
	}
	res.Parts()[0].Data[0] = 'Y' // a served copy
	res, _ = tool(context.Background(), args)
	if got := string(res.Parts()[0].Data); got != "png" {
		t.Fatalf("served %q after a caller changed what it was served", got)
	}
}

// TestErrorsNotKept: a failure is not kept.
func TestErrorsNotKept(t *testing.T) {
	var d dep
	d.set(open)
	tool := wrap(t, rates, d.tool, cache.New(time.Hour, cache.WithSharedResults()))
	if _, err := tool(context.Background(), args); !errors.Is(err, taxonomy.ErrCircuitOpen) {
		t.Fatalf("err %v", err)
	}
	d.set(nil)
	if got := call(t, tool, context.Background(), args); got != "rate 1" {
		t.Fatalf("after a failure: %q", got)
	}

}

// TestFallbackInsideNotKept: with the fallback inside the cache, the
// substitute it serves is not kept: once the tool answers, its own result
// is served.
func TestFallbackInsideNotKept(t *testing.T) {
	var d dep
	clk := clock.NewFake(t0)
	tool := wrap(t, rates, d.tool,
		cache.New(time.Minute, cache.WithSharedResults(), cache.WithClock(clk)),
		fallback.New(fallback.WithLastGood(time.Hour), fallback.WithSharedResults(), fallback.WithClock(clk)))
	call(t, tool, context.Background(), args) // rate 1, kept by both
	clk.Advance(2 * time.Minute)              // past the cache's TTL, within the fallback's
	d.set(open)
	got := call(t, tool, context.Background(), args)
	if m, orig, ok := fallback.Parse(toolmw.Text(got)); !ok || m.Source != fallback.SourceLastGood || orig.Content != "rate 1" {
		t.Fatalf("with the tool down: %q, want rate 1 marked as the last good result", got)
	}
	d.set(nil)
	if got := call(t, tool, context.Background(), args); got != "rate 2" {
		t.Fatalf("the tool back: %q, want its new result (the substitute was not kept)", got)
	}
}

// TestFallbackOutsideAges: a result the cache inside served again is no
// new result to the fallback outside: it ages from when it was made.
func TestFallbackOutsideAges(t *testing.T) {
	var d dep
	clk := clock.NewFake(t0)
	var ages []time.Duration
	tool := wrap(t, rates, d.tool,
		fallback.New(fallback.WithLastGood(time.Hour), fallback.WithSharedResults(), fallback.WithClock(clk),
			fallback.WithOnServe(func(e fallback.Event) { ages = append(ages, e.Age) })),
		cache.New(time.Minute, cache.WithSharedResults(), cache.WithClock(clk)))
	call(t, tool, context.Background(), args) // made at t0
	clk.Advance(50 * time.Second)
	call(t, tool, context.Background(), args) // a hit: still made at t0
	clk.Advance(40 * time.Second)             // the cache's TTL passed
	d.set(open)
	call(t, tool, context.Background(), args)
	if len(ages) != 1 || ages[0] != 90*time.Second {
		t.Fatalf("fallback served at ages %v, want one at 90s", ages)
	}
	if n := d.execs.Load(); n != 2 {
		t.Fatalf("%d executions, want 2", n)
	}
}

// TestValidate: a negative TTL or bound, an invalid store option, and
// neither or both of WithPartition and WithSharedResults are
// option_invalid at start-up; a TTL of 0 turns the layer off.
func TestValidate(t *testing.T) {
	part := cache.WithPartition(tenant)
	for name, c := range map[string]struct {
		ttl  time.Duration
		opts []cache.Option
	}{
		"negative ttl":    {-time.Second, []cache.Option{cache.WithSharedResults()}},
		"neither":         {time.Second, nil},
		"nil partition":   {time.Second, []cache.Option{cache.WithPartition(nil)}},
		"both":            {time.Second, []cache.Option{part, cache.WithSharedResults()}},
		"max entries":     {time.Second, []cache.Option{cache.WithSharedResults(), cache.WithMaxEntries(-1)}},
		"max bytes":       {time.Second, []cache.Option{cache.WithSharedResults(), cache.WithMaxBytes(-1)}},
		"store timeout":   {time.Second, []cache.Option{cache.WithSharedResults(), cache.WithStore(&storetest.MemResults{}, store.WithTimeout(-1))}},
		"off but invalid": {0, nil},
	} {
		err := cache.Validate(c.ttl, c.opts...)
		if taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
			t.Errorf("%s: Validate: %v", name, err)
		}
		if _, err := toolmw.Wrap(rates, new(dep).tool, cache.New(c.ttl, c.opts...)); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
			t.Errorf("%s: Wrap: %v", name, err)
		}
	}
	if err := cache.Validate(time.Second, part, nil, cache.WithStore(nil)); err != nil {
		t.Fatal(err)
	}
	var d dep
	tool := wrap(t, rates, d.tool, cache.New(0, cache.WithSharedResults()))
	call(t, tool, context.Background(), args)
	call(t, tool, context.Background(), args)
	if n := d.execs.Load(); n != 2 {
		t.Fatalf("TTL 0: %d executions of 2 calls", n)
	}
}

// TestCallbackPanics: a panicking callback is dropped; the call is
// served.
func TestCallbackPanics(t *testing.T) {
	var d dep
	tool := wrap(t, rates, d.tool, cache.New(time.Hour, cache.WithSharedResults(),
		cache.WithOnLookup(func(cache.Lookup) { panic("boom") })))
	call(t, tool, context.Background(), args)
	if got := call(t, tool, context.Background(), args); got != "rate 1" {
		t.Fatalf("%q", got)
	}
}

// keyOf is the key the layers give the store for a shared result of
// rates with a.
func keyOf(t *testing.T, a json.RawMessage) string {
	t.Helper()
	k, ok := resultkey.Make(rates.Name, true, "", a)
	if !ok {
		t.Fatal("no key")
	}
	return k.String()
}

// encode is a result as the layers keep it in a store.
func encode(t *testing.T, res toolmw.Result) []byte {
	t.Helper()
	v, err := resultcodec.Encode(res)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
