package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/console"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

const prefix = "/debug/toolmw"

// browserTimeout bounds each test's use of the browser: generous, for a
// loaded machine.
const browserTimeout = 120 * time.Second

// app is an application serving the console over a Desk with one gated
// tool. Its reviewers are named by the X-Reviewer header (the test's
// browser sends it with every request, as a browser sends remembered
// credentials): the authorisation is the application's, through the hooks.
type app struct {
	srv   *httptest.Server
	desk  *approval.Desk
	tool  toolmw.Tool
	runs  atomic.Int64
	allow atomic.Bool
}

func newApp(t *testing.T) *app {
	t.Helper()
	a := &app{desk: approval.NewDesk()}
	a.allow.Store(true)
	a.tool = toolmw.MustWrap(toolmw.Spec{Name: "refund_booking"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		a.runs.Add(1)
		return toolmw.Text("refunded"), nil
	}, a.desk.Middleware(approval.Tools("refund_booking")))
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, console.New(console.WithDesk(a.desk,
		console.WithReviewer(func(r *http.Request) (string, bool) {
			who := r.Header.Get("X-Reviewer")
			return who, who != ""
		}),
		console.WithAuthorize(func(reviewer, tool string) bool {
			return a.allow.Load() && reviewer == "ana@example.org" && tool == "refund_booking"
		})))))
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

// call makes the gated call with planted secrets in its arguments, its
// call id and its run id, and returns its approval id (pending) or error.
func (a *app) call(t *testing.T) (string, error) {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"booking": "B-7", "note": strings.Join(canary.Values(), " ")})
	ctx := budget.WithRun(context.Background(), budget.WithID(canary.Secrets[1].Value))
	ctx = toolmw.WithCallID(ctx, "call_"+canary.Secrets[0].Value)
	if _, err := a.tool(ctx, args); err != nil {
		return taxonomy.InfoOf(err).Approval.ID, err
	}
	return "", nil
}

func (a *app) desk1(t *testing.T) string {
	t.Helper()
	id, err := a.call(t)
	if taxonomy.InfoOf(err).Code != taxonomy.CodeApprovalPending {
		t.Fatalf("the first call: %v", err)
	}
	return id
}

// browser starts a headless Chromium for t, sending X-Reviewer: who with
// every request.
func browser(t *testing.T, who string) context.Context {
	t.Helper()
	path := os.Getenv("TOOLMW_CHROMIUM")
	if path == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		if os.Getenv("TOOLMW_REQUIRE_CHROMIUM") == "1" {
			t.Fatal("no Chromium on PATH (apt-get install chromium), and TOOLMW_REQUIRE_CHROMIUM=1")
		}
		t.Skip("no Chromium on PATH (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // CI runs as root
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	ctx, cancelTimeout := context.WithTimeout(context.Background(), browserTimeout)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelBrowser(); cancelAlloc(); cancelTimeout() })
	do(t, bctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, network.SetExtraHTTPHeaders,
			network.SetExtraHTTPHeadersParams{Headers: network.Headers{"X-Reviewer": who}})
		return err
	}))
	return bctx
}

// do runs the steps in the browser of ctx, failing t on an error.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// get runs a and returns its value, failing t on an error.
func get[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

// shot saves a screenshot of the page as the test artifact name.png.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png := get(t, ctx, chromedp.FullScreenshot(100))
	path := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}

// noCanary fails t when the page, as the browser has it, or the desk's
// JSON shows a planted secret.
func noCanary(t *testing.T, ctx context.Context, a *app) {
	t.Helper()
	page := get(t, ctx, chromedp.OuterHTML(chromedp.CSS("html")))
	req, _ := http.NewRequest("GET", a.srv.URL+prefix+"/approvals.json", nil)
	req.Header.Set("X-Reviewer", "ana@example.org")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var js strings.Builder
	if _, err := fmt.Fprint(&js, mustRead(t, resp)); err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"page": page, "json": js.String()} {
		if f := canary.Leaked(html.UnescapeString(text)); f != "" {
			t.Fatalf("the desk's %s shows the planted %s", what, f)
		}
	}
}

func mustRead(t *testing.T, resp *http.Response) string {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// row selects the table row of the request id; more narrows it.
func row(id string, more ...string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf(`tr[data-id=%q]`, id) + strings.Join(more, ""))
}

// TestReviewerApprovesInThePage: a reviewer approves a pending call in the
// page, and the paused call, made again, runs exactly once.
func TestReviewerApprovesInThePage(t *testing.T) {
	a := newApp(t)
	id := a.desk1(t)
	ctx := browser(t, "ana@example.org")
	do(t, ctx,
		chromedp.Navigate(a.srv.URL+prefix+"/"),
		chromedp.Click(chromedp.CSS(`a[href="approvals"]`), chromedp.NodeVisible),
		chromedp.WaitVisible(row(id)),
	)
	summary := get(t, ctx, chromedp.Text(row(id, " code.summary")))
	if !strings.Contains(summary, "refund_booking") || !strings.Contains(summary, "B-7") {
		t.Fatalf("the request's summary reads %q", summary)
	}
	noCanary(t, ctx, a)
	shot(t, ctx, "1-pending")

	do(t, ctx,
		chromedp.SendKeys(row(id, ` input[name="reason"]`), "checked with the customer"),
		chromedp.Click(row(id, ` button.approve`)),
		chromedp.WaitVisible(chromedp.ID("notice")),
	)
	notice := get(t, ctx, chromedp.Text(chromedp.ID("notice")))
	shot(t, ctx, "2-approved")
	if !strings.HasPrefix(notice, "Approved") {
		t.Fatalf("after the click the page says %q", notice)
	}
	req, err := a.desk.Get(context.Background(), id)
	if err != nil || req.State != approval.StateApproved || req.Reviewer != "ana@example.org" || req.Reason != "checked with the customer" {
		t.Fatalf("the stored request: %+v, %v", req, err)
	}
	if a.runs.Load() != 0 {
		t.Fatal("the tool ran before the call was made again")
	}
	if _, err := a.call(t); err != nil || a.runs.Load() != 1 {
		t.Fatalf("the approved call: %v, %d runs", err, a.runs.Load())
	}
	if _, err := a.call(t); taxonomy.InfoOf(err).Code != taxonomy.CodeApprovalReplayed || a.runs.Load() != 1 {
		t.Fatalf("the call made once more: %v, %d runs; want approval_replayed and still 1 run", err, a.runs.Load())
	}
	do(t, ctx, chromedp.Navigate(a.srv.URL+prefix+"/approvals"), chromedp.WaitVisible(chromedp.ID("none")))
	noCanary(t, ctx, a)
	shot(t, ctx, "3-used")
}

// TestAuthorisationRefusesTheButton: the page offered the button, then the
// authorisation hook stopped consenting: the click is refused by the
// server, and nothing is decided or run.
func TestAuthorisationRefusesTheButton(t *testing.T) {
	a := newApp(t)
	id := a.desk1(t)
	ctx := browser(t, "ana@example.org")
	do(t, ctx, chromedp.Navigate(a.srv.URL+prefix+"/approvals"), chromedp.WaitVisible(row(id, ` button.approve`)))
	a.allow.Store(false)
	do(t, ctx,
		chromedp.Click(row(id, ` button.approve`)),
		chromedp.WaitVisible(chromedp.ID("refused")),
	)
	refused := get(t, ctx, chromedp.Text(chromedp.ID("refused")))
	shot(t, ctx, "refused")
	if !strings.Contains(refused, "may not decide") {
		t.Fatalf("the refusal reads %q", refused)
	}
	assertStillPending(t, a, id)

	// A reviewer the hook never consents to sees no button at all.
	a.allow.Store(true)
	other := browser(t, "mallory@example.org")
	do(t, other, chromedp.Navigate(a.srv.URL+prefix+"/approvals"), chromedp.WaitVisible(row(id)))
	cell := get(t, other, chromedp.Text(row(id)))
	if !strings.Contains(cell, "You may not decide this tool") {
		t.Fatalf("another reviewer's row reads %q", cell)
	}
	shot(t, other, "not-yours")
}

// TestForgedCrossSitePostIsRefused: a page of another site posts the
// decision form to the console from the reviewer's browser — with the
// request's real version, and even with a token copied from the
// reviewer's page — and is refused.
func TestForgedCrossSitePostIsRefused(t *testing.T) {
	a := newApp(t)
	id := a.desk1(t)
	ctx := browser(t, "ana@example.org")
	do(t, ctx, chromedp.Navigate(a.srv.URL+prefix+"/approvals"), chromedp.WaitVisible(row(id)))
	token := get(t, ctx, chromedp.AttributeValue(row(id, ` input[name="csrf"]`), "value")).Value
	version := get(t, ctx, chromedp.AttributeValue(row(id, ` input[name="version"]`), "value")).Value
	target := a.srv.URL + prefix + "/approvals"
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>You won</title>
<form method="post" action="%s">
<input type="hidden" name="id" value="%s"><input type="hidden" name="version" value="%s">
<input type="hidden" name="action" value="approve"><input type="hidden" name="csrf" value="%s">
<button id="prize">Claim your prize</button></form>`,
			html.EscapeString(target), html.EscapeString(id), html.EscapeString(version), html.EscapeString(token))
	}))
	t.Cleanup(evil.Close)
	// Another site: "localhost" is not the console's 127.0.0.1.
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
	do(t, ctx,
		chromedp.Navigate(evilURL),
		chromedp.WaitVisible(chromedp.ID("prize")),
		chromedp.Click(chromedp.ID("prize")),
		// The console's refusal replaces the prize page.
		chromedp.WaitVisible(chromedp.ID("refused")),
	)
	body := get(t, ctx, chromedp.Text(chromedp.CSS("body")))
	shot(t, ctx, "forged")
	if !strings.Contains(body, "came from another site") {
		t.Fatalf("the forged post was answered with %q, want the console's cross-site refusal", body)
	}
	assertStillPending(t, a, id)
}

func assertStillPending(t *testing.T, a *app, id string) {
	t.Helper()
	req, err := a.desk.Get(context.Background(), id)
	if err != nil || req.State != approval.StatePending {
		t.Fatalf("the request is %v (%v), want still pending", req.State, err)
	}
	if _, err := a.call(t); taxonomy.InfoOf(err).Code != taxonomy.CodeApprovalPending || a.runs.Load() != 0 {
		t.Fatalf("the call made again: %v, %d runs; want approval_pending and no run", err, a.runs.Load())
	}
}
