package main

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// client is the reviewer's browser: signed in, with a cookie jar.
type client struct {
	t   *testing.T
	srv *httptest.Server
	app *App
	hc  *http.Client
}

func (c *client) do(method, path string, form url.Values, signedIn bool) (int, string) {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, c.srv.URL+Prefix+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if signedIn {
		req.SetBasicAuth(Reviewer, c.app.Password)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var formField = regexp.MustCompile(`name="(csrf|id|version)" value="([^"]*)"`)

// TestReviewerApprovesTheRefund runs the loop: the search goes through the
// flaky supplier, the refund waits for the reviewer, who reads the state
// page and approves the refund on the desk; the refund then runs once and
// the run ends.
func TestReviewerApprovesTheRefund(t *testing.T) {
	app, err := NewApp(1)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	defer srv.Close()
	jar, _ := cookiejar.New(nil)
	c := &client{t: t, srv: srv, app: app, hc: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}

	if code, _ := c.do("GET", "/state.json", nil, false); code != http.StatusUnauthorized {
		t.Fatalf("the console without signing in: %d, want 401", code)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type result struct {
		answer string
		err    error
	}
	done := make(chan result, 1)
	var out strings.Builder
	go func() {
		answer, err := app.Run(ctx, "run-1", &lockedWriter{w: &out})
		done <- result{answer, err}
	}()

	// The reviewer waits for the refund to show on the desk.
	var id, version, token string
	for id == "" {
		code, page := c.do("GET", "/approvals", nil, true)
		if code != http.StatusOK {
			t.Fatalf("the desk: %d %s", code, page)
		}
		for _, m := range formField.FindAllStringSubmatch(page, -1) {
			switch m[1] {
			case "csrf":
				token = html.UnescapeString(m[2])
			case "id":
				id = html.UnescapeString(m[2])
			case "version":
				version = html.UnescapeString(m[2])
			}
		}
		select {
		case r := <-done:
			t.Fatalf("the run ended before a decision: %q, %v", r.answer, r.err)
		case <-ctx.Done():
			t.Fatal("the refund never reached the desk")
		case <-time.After(20 * time.Millisecond):
		}
	}

	// The state page knows the search and its layers.
	code, body := c.do("GET", "/state.json", nil, true)
	var st struct {
		Tools []struct {
			Name    string `json:"name"`
			Breaker string `json:"breaker"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil {
		t.Fatalf("state.json: %d %v", code, err)
	}
	seen := false
	for _, tool := range st.Tools {
		seen = seen || tool.Name == "search_flights" && tool.Breaker != ""
	}
	if !seen {
		t.Errorf("state.json shows no breaker of search_flights: %s", body)
	}

	if app.Refunds.Load() != 0 {
		t.Fatal("the refund ran before the reviewer decided")
	}
	code, _ = c.do("POST", "/approvals", url.Values{"csrf": {token}, "id": {id}, "version": {version},
		"action": {"approve"}, "reason": {"customer called"}}, true)
	if code != http.StatusSeeOther {
		t.Fatalf("the approval: %d", code)
	}
	r := <-done
	if r.err != nil || !strings.Contains(r.answer, "refunded") || app.Refunds.Load() != 1 {
		t.Fatalf("the run: %q, %v, %d refunds; want one refund\n%s", r.answer, r.err, app.Refunds.Load(), out.String())
	}
}
