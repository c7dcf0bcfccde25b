package cache_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/cache"
	"github.com/toolmw/toolmw/taxonomy"
)

// gate is a tool whose calls block until it is opened; the first call
// fails when failFirst is set.
type gate struct {
	open      chan struct{}
	failFirst bool
	execs     atomic.Int64
	started   chan struct{} // receives once per call started
}

func newGate(failFirst bool) *gate {
	return &gate{open: make(chan struct{}), failFirst: failFirst, started: make(chan struct{}, 1000)}
}

func (g *gate) tool(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	n := g.execs.Add(1)
	g.started <- struct{}{}
	select {
	case <-g.open:
	case <-ctx.Done():
		return toolmw.Result{}, ctx.Err()
	}
	if g.failFirst && n == 1 {
		return toolmw.Result{}, open
	}
	return toolmw.Text(fmt.Sprintf("rate %d", n)), nil
}

// race makes n calls of tool with args at once and returns their
// answers.
func race(t *testing.T, tool toolmw.Tool, n int, ctx context.Context) (results []string, errs []error) {
	t.Helper()
	results, errs = make([]string, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res, err := tool(ctx, args)
			results[i], errs[i] = res.Content, err
		})
	}
	wg.Wait()
	return results, errs
}

// TestConcurrentMisses: 50 calls of one key missing at once call the tool
// once; the others wait for it and are served copies of its result.
func TestConcurrentMisses(t *testing.T) {
	g := newGate(false)
	var seen lookups
	tool := wrap(t, rates, g.tool, cache.New(time.Hour, cache.WithSharedResults(), cache.WithOnLookup(seen.add)))
	done := make(chan struct{})
	var results []string
	var errs []error
	go func() {
		results, errs = race(t, tool, 50, context.Background())
		close(done)
	}()
	<-g.started // the first call runs; the others find its flight or, later, its result
	time.Sleep(20 * time.Millisecond)
	close(g.open)
	<-done
	for i := range results {
		if errs[i] != nil || results[i] != "rate 1" {
			t.Fatalf("call %d: %q, %v", i, results[i], errs[i])
		}
	}
	if n := g.execs.Load(); n != 1 {
		t.Fatalf("%d executions of 50 concurrent calls of one key, want 1", n)
	}
	got := outcomes(seen.take())
	if got["miss"] != 1 || got["hit/in_flight"]+got["hit/memory"] != 49 {
		t.Fatalf("lookups %v", got)
	}
	t.Logf("lookups %v", got)
}

// TestConcurrentMissFails: when the call the others wait for fails, each
// calls the tool itself and gets its own answer, not the first one's
// error.
func TestConcurrentMissFails(t *testing.T) {
	g := newGate(true)
	tool := wrap(t, rates, g.tool, cache.New(time.Hour, cache.WithSharedResults()))
	first := make(chan error, 1)
	go func() {
		_, err := tool(context.Background(), args)
		first <- err
	}()
	<-g.started
	done := make(chan struct{})
	var results []string
	var errs []error
	go func() {
		results, errs = race(t, tool, 20, context.Background())
		close(done)
	}()
	time.Sleep(20 * time.Millisecond) // the 20 find the flight (or, late, call after it)
	close(g.open)
	if err := <-first; !errors.Is(err, taxonomy.ErrCircuitOpen) {
		t.Fatalf("the first call: %v", err)
	}
	<-done
	for i := range results {
		if errs[i] != nil {
			t.Fatalf("call %d waiting for a failed call: %v, want its own answer", i, errs[i])
		}
	}
	if n := g.execs.Load(); n < 2 || n > 21 {
		t.Fatalf("%d executions", n)
	}
}

// TestWaitBounded: a call waiting for another's miss ends with its own
// deadline (tool-timeout/deadline_exceeded) or cancellation.
func TestWaitBounded(t *testing.T) {
	g := newGate(false)
	tool := wrap(t, rates, g.tool, cache.New(time.Hour, cache.WithSharedResults()))
	first := make(chan error, 1)
	go func() {
		_, err := tool(context.Background(), args)
		first <- err
	}()
	<-g.started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := tool(ctx, args)
	if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindTimeout || info.Code != taxonomy.CodeDeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a wait past the caller's deadline: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the wait took %v", d)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); ccancel() }()
	if _, err := tool(cctx, args); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
	close(g.open)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if n := g.execs.Load(); n != 1 {
		t.Fatalf("%d executions, want 1", n)
	}
}

// TestConcurrentKeys: calls of many keys and partitions at once, under
// -race, each get their own key's result.
func TestConcurrentKeys(t *testing.T) {
	echo := func(ctx context.Context, a json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text(tenant(ctx, toolmw.Call{}) + ":" + string(a)), nil
	}
	tool := wrap(t, rates, echo, cache.New(time.Hour, cache.WithPartition(tenant), cache.WithMaxEntries(8)))
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			ctx := context.WithValue(context.Background(), tenantKey{}, fmt.Sprint("t", i%4))
			for j := range 200 {
				a := json.RawMessage(fmt.Sprint(j % 10))
				res, err := tool(ctx, a)
				if want := fmt.Sprintf("t%d:%d", i%4, j%10); err != nil || res.Content != want {
					t.Errorf("%q, %v; want %q", res.Content, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
