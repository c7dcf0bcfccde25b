package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/cache"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/fallback"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// The state of the layers that publish what they served and decided:
// approvals, dedupe, cache, fallback, and spend per currency. These tests
// run before those of statemetrics_test.go (file order), and the bound
// test here fills only the instruments of these layers.

var (
	epoch   = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sealKey = bytes.Repeat([]byte("k"), approval.MinKeyLen)
)

func okTool(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }

// newDesk returns a Desk over s with the fake clock. The store answers at
// once: a timeout of a minute keeps a loaded machine's scheduling from
// reading as an outage.
func newDesk(s approval.Store, clk clock.Clock) *approval.Desk {
	return approval.NewDesk(approval.WithStore(s, store.WithTimeout(time.Minute)), approval.WithSealKey(sealKey), approval.WithClock(clk))
}

// runCtx is a call of the run named run under call id id.
func runCtx(run, id string) context.Context {
	return toolmw.WithCallID(budget.WithRun(context.Background(), budget.WithID(run)), id)
}

// pendingID calls tool and returns the approval id of the pending request
// it ends in, failing unless it ends so with code.
func pendingID(t *testing.T, tool toolmw.Tool, ctx context.Context, code string) string {
	t.Helper()
	_, err := tool(ctx, json.RawMessage(`{"booking":"BK-1"}`))
	info := taxonomy.InfoOf(err)
	if info.Kind != taxonomy.KindApprovalPending || info.Code != code || info.Approval == nil {
		t.Fatalf("%v, want approval-pending/%s", err, code)
	}
	return info.Approval.ID
}

// decide reads the request id from desk and approves it for ttl, or
// denies it when ttl is 0.
func decide(t *testing.T, desk *approval.Desk, id string, ttl time.Duration) {
	t.Helper()
	ctx := context.Background()
	req, err := desk.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if ttl > 0 {
		err = desk.Approve(ctx, req, ttl)
	} else {
		err = desk.Deny(ctx, req)
	}
	if err != nil {
		t.Fatal(err)
	}
}

const verdict = tracing.AttrVerdict

// TestStateApprovals: requests filed by one Desk and decided by another
// sharing its MemoryStore: pending 1 → 0, an approval, a denial, a
// revocation and an expiry counted by verdict, and the time to each
// decision the fake clock's gap.
func TestStateApprovals(t *testing.T) {
	r := newStateRig(t)
	fake := clock.NewFake(epoch)
	s := approval.NewMemoryStore()
	caller, reviewer := newDesk(s, fake), newDesk(s, fake)
	var ran atomic.Int32
	gated := func(tool string) toolmw.Tool {
		return wrap(t, tool, false, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			ran.Add(1)
			return toolmw.Text("done"), nil
		}, caller.Middleware(approval.Tools(tool)))
	}
	approved, denied, expired := gated("state_apr_approved"), gated("state_apr_denied"), gated("state_apr_expired")

	// Approved after 90 s.
	ctx := runCtx("run_state", "call_1")
	id := pendingID(t, approved, ctx, taxonomy.CodeApprovalPending)
	r.expect(t, "toolmw.approval.pending", 1, name, "state_apr_approved")
	r.expect(t, "toolmw.approval.verdicts", 0, name, "state_apr_approved", verdict, "approved")
	fake.Advance(90 * time.Second)
	decide(t, reviewer, id, time.Hour)
	r.expect(t, "toolmw.approval.pending", 0, name, "state_apr_approved")
	r.expect(t, "toolmw.approval.verdicts", 1, name, "state_apr_approved", verdict, "approved")
	r.expect(t, "toolmw.approval.wait", 90, name, "state_apr_approved", verdict, "approved")
	if _, err := approved(ctx, json.RawMessage(`{"booking":"BK-1"}`)); err != nil || ran.Load() != 1 {
		t.Fatalf("the approved call: %v, ran %d times", err, ran.Load())
	}
	r.expect(t, "toolmw.approval.pending", 0, name, "state_apr_approved") // used: no longer pending, not counted again

	// Denied after 30 s; then an approval revoked.
	id = pendingID(t, denied, runCtx("run_state", "call_2"), taxonomy.CodeApprovalPending)
	fake.Advance(30 * time.Second)
	decide(t, reviewer, id, 0)
	id = pendingID(t, denied, runCtx("run_state", "call_3"), taxonomy.CodeApprovalPending)
	r.expect(t, "toolmw.approval.pending", 1, name, "state_apr_denied")
	fake.Advance(10 * time.Second)
	decide(t, reviewer, id, time.Hour)
	decide(t, reviewer, id, 0) // the approval, revoked unused
	r.expect(t, "toolmw.approval.pending", 0, name, "state_apr_denied")
	r.expect(t, "toolmw.approval.verdicts", 1, name, "state_apr_denied", verdict, "denied")
	r.expect(t, "toolmw.approval.wait", 30, name, "state_apr_denied", verdict, "denied")
	r.expect(t, "toolmw.approval.verdicts", 1, name, "state_apr_denied", verdict, "approved")
	r.expect(t, "toolmw.approval.wait", 10, name, "state_apr_denied", verdict, "approved")
	r.expect(t, "toolmw.approval.verdicts", 1, name, "state_apr_denied", verdict, "revoked")

	// Approved for a minute, unused for two: the call comes again and
	// files a new request.
	ctx = runCtx("run_state", "call_4")
	id = pendingID(t, expired, ctx, taxonomy.CodeApprovalPending)
	decide(t, reviewer, id, time.Minute)
	fake.Advance(2 * time.Minute)
	pendingID(t, expired, ctx, taxonomy.CodeApprovalExpired)
	r.expect(t, "toolmw.approval.verdicts", 1, name, "state_apr_expired", verdict, "expired")
	r.expect(t, "toolmw.approval.verdicts", 1, name, "state_apr_expired", verdict, "approved")
	r.expect(t, "toolmw.approval.wait", 0, name, "state_apr_expired", verdict, "approved")
	r.expect(t, "toolmw.approval.pending", 1, name, "state_apr_expired")
	if ran.Load() != 1 {
		t.Fatalf("ran %d times, want 1", ran.Load())
	}
	runtime.KeepAlive([]any{approved, denied, expired, caller, reviewer, s})
}

// ownStore is an approval store other than a MemoryStore: its Desks
// count each for itself.
type ownStore struct{ approval.Store }

// TestStateApprovalsOwnStore: over a store that is not a MemoryStore, the
// Desk that filed a request counts it up and the one that decided it
// counts it down; their series, summed, read 0.
func TestStateApprovalsOwnStore(t *testing.T) {
	r := newStateRig(t)
	fake := clock.NewFake(epoch)
	s := ownStore{approval.NewMemoryStore()}
	caller, reviewer := newDesk(s, fake), newDesk(s, fake)
	tool := wrap(t, "state_apr_own", false, okTool, caller.Middleware(nil))
	id := pendingID(t, tool, runCtx("run_own", "call_1"), taxonomy.CodeApprovalPending)
	r.expect(t, "toolmw.approval.pending", 1, name, "state_apr_own")
	fake.Advance(5 * time.Second)
	decide(t, reviewer, id, 0)
	r.expect(t, "toolmw.approval.pending", 0, name, "state_apr_own")
	r.expect(t, "toolmw.approval.verdicts", 1, name, "state_apr_own", verdict, "denied")
	r.expect(t, "toolmw.approval.wait", 5, name, "state_apr_own", verdict, "denied")
	runtime.KeepAlive([]any{tool, caller, reviewer})
}

// TestStateCache: a read missed, then hit.
func TestStateCache(t *testing.T) {
	r := newStateRig(t)
	fake := clock.NewFake(epoch)
	var ran atomic.Int32
	tool := wrap(t, "state_cache", true, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		ran.Add(1)
		return toolmw.Text("rates"), nil
	}, cache.New(time.Minute, cache.WithSharedResults(), cache.WithClock(fake)))
	r.expect(t, "toolmw.cache.hits", 0, name, state.Unnamed) // not called yet
	for range 2 {
		if _, err := tool(context.Background(), json.RawMessage(`{"q":"EUR"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if ran.Load() != 1 {
		t.Fatalf("ran %d times, want 1", ran.Load())
	}
	r.expect(t, "toolmw.cache.misses", 1, name, "state_cache")
	r.expect(t, "toolmw.cache.hits", 1, name, "state_cache")
	runtime.KeepAlive(tool)
}

// TestStateDedupe: a call made again under its call id is given the
// recorded outcome and does not run.
func TestStateDedupe(t *testing.T) {
	r := newStateRig(t)
	var ran atomic.Int32
	tool := wrap(t, "state_dedupe", false, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		ran.Add(1)
		return toolmw.Text("booked"), nil
	}, dedupe.New())
	ctx := runCtx("run_dedupe", "call_1")
	for range 3 {
		if _, err := tool(ctx, json.RawMessage(`{"room":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	if ran.Load() != 1 {
		t.Fatalf("ran %d times, want 1", ran.Load())
	}
	r.expect(t, "toolmw.dedupe.repeats", 2, name, "state_dedupe")
	runtime.KeepAlive([]any{tool, ctx})
}

// TestStateFallback: a read that failed is served its last good result;
// one with other arguments, the function's substitute.
func TestStateFallback(t *testing.T) {
	r := newStateRig(t)
	var failing atomic.Bool
	tool := wrap(t, "state_fallback", true, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		if failing.Load() {
			return toolmw.Result{}, taxonomy.New(taxonomy.KindRateLimited, "upstream_rate_limited", "slow down")
		}
		return toolmw.Text("rates"), nil
	}, fallback.New(fallback.WithLastGood(time.Minute), fallback.WithSharedResults(),
		fallback.WithFunc(func(context.Context, toolmw.Call, json.RawMessage, error) (toolmw.Result, error) {
			return toolmw.Text("no rates now"), nil
		})))
	ctx := context.Background()
	if _, err := tool(ctx, json.RawMessage(`{"q":"EUR"}`)); err != nil {
		t.Fatal(err)
	}
	failing.Store(true)
	for _, args := range []string{`{"q":"EUR"}`, `{"q":"USD"}`} {
		if _, err := tool(ctx, json.RawMessage(args)); err != nil {
			t.Fatalf("%s: %v", args, err)
		}
	}
	r.expect(t, "toolmw.fallback.served", 1, name, "state_fallback", tracing.AttrFallbackSource, "last_good")
	r.expect(t, "toolmw.fallback.served", 1, name, "state_fallback", tracing.AttrFallbackSource, "function")
	runtime.KeepAlive(tool)
}

// TestStateSpendCurrencies: one tool charged in two currencies, by two
// layers, is two series; a layer without a currency reports none.
func TestStateSpendCurrencies(t *testing.T) {
	r := newStateRig(t)
	usd := wrap(t, "state_spend_fx", false, okTool, spend.New(spend.Fixed("state_spend_fx", 1.5), spend.WithCurrency("USD")))
	eur := wrap(t, "state_spend_fx", false, okTool, spend.New(spend.Fixed("state_spend_fx", 2), spend.WithCurrency("EUR")))
	plain := wrap(t, "state_spend_plain", false, okTool, spend.New(spend.Fixed("state_spend_plain", 3)))
	ctx := spend.ContextWithLimit(context.Background(), 100)
	for _, tool := range []toolmw.Tool{usd, usd, eur, plain} {
		if _, err := tool(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	r.expect(t, "toolmw.spend.settled", 3, name, "state_spend_fx", tracing.AttrCurrency, "USD")
	r.expect(t, "toolmw.spend.settled", 2, name, "state_spend_fx", tracing.AttrCurrency, "EUR")
	r.expect(t, "toolmw.spend.reserved", 0, name, "state_spend_fx", tracing.AttrCurrency, "EUR")
	n := 0
	for _, p := range r.collect(t)["toolmw.spend.settled"] {
		switch p.attrs[name] {
		case "state_spend_fx":
			n++
		case "state_spend_plain":
			if _, has := p.attrs[tracing.AttrCurrency]; has || p.value != 3 {
				t.Errorf("without a currency: %v", p)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d series of state_spend_fx, want 2 (one per currency)", n)
	}
	runtime.KeepAlive([]any{usd, eur, plain})
}

// TestStateLayersHostileNamesBounded: 1,000 tools named like tokens, each
// gated, cached, deduplicated and given a fallback, and called: each of
// these layers' instruments reports at most state.DefaultMaxSeries+1
// series, none with the token in it. Run last in this file: it fills
// these instruments' series in the Default registry.
func TestStateLayersHostileNamesBounded(t *testing.T) {
	r := newStateRig(t)
	const secret = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s01"
	fake := clock.NewFake(epoch)
	desk := newDesk(approval.NewMemoryStore(), fake)
	sub := fallback.WithFunc(func(context.Context, toolmw.Call, json.RawMessage, error) (toolmw.Result, error) {
		return toolmw.Text("substitute"), nil
	})
	fails := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.New(taxonomy.KindRateLimited, "upstream_rate_limited", "slow down")
	}
	var keep []toolmw.Tool
	for i := range 1000 {
		n := secret + "_" + strconv.Itoa(i)
		read := wrap(t, n, true, okTool, cache.New(time.Minute, cache.WithSharedResults(), cache.WithClock(fake)), dedupe.New())
		gated := wrap(t, n, false, okTool, desk.Middleware(nil))
		failing := wrap(t, n, false, fails, fallback.New(sub))
		ctx := runCtx("run_hostile", "call_"+strconv.Itoa(i))
		_, _ = read(ctx, nil)
		_, _ = read(ctx, nil)
		_, _ = gated(ctx, nil)
		_, _ = failing(ctx, nil)
		keep = append(keep, read, gated, failing)
	}
	checked := map[string]bool{}
	for metric, points := range r.collect(t) {
		for _, p := range points {
			for _, v := range p.attrs {
				if len(v) > 2*state.MaxNameLen || containsSecret(v, secret) {
					t.Errorf("%s: attribute %q", metric, v)
				}
			}
		}
		switch metric {
		case "toolmw.approval.pending", "toolmw.cache.hits", "toolmw.cache.misses", "toolmw.dedupe.repeats", "toolmw.fallback.served":
			checked[metric] = true
			if len(points) > state.DefaultMaxSeries+1 {
				t.Errorf("%s: %d series, bound %d", metric, len(points), state.DefaultMaxSeries+1)
			}
		}
	}
	if len(checked) != 5 {
		t.Errorf("instruments seen: %v", checked)
	}
	if v, ok := r.value(t, "toolmw.approval.pending", map[string]string{name: state.Other}); !ok || v < 1000-state.DefaultMaxSeries {
		t.Errorf("the _OTHER series of pending = %v, %v: want the requests past the bound", v, ok)
	}
	runtime.KeepAlive([]any{keep, desk})
}
