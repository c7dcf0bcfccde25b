package fallback_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/fallback"
	"github.com/toolmw/toolmw/middleware/internal/resultkey"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/store/storetest"
	"github.com/toolmw/toolmw/taxonomy"
)

// storeErrors collects a layer's store errors.
type storeErrors struct {
	mu   sync.Mutex
	errs []store.Error
}

func (r *storeErrors) add(e store.Error) {
	r.mu.Lock()
	r.errs = append(r.errs, e)
	r.mu.Unlock()
}

func (r *storeErrors) take() []store.Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.errs
	r.errs = nil
	return s
}

// withDegraded is a middleware that records, once the call returns, the
// layer the call record names Degraded.
func withDegraded(into *string) toolmw.Middleware {
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, a json.RawMessage) (toolmw.Result, error) {
			res, err := next(ctx, a)
			c, _ := toolmw.CallFrom(ctx)
			*into = c.Degraded
			return res, err
		}
	}
}

var flights = json.RawMessage(`{"from":"OSL","to":"LHR"}`)

// TestStoreShared: a last good result one replica made is served by
// another whose tool is down, marked with its age; each success is
// written once.
func TestStoreShared(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	s := &storetest.MemResults{Clock: clk}
	var up, down dep
	down.set(open)
	opts := []fallback.Option{fallback.WithLastGood(10 * time.Minute), fallback.WithSharedResults(), fallback.WithClock(clk), fallback.WithStore(s, store.WithTimeout(time.Minute))}
	a, b := wrap(t, search, up.tool, opts...), wrap(t, search, down.tool, opts...)
	if _, err := a(context.Background(), flights); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5 * time.Second)
	res, err := b(context.Background(), json.RawMessage(`{"to":"LHR","from":"OSL"}`))
	m, orig, ok := fallback.Parse(res)
	if err != nil || !ok || orig.Content != "seats 1" || m.Age != 5*time.Second {
		t.Fatalf("%q, %v: want seats 1, 5s old", res.Content, err)
	}
	if n := s.Calls("set"); n != 1 {
		t.Fatalf("%d sets, want 1", n)
	}
	// A result too old for the TTL is not served.
	clk.Advance(10 * time.Minute)
	if _, err := b(context.Background(), flights); !errors.Is(err, taxonomy.ErrCircuitOpen) {
		t.Fatalf("past the TTL: %v", err)
	}
}

// TestStoreDown: with the store down, a success is kept in process and a
// failure is served the process's own last good result, marked degraded
// and reported; the store rests.
func TestStoreDown(t *testing.T) {
	s := &storetest.MemResults{}
	s.Fail("get", errors.New("connection refused"))
	s.Fail("set", errors.New("connection refused"))
	var d dep
	var r storeErrors
	var deg string
	tool, err := toolmw.Wrap(search, d.tool, withDegraded(&deg), fallback.New(fallback.WithLastGood(time.Hour), fallback.WithSharedResults(),
		fallback.WithStore(s, store.WithOnError(r.add), store.WithTimeout(time.Minute))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tool(context.Background(), flights); err != nil || deg != "fallback" {
		t.Fatalf("%v, degraded %q", err, deg)
	}
	errs := r.take()
	if len(errs) != 1 || errs[0].Layer != "fallback" || errs[0].Op != "set" || errs[0].Refused {
		t.Fatalf("reports %+v", errs)
	}
	d.set(open)
	res, err := tool(context.Background(), flights)
	if _, orig, ok := fallback.Parse(res); err != nil || !ok || orig.Content != "seats 1" || deg != "fallback" {
		t.Fatalf("%q, %v, degraded %q: want the process's own last good result", res.Content, err, deg)
	}
	if errs := r.take(); len(errs) != 1 || errs[0].Op != "get" || !errors.Is(errs[0].Err, store.ErrResting) {
		t.Fatalf("reports %+v, want a get while the store rests", errs)
	}
	if s.Calls("get") != 0 || s.Calls("set") != 1 {
		t.Fatalf("%d gets, %d sets: the store was asked while resting", s.Calls("get"), s.Calls("set"))
	}
}

// TestStoreCorrupt: a stored value that does not decode is taken for none
// and reported with store.ErrCorrupt; the process's own result is served.
func TestStoreCorrupt(t *testing.T) {
	s := &storetest.MemResults{}
	var d dep
	var r storeErrors
	tool := wrap(t, search, d.tool, fallback.WithLastGood(time.Hour), fallback.WithSharedResults(), fallback.WithStore(s, store.WithOnError(r.add), store.WithTimeout(time.Minute)))
	if _, err := tool(context.Background(), flights); err != nil {
		t.Fatal(err)
	}
	k, _ := resultkey.Make(search.Name, true, "", flights)
	if err := s.Set(context.Background(), k.String(), []byte("\x00garbage"), time.Now().Add(time.Second), time.Hour); err != nil {
		t.Fatal(err)
	}
	d.set(open)
	res, err := tool(context.Background(), flights)
	if _, orig, ok := fallback.Parse(res); err != nil || !ok || orig.Content != "seats 1" {
		t.Fatalf("%q, %v", res.Content, err)
	}
	if errs := r.take(); len(errs) != 1 || !errors.Is(errs[0].Err, store.ErrCorrupt) || errs[0].Key != k.String() {
		t.Fatalf("reports %+v", errs)
	}
}

// TestStoreNeedsLastGood: WithStore without WithLastGood has nothing to
// keep: option_invalid.
func TestStoreNeedsLastGood(t *testing.T) {
	for _, opts := range [][]fallback.Option{
		{fallback.WithStore(&storetest.MemResults{}), fallback.WithFunc(substitute)},
		{fallback.WithLastGood(0), fallback.WithSharedResults(), fallback.WithStore(&storetest.MemResults{}, store.WithTimeout(-1))},
	} {
		if err := fallback.Validate(opts...); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
			t.Errorf("Validate: %v", err)
		}
	}
}
