package mapper_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestStatusError(t *testing.T) {
	header := func(v string) http.Header { return http.Header{"Retry-After": []string{v}} }
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		name      string
		code      int
		header    http.Header
		wantCode  int
		wantAfter func(time.Duration) bool
		msg       string
	}{
		{"503 with seconds", 503, header("7"), 503, eq(7 * time.Second), "upstream answered HTTP 503 Service Unavailable"},
		{"429 with a date", 429, header(future), 429, between(59*time.Minute, time.Hour), "upstream answered HTTP 429 Too Many Requests"},
		{"date in the past", 503, header("Mon, 02 Jan 2006 15:04:05 GMT"), 503, eq(0), ""},
		{"garbage", 503, header("soon, token=sk_live_abc"), 503, eq(0), ""},
		{"negative", 503, header("-5"), 503, eq(0), ""},
		{"over-long", 503, header(strings.Repeat("9", 65)), 503, eq(0), ""},
		{"saturates", 503, header(strings.Repeat("9", 40)), 503, eq(taxonomy.MaxRetryAfter), ""},
		{"no header", 409, nil, 409, eq(0), "upstream answered HTTP 409 Conflict"},
		{"unknown code", 599, nil, 599, eq(0), "upstream answered HTTP 599"},
		{"code out of range", 12345, nil, 0, eq(0), "upstream answered without a valid HTTP status"},
		{"negative code", -1, nil, 0, eq(0), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := mapper.StatusError(tc.code, tc.header)
			if e.StatusCode() != tc.wantCode {
				t.Errorf("StatusCode() = %d, want %d", e.StatusCode(), tc.wantCode)
			}
			if !tc.wantAfter(e.RetryAfter()) {
				t.Errorf("RetryAfter() = %v", e.RetryAfter())
			}
			if tc.msg != "" && e.Error() != tc.msg {
				t.Errorf("Error() = %q, want %q", e.Error(), tc.msg)
			}
		})
	}
}

func eq(want time.Duration) func(time.Duration) bool {
	return func(d time.Duration) bool { return d == want }
}

func between(lo, hi time.Duration) func(time.Duration) bool {
	return func(d time.Duration) bool { return lo <= d && d <= hi }
}

// TestResponseError: a real response from a server on 127.0.0.1, its body
// and reason phrase holding a secret, classified by the default map.
func TestResponseError(t *testing.T) {
	const secret = "sk_live_51HcanaryCANARYcanary0000"
	tests := []struct {
		status     int
		retryAfter string
		idempotent bool
		want       want
		after      time.Duration
	}{
		{503, "3", false, want{taxonomy.KindFailed, taxonomy.CodeUpstreamUnavailable, true}, 3 * time.Second},
		{429, "2", false, want{taxonomy.KindRateLimited, taxonomy.CodeUpstreamRateLimited, true}, 2 * time.Second},
		{409, "", false, want{taxonomy.KindRefused, taxonomy.CodeUpstreamConflict, false}, 0},
		{422, "", true, want{taxonomy.KindRefused, taxonomy.CodeUpstreamUnprocessable, false}, 0},
		{500, "", false, want{taxonomy.KindFailed, taxonomy.CodeUpstreamError, false}, 0},
		{500, "", true, want{taxonomy.KindFailed, taxonomy.CodeUpstreamError, true}, 0},
		{404, "", true, want{taxonomy.KindRefused, taxonomy.CodeUpstreamNotFound, false}, 0},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.status, "/", tc.idempotent), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.status)
				fmt.Fprintf(w, `{"error":"failed for key %s"}`, secret)
			}))
			defer srv.Close()
			resp, err := srv.Client().Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			resp.Status = fmt.Sprintf("%d %s", tc.status, secret) // a hostile reason phrase

			herr := mapper.ResponseError(resp)
			if strings.Contains(herr.Error(), secret) {
				t.Fatalf("Error() holds the secret: %q", herr.Error())
			}
			got := mapper.Default().ClassifyFor("book", tc.idempotent, fmt.Errorf("booking failed: %w", herr))
			te := check(t, got, tc.want)
			if te.RetryAfter() != tc.after {
				t.Errorf("RetryAfter = %v, want %v", te.RetryAfter(), tc.after)
			}
			var back *mapper.HTTPError
			if !errors.As(got, &back) || back.StatusCode() != tc.status {
				t.Error("the HTTPError is not reachable with errors.As")
			}
			if info := taxonomy.InfoOf(got); strings.Contains(fmt.Sprint(info), secret) {
				t.Errorf("the record holds the secret: %+v", info)
			}
		})
	}
	if e := mapper.ResponseError(nil); e.StatusCode() != 0 {
		t.Errorf("ResponseError(nil).StatusCode() = %d", e.StatusCode())
	}
}
