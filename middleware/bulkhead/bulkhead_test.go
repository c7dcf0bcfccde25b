package bulkhead_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/bulkhead"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// gauge is a tool that measures how many of its executions overlap.
type gauge struct {
	now, peak, calls atomic.Int64
	hold             func()
}

func (g *gauge) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	n := g.now.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			break
		}
	}
	g.calls.Add(1)
	g.hold()
	g.now.Add(-1)
	return toolmw.Text("ok"), nil
}

// TestNeverExceedsN: 100 goroutines call a tool limited to 5 at once, many
// times each, with real concurrency; the overlap measured inside the tool
// never passes 5, and every call runs.
func TestNeverExceedsN(t *testing.T) {
	const n, callers, each = 5, 100, 20
	g := &gauge{hold: func() { time.Sleep(50 * time.Microsecond) }}
	pool := bulkhead.NewPool(n, bulkhead.WithMaxQueue(callers))
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, g.tool, bulkhead.New(0, bulkhead.WithShared(pool)))
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range callers {
		wg.Go(func() {
			for range each {
				if _, err := tool(context.Background(), nil); err != nil {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f != 0 {
		t.Fatalf("%d calls failed", f)
	}
	if g.calls.Load() != callers*each {
		t.Fatalf("%d executions, want %d", g.calls.Load(), callers*each)
	}
	if p := g.peak.Load(); p > n {
		t.Fatalf("peak %d executions at once, limit %d", p, n)
	}
	st := pool.Stats()
	if st.Peak > n || st.Running != 0 || st.Waiting != 0 {
		t.Fatalf("pool %+v after the calls", st)
	}
	t.Logf("peak %d of %d with %d callers", g.peak.Load(), n, callers)
}

// TestFIFO: calls waiting for the one slot get it in the order they came.
func TestFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var mu sync.Mutex
		var order []int
		tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			var i int
			_ = json.Unmarshal(args, &i)
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			if i == 0 {
				<-release
			}
			return toolmw.Text("ok"), nil
		}, bulkhead.New(1))
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() {
				if _, err := tool(context.Background(), json.RawMessage{byte('0' + i)}); err != nil {
					t.Error(err)
				}
			})
			synctest.Wait() // call i is in the tool (0) or queued before call i+1 starts
		}
		close(release)
		wg.Wait()
		for i, got := range order {
			if got != i {
				t.Fatalf("order %v, want 0…9", order)
			}
		}
	})
}

// TestWaitBoundedByDeadline: a call that cannot get a slot before its
// deadline ends at the deadline as deadline_exceeded; one that cannot get
// it within WithMaxWait ends then as bulkhead_full, retryable; one finding
// the queue full ends at once; a cancel ends the wait with
// context.Canceled; none leaves a waiter or a slot behind.
func TestWaitBoundedByDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		held := func(context.Context, json.RawMessage) (toolmw.Result, error) {
			<-release
			return toolmw.Text("ok"), nil
		}
		pool := bulkhead.NewPool(1, bulkhead.WithMaxQueue(2))
		spec := toolmw.Spec{Name: "book"}
		tool := toolmw.MustWrap(spec, held, bulkhead.New(0, bulkhead.WithShared(pool)))
		capped := toolmw.MustWrap(spec, held, bulkhead.New(0, bulkhead.WithShared(pool), bulkhead.WithMaxWait(20*time.Millisecond)))
		go func() { _, _ = tool(context.Background(), nil) }()
		synctest.Wait()

		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err := tool(ctx, nil)
		cancel()
		if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeDeadlineExceeded || info.Retryable || time.Since(start) != 50*time.Millisecond {
			t.Errorf("deadline: %v after %v", err, time.Since(start))
		}

		start = time.Now()
		_, err = capped(context.Background(), nil)
		if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindRateLimited || info.Code != taxonomy.CodeBulkheadFull || !info.Retryable || time.Since(start) != 20*time.Millisecond {
			t.Errorf("max wait: %v after %v", err, time.Since(start))
		}

		// Fill the queue (2), then a third waiter is refused at once.
		cctx, ccancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if _, err := tool(cctx, nil); !errors.Is(err, context.Canceled) {
					t.Errorf("cancelled waiter: %v", err)
				}
			})
		}
		synctest.Wait()
		start = time.Now()
		if _, err := tool(context.Background(), nil); taxonomy.InfoOf(err).Code != taxonomy.CodeBulkheadFull || time.Since(start) != 0 {
			t.Errorf("full queue: %v after %v", err, time.Since(start))
		}
		ccancel()
		wg.Wait()
		if st := pool.Stats(); st.Waiting != 0 || st.Running != 1 {
			t.Errorf("after the waits: %+v", st)
		}
		close(release)
		synctest.Wait()
		if st := pool.Stats(); st.Running != 0 {
			t.Errorf("after the release: %+v", st)
		}
	})
}

// TestChurn: callers that give up at random moments never leak a slot or a
// queue entry, and the limit holds throughout.
func TestChurn(t *testing.T) {
	const n = 3
	g := &gauge{hold: func() { time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond) }}
	pool := bulkhead.NewPool(n)
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, g.tool, bulkhead.New(0, bulkhead.WithShared(pool), bulkhead.WithMaxWait(300*time.Microsecond)))
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 40 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(400))*time.Microsecond)
				_, _ = tool(ctx, nil)
				cancel()
			}
		})
	}
	wg.Wait()
	if st := pool.Stats(); st.Running != 0 || st.Waiting != 0 || st.Peak > n || g.peak.Load() > n {
		t.Fatalf("after churn: %+v, measured peak %d", st, g.peak.Load())
	}
}

// TestPanicReleasesTheSlot: a panicking tool gives its slot back.
func TestPanicReleasesTheSlot(t *testing.T) {
	pool := bulkhead.NewPool(1)
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		panic("boom")
	}, bulkhead.New(0, bulkhead.WithShared(pool)))
	func() {
		defer func() { _ = recover() }()
		_, _ = tool(context.Background(), nil)
	}()
	if st := pool.Stats(); st.Running != 0 {
		t.Fatalf("%+v after a panic", st)
	}
}

func TestOffAndValidate(t *testing.T) {
	calls := 0
	fn := func(context.Context, json.RawMessage) (toolmw.Result, error) { calls++; return toolmw.Result{}, nil }
	if _, err := bulkhead.New(0)(fn)(context.Background(), nil); err != nil || calls != 1 {
		t.Fatal("New(0) is off")
	}
	for _, err := range []error{
		bulkhead.Validate(-1),
		bulkhead.Validate(1, bulkhead.WithMaxWait(-time.Second)),
		bulkhead.Validate(1, bulkhead.WithMaxQueue(-1)),
		bulkhead.ValidatePool(0),
	} {
		if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeOptionInvalid {
			t.Errorf("%v, want option_invalid", err)
		}
	}
	if _, err := toolmw.Wrap(toolmw.Spec{Name: "book"}, fn, bulkhead.New(-1)); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
		t.Errorf("Wrap: %v", err)
	}
	if err := bulkhead.Validate(0, bulkhead.WithShared(nil), bulkhead.WithMaxWait(0), bulkhead.WithMaxQueue(0)); err != nil {
		t.Error(err)
	}
}
