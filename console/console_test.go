package console_test

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
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/console"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// rig is a console over a Desk with one gated tool, served under a prefix.
type rig struct {
	srv      *httptest.Server
	desk     *approval.Desk
	tool     toolmw.Tool
	runs     atomic.Int64
	allow    atomic.Bool // the authorisation hook's answer
	mu       sync.Mutex
	verdicts []approval.Verdict
}

const prefix = "/debug/toolmw"

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{}
	r.allow.Store(true)
	r.desk = approval.NewDesk(approval.WithOnVerdict(func(v approval.Verdict) {
		r.mu.Lock()
		r.verdicts = append(r.verdicts, v)
		r.mu.Unlock()
	}))
	r.tool = toolmw.MustWrap(toolmw.Spec{Name: "refund_booking"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		r.runs.Add(1)
		return toolmw.Text("refunded"), nil
	}, r.desk.Middleware(approval.Tools("refund_booking")))
	opts := []console.Option{console.WithDesk(r.desk,
		console.WithReviewer(func(req *http.Request) (string, bool) {
			u := req.Header.Get("X-Test-User")
			return u, u != ""
		}),
		console.WithAuthorize(func(reviewer, tool string) bool { return r.allow.Load() && tool == "refund_booking" }))}
	if err := console.Validate(opts...); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, console.New(opts...)))
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	return r
}

// call makes the gated call with the canaries in its arguments, call id and
// run id; it returns the approval id when the call is pending.
func (r *rig) call(t *testing.T, callID string) (string, error) {
	t.Helper()
	secrets := canary.Values()
	args, _ := json.Marshal(map[string]any{"booking": "B-7", "secrets": secrets})
	ctx := budget.WithRun(context.Background(), budget.WithID(canary.Secrets[1].Value))
	ctx = toolmw.WithCallID(ctx, callID)
	_, err := r.tool(ctx, args)
	if err != nil {
		return taxonomy.InfoOf(err).Approval.ID, err
	}
	return "", nil
}

// client is a browser-like client of the rig: a cookie jar and a user.
type client struct {
	t    *testing.T
	r    *rig
	user string
	hc   *http.Client
}

func (r *rig) client(t *testing.T, user string) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, r: r, user: user, hc: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

func (c *client) do(method, path string, form url.Values, hdr map[string]string) (int, string, http.Header) {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.r.srv.URL+prefix+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if c.user != "" {
		req.Header.Set("X-Test-User", c.user)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

var (
	tokenRE   = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	versionRE = regexp.MustCompile(`name="version" value="([^"]+)"`)
)

// form reads the desk page and returns the decision form for its first
// request.
func (c *client) form(id, action string) url.Values {
	c.t.Helper()
	code, page, _ := c.do("GET", "/approvals", nil, nil)
	tok, ver := tokenRE.FindStringSubmatch(page), versionRE.FindStringSubmatch(page)
	if code != 200 || tok == nil || ver == nil {
		c.t.Fatalf("the desk page (%d) has no decision form:\n%s", code, page)
	}
	return url.Values{"csrf": {html.UnescapeString(tok[1])}, "id": {id}, "version": {html.UnescapeString(ver[1])},
		"action": {action}, "reason": {"checked with the customer"}}
}

func TestValidate(t *testing.T) {
	desk := approval.NewDesk()
	who := console.WithReviewer(func(*http.Request) (string, bool) { return "a", true })
	may := console.WithAuthorize(func(string, string) bool { return true })
	for name, opt := range map[string]console.Option{
		"nil desk":      console.WithDesk(nil, who, may),
		"no reviewer":   console.WithDesk(desk, may),
		"no authorize":  console.WithDesk(desk, who),
		"ttl too long":  console.WithDesk(desk, who, may, console.WithApprovalTTL(approval.MaxTTL+1)),
		"short csrfkey": console.WithCSRFKey([]byte("short")),
	} {
		err := console.Validate(opt)
		if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeOptionInvalid {
			t.Errorf("%s: Validate = %v, want option_invalid", name, err)
		}
		rec := httptest.NewRecorder()
		console.New(opt).ServeHTTP(rec, httptest.NewRequest("GET", "/approvals", nil))
		if rec.Code != http.StatusInternalServerError {
			t.Errorf("%s: a misconfigured console answered %d", name, rec.Code)
		}
	}
	if err := console.Validate(console.WithDesk(desk, who, may), console.WithCSRFKey(make([]byte, 32))); err != nil {
		t.Fatal(err)
	}
}

func TestDeskApprovesOnce(t *testing.T) {
	r := newRig(t)
	id, err := r.call(t, "call_"+canary.Secrets[0].Value)
	if taxonomy.InfoOf(err).Code != taxonomy.CodeApprovalPending {
		t.Fatalf("the first call: %v", err)
	}
	c := r.client(t, "ana@example.org")
	code, page, hdr := c.do("GET", "/approvals", nil, nil)
	if code != 200 || !strings.Contains(page, id) || !strings.Contains(page, "refund_booking") {
		t.Fatalf("the desk page (%d) does not list %s:\n%s", code, id, page)
	}
	if !strings.Contains(hdr.Get("Content-Security-Policy"), "frame-ancestors 'none'") || hdr.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("headers %v", hdr)
	}
	code, js, _ := c.do("GET", "/approvals.json", nil, nil)
	var l struct {
		Pending []struct{ ID, Tool, Summary, Asker string }
	}
	if code != 200 || json.Unmarshal([]byte(js), &l) != nil || len(l.Pending) != 1 || l.Pending[0].ID != id || l.Pending[0].Asker == "" {
		t.Fatalf("approvals.json (%d): %s", code, js)
	}
	for what, text := range map[string]string{"page": page, "json": js} {
		if f := canary.Leaked(text); f != "" {
			t.Fatalf("the %s shows the planted %s:\n%s", what, f, text)
		}
	}
	code, _, hdr = c.do("POST", "/approvals", c.form(id, "approve"), nil)
	if code != http.StatusSeeOther || hdr.Get("Location") != "approvals?done=approved" {
		t.Fatalf("the approval: %d, Location %q", code, hdr.Get("Location"))
	}
	if _, err := r.call(t, "call_"+canary.Secrets[0].Value); err != nil || r.runs.Load() != 1 {
		t.Fatalf("the approved call: %v, %d runs", err, r.runs.Load())
	}
	if _, err := r.call(t, "call_"+canary.Secrets[0].Value); taxonomy.InfoOf(err).Code != taxonomy.CodeApprovalReplayed || r.runs.Load() != 1 {
		t.Fatalf("the call made again: %v, %d runs", err, r.runs.Load())
	}
	req, err := r.desk.Get(context.Background(), id)
	if err != nil || req.Reviewer != "ana@example.org" || req.Reason != "checked with the customer" {
		t.Fatalf("the stored request: %+v, %v", req, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.verdicts) != 1 || r.verdicts[0].Reviewer != "ana@example.org" || r.verdicts[0].State != approval.StateApproved {
		t.Fatalf("verdicts %+v", r.verdicts)
	}
}

func TestDeskRefuses(t *testing.T) {
	r := newRig(t)
	id, _ := r.call(t, "call_1")
	c := r.client(t, "ana")
	good := c.form(id, "approve")

	// No reviewer: nothing shown, nothing decided.
	anon := r.client(t, "")
	if code, page, _ := anon.do("GET", "/approvals", nil, nil); code != http.StatusForbidden || strings.Contains(page, id) {
		t.Fatalf("an anonymous GET: %d\n%s", code, page)
	}
	if code, _, _ := anon.do("GET", "/approvals.json", nil, nil); code != http.StatusForbidden {
		t.Fatalf("an anonymous GET of the JSON: %d", code)
	}
	for name, tc := range map[string]struct {
		c    *client
		form url.Values
		hdr  map[string]string
		want int
	}{
		"anonymous":         {anon, good, nil, http.StatusForbidden},
		"cross-site":        {c, good, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		"other origin":      {c, good, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		"no token":          {c, with(good, "csrf", ""), nil, http.StatusForbidden},
		"forged token":      {c, with(good, "csrf", "AAAA"), nil, http.StatusForbidden},
		"another's session": {r.client(t, "ana"), good, nil, http.StatusForbidden},
		"another reviewer":  {r.client(t, "bo"), good, nil, http.StatusForbidden},
		"stale version":     {c, with(good, "version", "0123"), nil, http.StatusConflict},
		"unknown request":   {c, with(good, "id", "apr_nope"), nil, http.StatusNotFound},
		"not an id":         {c, with(good, "id", "<script>"), nil, http.StatusBadRequest},
		"no such decision":  {c, with(good, "action", "approve-all"), nil, http.StatusBadRequest},
	} {
		if code, _, _ := tc.c.do("POST", "/approvals", tc.form, tc.hdr); code != tc.want {
			t.Errorf("%s: POST answered %d, want %d", name, code, tc.want)
		}
	}
	if code, _, _ := c.do("PUT", "/approvals", good, nil); code != http.StatusMethodNotAllowed {
		t.Errorf("PUT answered %d", code)
	}
	// The authorisation hook says no after the page was shown.
	r.allow.Store(false)
	if code, page, _ := c.do("POST", "/approvals", good, nil); code != http.StatusForbidden || !strings.Contains(page, "may not decide") {
		t.Fatalf("a decision the hook refuses: %d\n%s", code, page)
	}
	if req, _ := r.desk.Get(context.Background(), id); req.State != approval.StatePending {
		t.Fatalf("after the refusals the request is %v", req.State)
	}
	if _, err := r.call(t, "call_1"); r.runs.Load() != 0 || taxonomy.InfoOf(err).Code != taxonomy.CodeApprovalPending {
		t.Fatalf("the call after the refusals: %v, %d runs", err, r.runs.Load())
	}
	// Allowed again: a denial, with its reason.
	r.allow.Store(true)
	if code, _, _ := c.do("POST", "/approvals", with(good, "action", "deny"), nil); code != http.StatusSeeOther {
		t.Fatalf("the denial: %d", code)
	}
	if _, err := r.call(t, "call_1"); r.runs.Load() != 0 || taxonomy.InfoOf(err).Code != taxonomy.CodeApprovalDenied {
		t.Fatalf("the denied call: %v, %d runs", err, r.runs.Load())
	}
}

func with(v url.Values, key, val string) url.Values {
	c := url.Values{}
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	c.Set(key, val)
	return c
}
