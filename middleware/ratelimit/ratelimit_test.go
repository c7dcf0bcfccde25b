package ratelimit_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type counter struct{ n atomic.Int32 }

func (c *counter) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	c.n.Add(1)
	return toolmw.Text("ok"), nil
}

func wrap(t *testing.T, name string, c *counter, mw toolmw.Middleware) toolmw.Tool {
	t.Helper()
	tool, err := toolmw.Wrap(toolmw.Spec{Name: name}, c.tool, mw)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// rateLimited checks err is a retryable rate-limited error and returns its RetryAfter.
func rateLimited(t *testing.T, err error) time.Duration {
	t.Helper()
	te, ok := taxonomy.From(err)
	if !ok || te.Kind() != taxonomy.KindRateLimited || te.Code() != taxonomy.CodeRateLimited || !te.Retryable() {
		t.Fatalf("err = %v, want a retryable rate-limited/rate_limited", err)
	}
	return te.RetryAfter()
}

func TestBurstPassesAtOnce(t *testing.T) {
	fc := clock.NewFake(time.Now())
	c := &counter{}
	tool := wrap(t, "search", c, ratelimit.New(1, 3, ratelimit.WithClock(fc), ratelimit.WithReject()))
	for i := range 3 {
		if _, err := tool(context.Background(), nil); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	_, err := tool(context.Background(), nil)
	if d := rateLimited(t, err); d != time.Second {
		t.Fatalf("RetryAfter = %v, want 1s", d)
	}
	fc.Advance(time.Second)
	if _, err := tool(context.Background(), nil); err != nil || c.n.Load() != 4 {
		t.Fatalf("after a second: err = %v, calls = %d", err, c.n.Load())
	}
}

func TestRejectLeavesTokens(t *testing.T) {
	fc := clock.NewFake(time.Now())
	lim := rate.NewLimiter(rate.Every(time.Second), 1)
	c := &counter{}
	tool := wrap(t, "search", c, ratelimit.New(0, 0, ratelimit.WithShared(lim), ratelimit.WithClock(fc), ratelimit.WithReject()))
	tool(context.Background(), nil)
	fc.Advance(400 * time.Millisecond)
	before := lim.TokensAt(fc.Now())
	for range 5 {
		_, err := tool(context.Background(), nil)
		if d := rateLimited(t, err); d != 600*time.Millisecond {
			t.Fatalf("RetryAfter = %v, want 600ms", d)
		}
	}
	if after := lim.TokensAt(fc.Now()); after != before {
		t.Fatalf("tokens = %v after refusals, want %v as before", after, before)
	}
	if c.n.Load() != 1 {
		t.Fatalf("the tool ran %d times, want 1", c.n.Load())
	}
}

func TestWaitWithinDeadline(t *testing.T) {
	fc := clock.NewFake(time.Now())
	c := &counter{}
	tool := wrap(t, "search", c, ratelimit.New(rate.Every(time.Second), 1, ratelimit.WithClock(fc)))
	tool(context.Background(), nil)
	ctx, cancel := context.WithDeadline(context.Background(), fc.Now().Add(time.Hour))
	defer cancel()
	done := make(chan error)
	go func() {
		_, err := tool(ctx, nil)
		done <- err
	}()
	fc.WaitForTimers(1)
	if c.n.Load() != 1 {
		t.Fatal("the tool ran before its turn")
	}
	fc.Advance(time.Second)
	if err := <-done; err != nil || c.n.Load() != 2 {
		t.Fatalf("err = %v, calls = %d; want the waiting call to run", err, c.n.Load())
	}
}

func TestNeverWaitsPastDeadline(t *testing.T) {
	fc := clock.NewFake(time.Now())
	lim := rate.NewLimiter(rate.Every(time.Second), 1)
	c := &counter{}
	tool := wrap(t, "search", c, ratelimit.New(0, 0, ratelimit.WithShared(lim), ratelimit.WithClock(fc)))
	tool(context.Background(), nil)
	before := lim.TokensAt(fc.Now())
	// The wait would end at +1s; the deadline is at +500ms.
	ctx, cancel := context.WithDeadline(context.Background(), fc.Now().Add(500*time.Millisecond))
	defer cancel()
	_, err := tool(ctx, nil)
	if d := rateLimited(t, err); d != time.Second {
		t.Fatalf("RetryAfter = %v, want 1s", d)
	}
	if fc.Timers() != 0 {
		t.Fatal("a wait was started")
	}
	if after := lim.TokensAt(fc.Now()); after != before {
		t.Fatalf("tokens = %v after the refusal, want %v as before", after, before)
	}
}

func TestMaxWait(t *testing.T) {
	fc := clock.NewFake(time.Now())
	tool := wrap(t, "search", &counter{}, ratelimit.New(rate.Every(time.Second), 1,
		ratelimit.WithClock(fc), ratelimit.WithMaxWait(500*time.Millisecond)))
	tool(context.Background(), nil)
	_, err := tool(context.Background(), nil)
	if d := rateLimited(t, err); d != time.Second {
		t.Fatalf("RetryAfter = %v, want 1s", d)
	}
}

// A call that ends while it waits for its turn gives its reservation back
// (the limiter's tokens are as they were) and never runs the tool: a
// cancellation returns context.Canceled; a deadline that passes during the
// wait (the fake clock never reaches the turn, the context's timer, on the
// bubble's time, fires) a typed tool-timeout/deadline_exceeded.
func TestEndWhileWaiting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		every time.Duration
		ctx   func() (context.Context, context.CancelFunc)
		end   func(cancel context.CancelFunc)
		check func(t *testing.T, err error)
	}{
		{
			name:  "cancelled",
			every: time.Second,
			ctx:   func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			end: func(cancel context.CancelFunc) {
				synctest.Wait() // the call waits for its turn
				cancel()
			},
			check: func(t *testing.T, err error) {
				if err != context.Canceled {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
			},
		},
		{
			name:  "deadline",
			every: time.Millisecond,
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 3*time.Millisecond)
			},
			end: func(context.CancelFunc) {},
			check: func(t *testing.T, err error) {
				te, ok := taxonomy.From(err)
				if !ok || te.Kind() != taxonomy.KindTimeout || te.Code() != taxonomy.CodeDeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("err = %v, want tool-timeout/deadline_exceeded", err)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fc := clock.NewFake(time.Now())
				lim := rate.NewLimiter(rate.Every(tc.every), 1)
				c := &counter{}
				tool := wrap(t, "search", c, ratelimit.New(0, 0, ratelimit.WithShared(lim), ratelimit.WithClock(fc)))
				tool(context.Background(), nil)
				before := lim.TokensAt(fc.Now())
				ctx, cancel := tc.ctx()
				defer cancel()
				done := make(chan error)
				go func() {
					_, err := tool(ctx, nil)
					done <- err
				}()
				tc.end(cancel)
				tc.check(t, <-done)
				if fc.Timers() != 0 {
					t.Fatal("the wait's timer was not stopped")
				}
				if after := lim.TokensAt(fc.Now()); after != before {
					t.Fatalf("tokens = %v after the wait, want %v as before", after, before)
				}
				if c.n.Load() != 1 {
					t.Fatal("the call that ended while waiting ran the tool")
				}
			})
		})
	}
}

// Without a fake clock, the wait runs on package time: in a bubble, a call
// waits exactly its turn.
func TestWaitOnPackageTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &counter{}
		tool := wrap(t, "search", c, ratelimit.New(rate.Every(time.Second), 1))
		start := time.Now()
		for range 3 {
			if _, err := tool(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		}
		if waited := time.Since(start); waited != 2*time.Second || c.n.Load() != 3 {
			t.Fatalf("3 calls at 1/s took %v, ran %d; want 2s, 3", waited, c.n.Load())
		}
	})
}

// WithMaxKeys bounds the keyed limiters: a new key beyond it drops the key
// used least recently, which starts with a full burst on its next use.
func TestMaxKeys(t *testing.T) {
	fc := clock.NewFake(time.Now())
	mw := ratelimit.New(rate.Every(time.Minute), 1, ratelimit.WithClock(fc), ratelimit.WithReject(), ratelimit.WithMaxKeys(1),
		ratelimit.WithKey(func(c toolmw.Call) string { return c.Tool }))
	a, b := wrap(t, "a", &counter{}, mw), wrap(t, "b", &counter{}, mw)
	a(context.Background(), nil)
	if _, err := a(context.Background(), nil); !errors.Is(err, taxonomy.ErrRateLimited) {
		t.Fatalf("a: err = %v, want rate-limited", err)
	}
	b(context.Background(), nil) // drops a
	if _, err := a(context.Background(), nil); err != nil {
		t.Fatalf("a: err = %v; its limiter was kept past the bound", err)
	}
}

func TestPerToolByDefault(t *testing.T) {
	fc := clock.NewFake(time.Now())
	mw := ratelimit.New(rate.Every(time.Minute), 1, ratelimit.WithClock(fc), ratelimit.WithReject())
	a, b := wrap(t, "a", &counter{}, mw), wrap(t, "b", &counter{}, mw)
	if _, err := a(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b(context.Background(), nil); err != nil {
		t.Fatalf("b: %v; a's limiter must not limit b", err)
	}
	_, err := a(context.Background(), nil)
	rateLimited(t, err)
}

func TestKeyed(t *testing.T) {
	fc := clock.NewFake(time.Now())
	upstream := map[string]string{"a": "search-api", "b": "search-api", "c": "other"}
	mw := ratelimit.New(rate.Every(time.Minute), 1, ratelimit.WithClock(fc), ratelimit.WithReject(),
		ratelimit.WithKey(func(c toolmw.Call) string { return upstream[c.Tool] }))
	a, b, c := wrap(t, "a", &counter{}, mw), wrap(t, "b", &counter{}, mw), wrap(t, "c", &counter{}, mw)
	if _, err := a(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	_, err := b(context.Background(), nil)
	rateLimited(t, err)
	if _, err := c(context.Background(), nil); err != nil {
		t.Fatalf("c: %v", err)
	}
}

func TestZeroLimitNeverGrants(t *testing.T) {
	fc := clock.NewFake(time.Now())
	tool := wrap(t, "a", &counter{}, ratelimit.New(0, 1, ratelimit.WithClock(fc)))
	if _, err := tool(context.Background(), nil); err != nil {
		t.Fatalf("the burst: %v", err)
	}
	_, err := tool(context.Background(), nil)
	te, ok := taxonomy.From(err)
	if !ok || te.Kind() != taxonomy.KindRateLimited || te.Retryable() || te.RetryAfter() != 0 {
		t.Fatalf("err = %v, want a rate-limited error, not retryable, without a hint", err)
	}
}

func TestInfSwitchesOff(t *testing.T) {
	c := &counter{}
	tool := ratelimit.New(rate.Inf, 0)(c.tool)
	for range 100 {
		if _, err := tool(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
}

func TestValidate(t *testing.T) {
	lim := rate.NewLimiter(1, 1)
	for _, tt := range []struct {
		limit rate.Limit
		burst int
		opts  []ratelimit.Option
		ok    bool
	}{
		{1, 1, nil, true},
		{rate.Inf, 0, nil, true},
		{0, 0, []ratelimit.Option{ratelimit.WithShared(lim)}, true},
		{-1, -1, []ratelimit.Option{ratelimit.WithShared(lim)}, true}, // not used
		// Zero and nil mean the default.
		{1, 0, nil, true},
		{1, 1, []ratelimit.Option{ratelimit.WithMaxWait(0), ratelimit.WithMaxKeys(0), ratelimit.WithClock(nil),
			ratelimit.WithShared(nil), ratelimit.WithKey(nil), nil}, true},
		{-1, 1, nil, false},
		{rate.Limit(math.NaN()), 1, nil, false},
		{1, -1, nil, false},
		{1, 1, []ratelimit.Option{ratelimit.WithMaxWait(-time.Second)}, false},
		{1, 1, []ratelimit.Option{ratelimit.WithMaxKeys(-1)}, false},
	} {
		err := ratelimit.Validate(tt.limit, tt.burst, tt.opts...)
		if tt.ok != (err == nil) {
			t.Errorf("Validate(%v, %d) = %v", tt.limit, tt.burst, err)
			continue
		}
		if te, ok := taxonomy.From(err); err != nil && (!ok || te.Code() != taxonomy.CodeOptionInvalid || te.Kind() != taxonomy.KindDefinitionInvalid) {
			t.Errorf("Validate(%v, %d) = %v, want tool-definition-invalid/option_invalid", tt.limit, tt.burst, err)
		}
	}
	// New makes a toolmw.Reject middleware of a bad value: Wrap reports it
	// at start-up.
	for _, mw := range []toolmw.Middleware{ratelimit.New(-5, 1), ratelimit.New(1, -1), ratelimit.New(1, 1, ratelimit.WithMaxKeys(-1))} {
		if _, err := toolmw.Wrap(toolmw.Spec{Name: "a"}, (&counter{}).tool, mw); !errors.Is(err, taxonomy.ErrDefinitionInvalid) {
			t.Errorf("Wrap = %v, want tool-definition-invalid", err)
		}
	}
	if err := ratelimit.Validate(-5, -1, ratelimit.WithMaxKeys(-1)); err == nil || !strings.Contains(err.Error(), "New(-5, -1)") {
		t.Errorf("Validate = %v, want the arguments' error first", err)
	}
}

// WithMaxWait(0) is the default: no cap, a call waits for its turn.
func TestMaxWaitZeroIsNoCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := wrap(t, "a", &counter{}, ratelimit.New(rate.Every(time.Hour), 1, ratelimit.WithMaxWait(0)))
		tool(context.Background(), nil)
		start := time.Now()
		if _, err := tool(context.Background(), nil); err != nil || time.Since(start) != time.Hour {
			t.Fatalf("err = %v after %v, want the call to wait its hour", err, time.Since(start))
		}
	})
}
