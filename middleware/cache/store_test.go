package cache_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/cache"
	"github.com/toolmw/toolmw/middleware/fallback"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/store/storetest"
	"github.com/toolmw/toolmw/taxonomy"
)

// reports collects a layer's store errors.
type reports struct {
	mu   sync.Mutex
	errs []store.Error
}

func (r *reports) add(e store.Error) {
	r.mu.Lock()
	r.errs = append(r.errs, e)
	r.mu.Unlock()
}

func (r *reports) take() []store.Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.errs
	r.errs = nil
	return s
}

// degraded is a middleware that records, once the call returns, the
// layer the call record names Degraded, as the tracing layer reads it.
func degraded(into *string) toolmw.Middleware {
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, a json.RawMessage) (toolmw.Result, error) {
			res, err := next(ctx, a)
			c, _ := toolmw.CallFrom(ctx)
			*into = c.Degraded
			return res, err
		}
	}
}

// TestStoreShared: replicas given one store share results: what one
// kept, another is served, from the store, without calling the tool; the
// result is then kept in its process too.
// patient is the store timeout of the tests whose memory store answers at
// once: a minute, so that a loaded machine's scheduling delay never reads
// as an outage. The tests of outages keep the default.
var patient = store.WithTimeout(time.Minute)

func TestStoreShared(t *testing.T) {
	s := &storetest.MemResults{}
	clk := clock.NewFake(t0)
	s.Clock = clk
	var d dep
	var seen lookups
	var r reports
	replica := func() toolmw.Tool {
		return wrap(t, rates, d.tool, cache.New(time.Minute, cache.WithSharedResults(), cache.WithClock(clk),
			cache.WithStore(s, store.WithOnError(r.add), patient), cache.WithOnLookup(seen.add)))
	}
	a, b := replica(), replica()
	call(t, a, context.Background(), args)
	clk.Advance(10 * time.Second)
	if got := call(t, b, context.Background(), same); got != "rate 1" {
		t.Fatalf("the other replica: %q, want the shared result", got)
	}
	if got := call(t, b, context.Background(), args); got != "rate 1" {
		t.Fatalf("the other replica again: %q", got)
	}
	if n := d.execs.Load(); n != 1 {
		t.Fatalf("%d executions, want 1", n)
	}
	got := seen.take()
	if len(got) != 3 || got[1].Source != cache.SourceStore || got[1].Age != 10*time.Second || got[2].Source != cache.SourceMemory {
		t.Fatalf("lookups %+v", got)
	}
	if n := s.Calls("get"); n != 2 {
		t.Fatalf("%d gets, want 2 (a's miss, b's first call)", n)
	}
	clk.Advance(time.Minute)
	if got := call(t, b, context.Background(), args); got != "rate 2" {
		t.Fatalf("past the TTL: %q", got)
	}
	if errs := r.take(); len(errs) != 0 {
		t.Fatalf("store errors %v", errs)
	}
}

// TestStoreDown: a store that fails or hangs makes calls miss (the tool
// is called) within the store timeout, marked degraded and reported; the
// store is then left alone for store.Rest.
func TestStoreDown(t *testing.T) {
	boom := errors.New("connection refused")
	for _, hang := range []bool{false, true} {
		t.Run(fmt.Sprint("hang=", hang), func(t *testing.T) {
			s := &storetest.MemResults{}
			if hang {
				s.Hang("get")
			} else {
				s.Fail("get", boom)
			}
			var d dep
			var r reports
			var deg string
			tool := wrap(t, rates, d.tool, degraded(&deg),
				cache.New(time.Minute, cache.WithSharedResults(), cache.WithStore(s, store.WithTimeout(50*time.Millisecond), store.WithOnError(r.add))))
			start := time.Now()
			call(t, tool, context.Background(), args)
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("the call took %v with the store down", took)
			}
			if deg != "cache" {
				t.Fatalf("Degraded %q, want cache", deg)
			}
			errs := r.take()
			if len(errs) != 1 || errs[0].Layer != "cache" || errs[0].Op != "get" || errs[0].Refused || len(errs[0].Key) != 64 {
				t.Fatalf("reports %+v", errs)
			}
			if hang && !errors.Is(errs[0].Err, context.DeadlineExceeded) || !hang && !errors.Is(errs[0].Err, boom) {
				t.Fatalf("report %v", errs[0].Err)
			}
			// Within the rest, the store is not asked; the process's own
			// result is served.
			if got := call(t, tool, context.Background(), args); got != "rate 1" {
				t.Fatalf("second call: %q, want the result kept in process", got)
			}
			if n := s.Calls("get"); n != 1 {
				t.Fatalf("%d gets, want 1", n)
			}
			if n := s.Calls("set"); n != 0 {
				t.Fatalf("%d sets while the store rests", n)
			}
			call(t, tool, context.Background(), json.RawMessage(`"other"`))
			if errs := r.take(); len(errs) != 1 || !errors.Is(errs[0].Err, store.ErrResting) {
				t.Fatalf("a miss within the rest: reports %+v, want one ErrResting", errs)
			}
		})
	}
}

// TestStoreCallerDeadline: a caller whose own deadline passes while the
// store is asked ends as tool-timeout/deadline_exceeded, and the store is
// not blamed.
func TestStoreCallerDeadline(t *testing.T) {
	s := &storetest.MemResults{}
	s.Hang("get")
	var d dep
	var r reports
	tool := wrap(t, rates, d.tool, cache.New(time.Minute, cache.WithSharedResults(),
		cache.WithStore(s, store.WithTimeout(time.Hour), store.WithOnError(r.add))))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := tool(ctx, args)
	if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindTimeout || info.Code != taxonomy.CodeDeadlineExceeded {
		t.Fatalf("err %v", err)
	}
	if errs := r.take(); len(errs) != 0 || d.execs.Load() != 0 {
		t.Fatalf("reports %v, %d executions", errs, d.execs.Load())
	}
}

// TestStoreSetFails: a store that takes no result is reported and the
// call marked degraded; the caller is served.
func TestStoreSetFails(t *testing.T) {
	s := &storetest.MemResults{}
	s.Fail("set", errors.New("OOM command not allowed"))
	var d dep
	var r reports
	var deg string
	tool := wrap(t, rates, d.tool, degraded(&deg),
		cache.New(time.Minute, cache.WithSharedResults(), cache.WithStore(s, store.WithOnError(r.add), patient)))
	if got := call(t, tool, context.Background(), args); got != "rate 1" || deg != "cache" {
		t.Fatalf("%q, degraded %q", got, deg)
	}
	if errs := r.take(); len(errs) != 1 || errs[0].Op != "set" {
		t.Fatalf("reports %+v", errs)
	}
}

// TestStoreCorrupt: a value that does not decode, or a store answering
// store.ErrCorrupt, is a miss, reported with store.ErrCorrupt; the store
// does not rest, and the next success replaces the value.
func TestStoreCorrupt(t *testing.T) {
	s := &storetest.MemResults{}
	key := keyOf(t, args)
	if err := s.Set(context.Background(), key, []byte("TMR1\x00\xff garbage"), time.Now(), time.Hour); err != nil {
		t.Fatal(err)
	}
	var d dep
	var r reports
	var deg string
	replica := func() toolmw.Tool {
		return wrap(t, rates, d.tool, degraded(&deg), cache.New(time.Minute, cache.WithSharedResults(), cache.WithStore(s, store.WithOnError(r.add), patient)))
	}
	a := replica()
	if got := call(t, a, context.Background(), args); got != "rate 1" {
		t.Fatalf("%q", got)
	}
	errs := r.take()
	if len(errs) != 1 || errs[0].Op != "get" || errs[0].Key != key || !errors.Is(errs[0].Err, store.ErrCorrupt) || errs[0].Refused {
		t.Fatalf("reports %+v", errs)
	}
	if deg != "" {
		t.Fatalf("Degraded %q: the store answered", deg)
	}
	if got := call(t, replica(), context.Background(), args); got != "rate 1" {
		t.Fatalf("another replica after the value was replaced: %q", got)
	}
	s.Fail("get", fmt.Errorf("redis: a stored time that is no time: %w", store.ErrCorrupt))
	call(t, replica(), context.Background(), args)
	call(t, replica(), context.Background(), args)
	if errs := r.take(); len(errs) != 2 || !errors.Is(errs[0].Err, store.ErrCorrupt) || !errors.Is(errs[1].Err, store.ErrCorrupt) {
		t.Fatalf("reports %+v, want two ErrCorrupt (the store does not rest)", errs)
	}
}

// TestStoreSkew: a result made ahead of this replica's clock is served
// within the TTL, at age 0, and not past it.
func TestStoreSkew(t *testing.T) {
	s := &storetest.MemResults{}
	put := func(made time.Time, text string) {
		t.Helper()
		v := encode(t, toolmw.Text(text))
		if err := s.Set(context.Background(), keyOf(t, args), v, made, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	clk := clock.NewFake(t0)
	var d dep
	var seen lookups
	tool := func() toolmw.Tool {
		return wrap(t, rates, d.tool, cache.New(time.Minute, cache.WithSharedResults(), cache.WithClock(clk), cache.WithStore(s, patient), cache.WithOnLookup(seen.add)))
	}
	put(t0.Add(30*time.Second), "ahead")
	if got := call(t, tool(), context.Background(), args); got != "ahead" {
		t.Fatalf("%q", got)
	}
	if ls := seen.take(); len(ls) != 1 || ls[0].Age != 0 {
		t.Fatalf("lookups %+v", ls)
	}
	put(t0.Add(2*time.Minute), "far ahead")
	if got := call(t, tool(), context.Background(), args); got != "rate 1" {
		t.Fatalf("%q, want a miss", got)
	}
}

// TestFallbackServesCacheEntry: a fallback given the cache's store serves,
// when its tool is down, the result a cache on another replica kept.
func TestFallbackServesCacheEntry(t *testing.T) {
	s := &storetest.MemResults{}
	clk := clock.NewFake(t0)
	s.Clock = clk
	var up, down dep
	down.set(open)
	a := wrap(t, rates, up.tool, cache.New(time.Minute, cache.WithSharedResults(), cache.WithClock(clk), cache.WithStore(s, patient)))
	call(t, a, context.Background(), args)
	clk.Advance(42 * time.Second)
	b := wrap(t, rates, down.tool, fallback.New(fallback.WithLastGood(10*time.Minute), fallback.WithSharedResults(),
		fallback.WithClock(clk), fallback.WithStore(s, patient)))
	res, err := b(context.Background(), same)
	if err != nil {
		t.Fatal(err)
	}
	m, orig, ok := fallback.Parse(res)
	if !ok || m.Source != fallback.SourceLastGood || m.Age != 42*time.Second || orig.Content != "rate 1" {
		t.Fatalf("%q: want the cache's result, marked, 42s old", res.Content)
	}
	// And the reverse: a cache serves what a fallback kept.
	var other dep
	c := wrap(t, rates, other.tool, fallback.New(fallback.WithLastGood(10*time.Minute), fallback.WithSharedResults(),
		fallback.WithClock(clk), fallback.WithStore(s, patient)))
	key := json.RawMessage(`{"from":"EUR","to":"USD"}`)
	call(t, c, context.Background(), key)
	d := wrap(t, rates, down.tool, cache.New(time.Minute, cache.WithSharedResults(), cache.WithClock(clk), cache.WithStore(s, patient)))
	if got := call(t, d, context.Background(), key); got != "rate 1" {
		t.Fatalf("a cache given the fallback's store: %q", got)
	}
}
