package toolmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/testutil"
)

// keys records the idempotency key every execution of a tool saw.
type keys struct {
	mu   sync.Mutex
	seen []string
}

func (k *keys) tool(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	call, _ := toolmw.CallFrom(ctx)
	k.mu.Lock()
	k.seen = append(k.seen, call.Key())
	k.mu.Unlock()
	return toolmw.Result{}, errors.New("supplier down") // untyped: retried only when idempotent
}

// TestKeyStableAcrossAttempts: every attempt of a call sees one key; calls
// with different ids, or without one, see different keys; the same call id
// in the same run sees the same key, in another run a different one.
func TestKeyStableAcrossAttempts(t *testing.T) {
	k := &keys{}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book", HonoursKeys: true}, k.tool, testutil.RetryN(3),
		func(next toolmw.Tool) toolmw.Tool { // stands in for a layer retrying untyped failures of idempotent calls
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				call, _ := toolmw.CallFrom(ctx)
				for i := 0; ; i++ {
					res, err := next(ctx, args)
					if err == nil || !call.Idempotent || i == 2 {
						return res, err
					}
				}
			}
		})
	call := func(ctx context.Context) []string {
		k.mu.Lock()
		k.seen = nil
		k.mu.Unlock()
		_, _ = tool(ctx, nil)
		k.mu.Lock()
		defer k.mu.Unlock()
		return append([]string(nil), k.seen...)
	}
	run := budget.WithRun(context.Background(), budget.WithMaxAttempts(100))
	a := call(toolmw.WithCallID(run, "call_a"))
	if len(a) != 3 {
		t.Fatalf("%d executions, want 3 (HonoursKeys makes untyped failures retryable)", len(a))
	}
	for _, key := range a {
		if key != a[0] || !strings.HasPrefix(key, "tmk_") || len(key) != 4+32 {
			t.Fatalf("keys %q: want one tmk_ key across attempts", a)
		}
	}
	if again := call(toolmw.WithCallID(run, "call_a")); again[0] != a[0] {
		t.Errorf("the same call id in the same run: %q, want %q", again[0], a[0])
	}
	if b := call(toolmw.WithCallID(run, "call_b")); b[0] == a[0] {
		t.Errorf("another call id has the same key %q", b[0])
	}
	other := budget.WithRun(context.Background(), budget.WithMaxAttempts(100))
	if c := call(toolmw.WithCallID(other, "call_a")); c[0] == a[0] {
		t.Errorf("the same call id in another run has the same key %q", c[0])
	}
	x, y := call(context.Background()), call(context.Background())
	if x[0] == y[0] || x[0] != x[1] || y[0] != y[2] {
		t.Errorf("calls without ids: %q and %q, want one key per call, different across calls", x, y)
	}
	if l := call(toolmw.WithIdempotencyKey(run, "order-42:pay")); l[0] != "order-42:pay" || l[2] != l[0] {
		t.Errorf("the loop's key: %q", l)
	}
	if l := call(toolmw.WithIdempotencyKey(run, "bad key\nwith a newline")); !strings.HasPrefix(l[0], "tmk_") || strings.Contains(l[0], "\n") {
		t.Errorf("an unsafe loop key reached the tool as %q", l[0])
	}
	if (toolmw.Call{}).Key() != "" {
		t.Error("a Call made by hand has a key")
	}
}

// TestHonoursKeysIsIdempotent: Call.Idempotent reports a spec's
// HonoursKeys, so every layer that reads it treats the tool alike.
func TestHonoursKeysIsIdempotent(t *testing.T) {
	for _, c := range []struct {
		spec toolmw.Spec
		want bool
	}{
		{toolmw.Spec{Name: "pay"}, false},
		{toolmw.Spec{Name: "pay", HonoursKeys: true}, true},
		{toolmw.Spec{Name: "search", Idempotent: true}, true},
	} {
		var got bool
		tool := toolmw.MustWrap(c.spec, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			call, _ := toolmw.CallFrom(ctx)
			got = call.Idempotent
			return toolmw.Result{}, nil
		})
		_, _ = tool(context.Background(), nil)
		if got != c.want {
			t.Errorf("%+v: Idempotent %v, want %v", c.spec, got, c.want)
		}
	}
}

// TestKeyConcurrentReaders: goroutines of one call (hedges) asking for the
// key at once all get the same one.
func TestKeyConcurrentReaders(t *testing.T) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		call, _ := toolmw.CallFrom(ctx)
		var wg sync.WaitGroup
		got := make([]string, 8)
		for i := range got {
			wg.Go(func() { got[i] = call.Key() })
		}
		wg.Wait()
		for _, k := range got {
			if k != got[0] {
				return toolmw.Result{}, errors.New("keys differ")
			}
		}
		return toolmw.Text(got[0]), nil
	})
	if _, err := tool(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestKeyOfNamedRunIsStable(t *testing.T) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		c, _ := toolmw.CallFrom(ctx)
		return toolmw.Result{Content: c.Key()}, nil
	})
	key := func(runID, callID string) string {
		ctx := budget.ContextWithRun(context.Background(), budget.NewRun(budget.WithID(runID)))
		res, err := tool(toolmw.WithCallID(ctx, callID), json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		return res.Content
	}
	if a, b := key("run-1", "call_1"), key("run-1", "call_1"); a != b {
		t.Errorf("two runs named run-1: keys %q and %q, want one key", a, b)
	}
	if a, b := key("run-1", "call_1"), key("run-2", "call_1"); a == b {
		t.Errorf("runs run-1 and run-2 share key %q", a)
	}
	if a, b := key("run-1", "call_1"), key("run-1", "call_2"); a == b {
		t.Errorf("calls call_1 and call_2 share key %q", a)
	}
}

func TestSetFallback(t *testing.T) {
	cases := []struct{ set, want string }{
		{"", ""},
		{"last_good", "last_good"},
		{"function", "function"},
		{"sk_live_4eC39HqLyjWDarjtT1zdp7dc", "other"}, // data, not a name
		{"Last Good", "other"},
	}
	for _, c := range cases {
		var got string
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			if c.set != "" {
				toolmw.SetFallback(ctx, c.set)
			}
			call, _ := toolmw.CallFrom(ctx)
			got = call.Fallback
			return toolmw.Result{}, nil
		})
		_, _ = tool(context.Background(), nil)
		if got != c.want {
			t.Errorf("SetFallback(%q): Call.Fallback = %q, want %q", c.set, got, c.want)
		}
	}
	toolmw.SetFallback(context.Background(), "last_good") // no call: nothing to do, no panic
	toolmw.SetDegraded(context.Background(), "breaker")
	var degraded string
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		toolmw.SetDegraded(ctx, "redis down: sk_live_4eC39HqLyjWDarjtT1zdp7dc")
		call, _ := toolmw.CallFrom(ctx)
		degraded = call.Degraded
		return toolmw.Result{}, nil
	})
	_, _ = tool(context.Background(), nil)
	if degraded != "other" {
		t.Errorf("SetDegraded with data: Call.Degraded = %q, want other", degraded)
	}
}
