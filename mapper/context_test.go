package mapper_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/taxonomy"
)

// hangingServer answers nothing until the test ends.
func hangingServer(t *testing.T) *httptest.Server {
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

// TestWhoseDeadline classifies the errors Go's own HTTP client makes when
// time runs out, against a server on 127.0.0.1 that never answers: the
// client's and the transport's timeouts are the dependency's, the call's
// own deadline is the caller's.
func TestWhoseDeadline(t *testing.T) {
	srv := hangingServer(t)
	const short = 20 * time.Millisecond
	running := context.Background()
	passed, cancel := context.WithTimeout(context.Background(), short)
	defer cancel()

	tests := []struct {
		name   string
		client *http.Client
		ctx    context.Context // of the request and of the call
		want   want            // for an idempotent tool
	}{
		{"client timeout", &http.Client{Timeout: short}, running,
			want{taxonomy.KindTimeout, taxonomy.CodeUpstreamTimeout, true}},
		{"response header timeout", &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: short}}, running,
			want{taxonomy.KindTimeout, taxonomy.CodeUpstreamTimeout, true}},
		{"the call's deadline", &http.Client{}, passed,
			want{taxonomy.KindTimeout, taxonomy.CodeDeadlineExceeded, false}},
		{"client timeout after the call's deadline", &http.Client{Timeout: time.Hour}, passed,
			want{taxonomy.KindTimeout, taxonomy.CodeDeadlineExceeded, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.client.CloseIdleConnections()
			req, _ := http.NewRequestWithContext(tc.ctx, http.MethodGet, srv.URL, nil)
			_, err := tc.client.Do(req)
			if err == nil {
				t.Fatal("the hanging server answered")
			}
			check(t, mapper.Default().ClassifyContext(tc.ctx, "search", true, err), tc.want)
			// A tool that is not idempotent is never retried after a
			// timeout: the request may have landed.
			w := tc.want
			w.retryable = false
			check(t, mapper.Default().ClassifyContext(tc.ctx, "book", false, err), w)
		})
	}

	// Without the context, a bare deadline is taken as the caller's, and
	// a timeout that says it is the client's is the dependency's.
	check(t, mapper.Default().ClassifyFor("search", true, context.DeadlineExceeded),
		want{taxonomy.KindTimeout, taxonomy.CodeDeadlineExceeded, false})
	check(t, mapper.Default().ClassifyContext(running, "search", true, context.DeadlineExceeded),
		want{taxonomy.KindTimeout, taxonomy.CodeUpstreamTimeout, true})
}
