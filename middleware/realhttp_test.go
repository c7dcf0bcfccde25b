package middleware_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/taxonomy"
)

// These tests call real servers on 127.0.0.1 through Go's own http.Client,
// so the errors are the ones the standard library makes, not hand-built
// look-alikes (an http.Client timeout reports itself as
// context.DeadlineExceeded, which a synthetic error hid).

// getTool is an idempotent-or-not tool that GETs url with client and counts
// its attempts.
func getTool(client *http.Client, url string, attempts *atomic.Int32) toolmw.Tool {
	return func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		attempts.Add(1)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return toolmw.Result{}, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return toolmw.Result{}, err
		}
		resp.Body.Close()
		return toolmw.Text(resp.Status), nil
	}
}

// hanging returns a server on 127.0.0.1 that never answers until the test
// ends.
func hanging(t *testing.T) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv
}

// TestDependencyTimeoutThroughDefault: a dependency's timeout is retried for
// an idempotent tool and ends as upstream_timeout; the caller's own deadline
// ends the call as deadline_exceeded after one attempt.
func TestDependencyTimeoutThroughDefault(t *testing.T) {
	srv := hanging(t)
	const short = 20 * time.Millisecond
	tests := []struct {
		name       string
		client     *http.Client
		deadline   time.Duration // of the caller; 0: none
		idempotent bool
		code       string
		attempts   int32
	}{
		{"client timeout, idempotent", &http.Client{Timeout: short}, 0, true, taxonomy.CodeUpstreamTimeout, 3},
		{"response header timeout, idempotent", &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: short}}, 0, true, taxonomy.CodeUpstreamTimeout, 3},
		{"client timeout, not idempotent", &http.Client{Timeout: short}, 0, false, taxonomy.CodeUpstreamTimeout, 1},
		{"caller deadline first", &http.Client{Timeout: time.Hour}, short, true, taxonomy.CodeDeadlineExceeded, 1},
		{"caller deadline first, transport", &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: time.Hour}}, short, true, taxonomy.CodeDeadlineExceeded, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.client.CloseIdleConnections()
			var attempts atomic.Int32
			tool, err := middleware.Default().Wrap(toolmw.Spec{Name: "search", Idempotent: tc.idempotent}, getTool(tc.client, srv.URL, &attempts))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			_, err = tool(ctx, nil)
			info := taxonomy.InfoOf(err)
			if info.Kind != taxonomy.KindTimeout || info.Code != tc.code {
				t.Fatalf("got %s/%s (%v), want tool-timeout/%s", info.Kind, info.Code, err, tc.code)
			}
			if got := attempts.Load(); got != tc.attempts {
				t.Fatalf("%d attempts, want %d", got, tc.attempts)
			}
			if again, _ := taxonomy.ShouldRetry(err, tc.idempotent); again {
				t.Fatal("ShouldRetry says retry for what left the chain")
			}
		})
	}
}

// TestOpenBreakerFailsFast: a dead dependency (a refused connection on
// 127.0.0.1) through middleware.Default() with no caller deadline. Once the
// breaker opens, every call ends at once as circuit-open/circuit_open with
// a RetryAfter, and so it does under a caller deadline.
func TestOpenBreakerFailsFast(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens: every dial is refused
	client := &http.Client{}
	defer client.CloseIdleConnections()

	var attempts atomic.Int32
	tool, err := middleware.Default().Wrap(toolmw.Spec{Name: "search", Idempotent: true}, getTool(client, url, &attempts))
	if err != nil {
		t.Fatal(err)
	}
	// Fail until the breaker opens; a dead dependency opens it within a
	// few calls.
	var last error
	for i := 0; i < 10; i++ {
		_, last = tool(context.Background(), nil)
		if taxonomy.InfoOf(last).Kind == taxonomy.KindCircuitOpen {
			break
		}
		if again, _ := taxonomy.ShouldRetry(last, true); again {
			t.Fatalf("call %d: ShouldRetry says retry for %v after the chain retried", i, last)
		}
	}
	if taxonomy.InfoOf(last).Kind != taxonomy.KindCircuitOpen {
		t.Fatalf("the breaker did not open; last error %v", last)
	}

	before := attempts.Load()
	const calls = 20
	var wg sync.WaitGroup
	errs := make([]error, calls)
	took := make([]time.Duration, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			if i%2 == 1 { // half of them under a caller deadline
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
			}
			start := time.Now()
			_, errs[i] = tool(ctx, nil)
			took[i] = time.Since(start)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		info := taxonomy.InfoOf(err)
		if info.Kind != taxonomy.KindCircuitOpen || info.Code != taxonomy.CodeCircuitOpen {
			t.Errorf("call %d: got %s/%s, want circuit-open/circuit_open", i, info.Kind, info.Code)
		}
		if info.RetryAfter <= 0 {
			t.Errorf("call %d: RetryAfter %v, want > 0 for the loop", i, time.Duration(info.RetryAfter))
		}
		// The tool was not called (attempts, below); a call that waited
		// would end at its 2 s deadline or later, so 1 s tells one apart
		// with slack for a loaded machine.
		if took[i] > time.Second {
			t.Errorf("call %d took %v; an open breaker must fail fast", i, took[i])
		}
		if again, _ := taxonomy.ShouldRetry(err, true); again {
			t.Errorf("call %d: ShouldRetry says retry", i)
		}
	}
	if got := attempts.Load(); got != before {
		t.Errorf("%d attempts reached the dead dependency through an open breaker", got-before)
	}
}
