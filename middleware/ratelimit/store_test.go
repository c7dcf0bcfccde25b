package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// scripted is a Store that answers what decide says and records the
// requests it was given. decide may block until ctx is done, as a Store
// that does not answer.
type scripted struct {
	mu     sync.Mutex
	reqs   []ratelimit.Request
	decide func(ctx context.Context, r ratelimit.Request) (ratelimit.Decision, error)
}

func (s *scripted) Admit(ctx context.Context, r ratelimit.Request) (ratelimit.Decision, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
	return s.decide(ctx, r)
}

func (s *scripted) requests() []ratelimit.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ratelimit.Request(nil), s.reqs...)
}

func answer(d ratelimit.Decision) func(context.Context, ratelimit.Request) (ratelimit.Decision, error) {
	return func(context.Context, ratelimit.Request) (ratelimit.Decision, error) { return d, nil }
}

// TestStoreDecides: with a Store, its decision is the layer's: admitted at
// once, admitted after the wait it reserved, or refused with its wait as
// RetryAfter; the request names the tool (or the key) and carries the
// limit, the burst and the call's bound on waiting.
func TestStoreDecides(t *testing.T) {
	cases := []struct {
		name      string
		decision  ratelimit.Decision
		opts      []ratelimit.Option
		deadline  time.Duration // 0: none
		wantKey   string
		wantMax   time.Duration
		wantErr   bool
		wantAfter time.Duration
		wantTook  time.Duration
	}{
		{name: "admit now", decision: ratelimit.Decision{Allowed: true}, wantKey: "search", wantMax: rate.InfDuration},
		{name: "admit after wait", decision: ratelimit.Decision{Allowed: true, Wait: 300 * time.Millisecond},
			deadline: time.Second, wantKey: "search", wantMax: time.Second, wantTook: 300 * time.Millisecond},
		{name: "refuse", decision: ratelimit.Decision{Wait: 2 * time.Second}, opts: []ratelimit.Option{ratelimit.WithReject()},
			wantKey: "search", wantMax: 0, wantErr: true, wantAfter: 2 * time.Second},
		{name: "max wait caps", decision: ratelimit.Decision{Wait: time.Second},
			opts:    []ratelimit.Option{ratelimit.WithMaxWait(200 * time.Millisecond)},
			wantKey: "search", wantMax: 200 * time.Millisecond, wantErr: true, wantAfter: time.Second},
		{name: "a wait beyond the bound is refused", decision: ratelimit.Decision{Allowed: true, Wait: time.Hour},
			deadline: time.Second, wantKey: "search", wantMax: time.Second, wantErr: true, wantAfter: time.Hour},
		{name: "keyed", decision: ratelimit.Decision{Allowed: true},
			opts:    []ratelimit.Option{ratelimit.WithKey(func(toolmw.Call) string { return "upstream" })},
			wantKey: "upstream", wantMax: rate.InfDuration},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &scripted{decide: answer(tc.decision)}
				c := &counter{}
				tool := wrap(t, "search", c, ratelimit.New(4, 2, append(tc.opts, ratelimit.WithStore(s))...))
				ctx := context.Background()
				if tc.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.deadline)
					defer cancel()
				}
				start := time.Now()
				_, err := tool(ctx, nil)
				took := time.Since(start)
				if tc.wantErr {
					if got := rateLimited(t, err); got != tc.wantAfter {
						t.Errorf("RetryAfter = %v, want %v", got, tc.wantAfter)
					}
					if c.n.Load() != 0 {
						t.Error("the tool ran")
					}
				} else if err != nil || c.n.Load() != 1 {
					t.Fatalf("err = %v, ran %d times; want one run", err, c.n.Load())
				}
				if took != tc.wantTook {
					t.Errorf("took %v, want %v", took, tc.wantTook)
				}
				reqs := s.requests()
				want := ratelimit.Request{Key: tc.wantKey, Interval: 250 * time.Millisecond, Burst: 2, MaxWait: tc.wantMax}
				if len(reqs) != 1 || reqs[0] != want {
					t.Errorf("requests = %+v, want [%+v]", reqs, want)
				}
			})
		})
	}
}

// TestStoreWaitCancelled: a call cancelled or past its deadline while it
// waits for its reserved slot returns at once, with context.Canceled or
// tool-timeout/deadline_exceeded.
func TestStoreWaitCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &scripted{decide: answer(ratelimit.Decision{Allowed: true, Wait: 500 * time.Millisecond})}
		c := &counter{}
		tool := wrap(t, "search", c, ratelimit.New(4, 2, ratelimit.WithStore(s)))

		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		if _, err := tool(ctx, nil); !errors.Is(err, context.Canceled) || time.Since(start) != 100*time.Millisecond {
			t.Errorf("cancelled: err = %v after %v, want context.Canceled after 100ms", err, time.Since(start))
		}
		if c.n.Load() != 0 {
			t.Error("the tool ran")
		}
	})
}

// TestStoreFallsBack: a Store that fails, or does not answer within the
// store timeout, leaves the call to the local limiter at once: the call
// succeeds, nothing waits past the timeout, the fallback is reported, and
// the Store is left alone for a moment, then asked again.
func TestStoreFallsBack(t *testing.T) {
	down := errors.New("dial tcp 10.0.0.7:6379: connection refused")
	cases := []struct {
		name    string
		decide  func(ctx context.Context, r ratelimit.Request) (ratelimit.Decision, error)
		took    time.Duration
		wantErr error
	}{
		{name: "error", decide: func(context.Context, ratelimit.Request) (ratelimit.Decision, error) {
			return ratelimit.Decision{}, down
		}, wantErr: down},
		{name: "no answer", decide: func(ctx context.Context, _ ratelimit.Request) (ratelimit.Decision, error) {
			<-ctx.Done()
			return ratelimit.Decision{}, ctx.Err()
		}, took: 30 * time.Millisecond, wantErr: context.DeadlineExceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &scripted{decide: tc.decide}
				c := &counter{}
				var reports []store.Error
				tool := wrap(t, "search", c, ratelimit.New(1, 2, ratelimit.WithReject(),
					ratelimit.WithStore(s, store.WithTimeout(30*time.Millisecond),
						store.WithOnError(func(e store.Error) { reports = append(reports, e) }))))
				start := time.Now()
				if _, err := tool(context.Background(), nil); err != nil {
					t.Fatalf("first call: %v", err)
				}
				if took := time.Since(start); took != tc.took {
					t.Errorf("the first call took %v, want %v", took, tc.took)
				}
				// The Store rests: the local limiter (burst 2) decides at once.
				start = time.Now()
				if _, err := tool(context.Background(), nil); err != nil {
					t.Fatalf("second call: %v", err)
				}
				if _, err := tool(context.Background(), nil); err == nil {
					t.Fatal("third call: the local limiter let a third call through a burst of 2")
				}
				if took := time.Since(start); took != 0 {
					t.Errorf("calls while the store rests took %v, want 0", took)
				}
				if n := len(s.requests()); n != 1 {
					t.Errorf("the store was asked %d times while resting, want 1", n)
				}
				if len(reports) != 3 || !errors.Is(reports[0].Err, tc.wantErr) || reports[0].Key != "search" ||
					reports[0].Layer != "ratelimit" || reports[0].Op != "admit" || reports[0].Refused ||
					!errors.Is(reports[1].Err, store.ErrResting) {
					t.Fatalf("reports = %+v, want 3, the first with %v, then resting", reports, tc.wantErr)
				}
				// After the rest, the Store is asked again, and decides.
				time.Sleep(time.Second)
				s.decide = answer(ratelimit.Decision{Allowed: true})
				if _, err := tool(context.Background(), nil); err != nil {
					t.Fatalf("after the rest: %v", err)
				}
				if n := len(s.requests()); n != 2 {
					t.Errorf("the store was asked %d times, want 2", n)
				}
			})
		})
	}
}

// TestStoreTimeoutBoundedByDeadline: a Store that does not answer holds a
// call no longer than the call's deadline when it is shorter than the
// store timeout, and the call then ends as its deadline says.
func TestStoreTimeoutBoundedByDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &scripted{decide: func(ctx context.Context, _ ratelimit.Request) (ratelimit.Decision, error) {
			<-ctx.Done()
			return ratelimit.Decision{}, ctx.Err()
		}}
		c := &counter{}
		tool := wrap(t, "search", c, ratelimit.New(1, 1, ratelimit.WithStore(s, store.WithTimeout(time.Second))))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := tool(ctx, nil)
		if took := time.Since(start); took != 20*time.Millisecond {
			t.Errorf("took %v, want the deadline, 20ms", took)
		}
		if !errors.Is(err, context.DeadlineExceeded) || c.n.Load() != 0 {
			t.Errorf("err = %v, ran %d; want deadline exceeded, no run", err, c.n.Load())
		}
	})
}

// TestStoreFailClosed: with WithFailClosed, a call the Store did not decide
// is refused as rate-limited, retryable, and nothing of the Store's error
// reaches the caller.
func TestStoreFailClosed(t *testing.T) {
	for _, secret := range canary.Values() {
		s := &scripted{decide: func(context.Context, ratelimit.Request) (ratelimit.Decision, error) {
			return ratelimit.Decision{}, fmt.Errorf("redis AUTH %s: refused", secret)
		}}
		c := &counter{}
		var refused []bool
		tool := wrap(t, "search", c, ratelimit.New(1, 1, ratelimit.WithFailClosed(),
			ratelimit.WithStore(s, store.WithOnError(func(e store.Error) { refused = append(refused, e.Refused) }))))
		for range 2 { // the Store is asked, then rests
			_, err := tool(context.Background(), nil)
			if after := rateLimited(t, err); after != 0 {
				t.Errorf("RetryAfter = %v, want none", after)
			}
			if f := canary.Leaked(fmt.Sprintf("%v %+v", err, err)); f != "" {
				t.Errorf("the store's %s secret reached the caller: %v", f, err)
			}
		}
		if c.n.Load() != 0 || len(refused) != 2 || !refused[0] || !refused[1] {
			t.Errorf("ran %d, reports %v; want no run, two refusals reported", c.n.Load(), refused)
		}
	}
}

// TestStoreOptionsInvalid: what a Store cannot work with is a
// tool-definition-invalid/option_invalid error from Validate and New.
func TestStoreOptionsInvalid(t *testing.T) {
	s := &scripted{decide: answer(ratelimit.Decision{Allowed: true})}
	cases := []struct {
		name  string
		limit rate.Limit
		opts  []ratelimit.Option
	}{
		{"negative timeout", 1, []ratelimit.Option{ratelimit.WithStore(s, store.WithTimeout(-time.Millisecond))}},
		{"shared limiter", 1, []ratelimit.Option{ratelimit.WithStore(s), ratelimit.WithShared(rate.NewLimiter(1, 1))}},
		{"limit 0", 0, []ratelimit.Option{ratelimit.WithStore(s)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ratelimit.Validate(tc.limit, 1, tc.opts...)
			te, ok := taxonomy.From(err)
			if !ok || te.Kind() != taxonomy.KindDefinitionInvalid || te.Code() != taxonomy.CodeOptionInvalid {
				t.Fatalf("Validate = %v, want option_invalid", err)
			}
			if _, err := toolmw.Wrap(toolmw.Spec{Name: "search"}, (&counter{}).tool, ratelimit.New(tc.limit, 1, tc.opts...)); err == nil {
				t.Error("Wrap accepted the layer")
			}
		})
	}
	// An infinite limit switches the layer off, Store or not.
	c := &counter{}
	tool := wrap(t, "search", c, ratelimit.New(rate.Inf, 1, ratelimit.WithStore(s)))
	if _, err := tool(context.Background(), nil); err != nil || len(s.requests()) != 0 {
		t.Errorf("err = %v, store asked %d times; want the layer off", err, len(s.requests()))
	}
}

// A call decided by the local limiter because the store failed is marked
// in the call record (Call.Degraded); a call the store decided is not.
func TestStoreFallbackMarksTheCall(t *testing.T) {
	fail := false
	s := &scripted{decide: func(context.Context, ratelimit.Request) (ratelimit.Decision, error) {
		if fail {
			return ratelimit.Decision{}, errors.New("connection refused")
		}
		return ratelimit.Decision{Allowed: true}, nil
	}}
	observe, seen := testutil.Degraded()
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, (&counter{}).tool, observe,
		ratelimit.New(100, 100, ratelimit.WithStore(s)))
	_, _ = tool(context.Background(), nil)
	fail = true
	_, _ = tool(context.Background(), nil)
	if got := seen(); len(got) != 2 || got[0] != "" || got[1] != "ratelimit" {
		t.Fatalf("Call.Degraded = %q, want \"\", ratelimit", got)
	}
}
