package toolmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
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

// keyProbes are the calls whose keys TestKeysSurviveARestart compares
// across two processes: call ids and loop keys that SafeCallID replaces
// (a "/", a "+", an "@", more than 128 bytes), in named runs (one named
// by an id outside the plain shape, which budget.WithID hashes).
var keyProbes = []struct{ run, call, loop string }{
	{run: "run-7", call: "call/1"},
	{run: "run-7", call: "a+b@c"},
	{run: "run-7", call: strings.Repeat("x", 200)},
	{run: "run-7", call: "call_plain"},
	{run: "tenant/42/run-7", call: "call/1"},
	{run: "tenant/42/run-7", call: "call_plain"},
	{run: "run-7", loop: "order/42+pay@acme"},
	{run: "run-7", loop: strings.Repeat("k", 300)},
	{loop: "order/42+pay@acme"}, // a loop key needs no run
}

// probeKeys returns the key of every probe, as this process derives it.
func probeKeys(t testing.TB) []string {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "pay", HonoursKeys: true}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		c, _ := toolmw.CallFrom(ctx)
		return toolmw.Text(c.Key()), nil
	})
	var out []string
	for _, p := range keyProbes {
		ctx := context.Background()
		if p.run != "" {
			ctx = budget.WithRun(ctx, budget.WithID(p.run))
		}
		if p.call != "" {
			ctx = toolmw.WithCallID(ctx, p.call)
		}
		if p.loop != "" {
			ctx = toolmw.WithIdempotencyKey(ctx, p.loop)
		}
		res, err := tool(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res.Content)
	}
	return out
}

// TestKeyProbeProcess is the second process of TestKeysSurviveARestart: it
// prints the probes' keys when that test runs it, and does nothing
// otherwise.
func TestKeyProbeProcess(t *testing.T) {
	if os.Getenv("TOOLMW_KEY_PROBE") != "1" {
		t.Skip("run by TestKeysSurviveARestart")
	}
	b, _ := json.Marshal(probeKeys(t))
	fmt.Printf("\nKEYS %s\n", b)
}

// TestKeysSurviveARestart: the idempotency key of a call is a pure function
// of its run id, tool and call id (or the loop's key): another process (the
// test binary run again) derives the same keys, also for call ids and loop
// keys that SafeCallID replaces, and for a run id that budget.WithID
// hashes. Distinct ids keep distinct keys.
func TestKeysSurviveARestart(t *testing.T) {
	here := probeKeys(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKeyProbeProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TOOLMW_KEY_PROBE=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the second process: %v\n%s", err, out)
	}
	_, line, ok := strings.Cut(string(out), "\nKEYS ")
	if !ok {
		t.Fatalf("the second process printed no keys:\n%s", out)
	}
	line, _, _ = strings.Cut(line, "\n")
	var there []string
	if err := json.Unmarshal([]byte(line), &there); err != nil || len(there) != len(here) {
		t.Fatalf("the second process printed %q (%v)", line, err)
	}
	seen := map[string]int{}
	for i, p := range keyProbes {
		if here[i] != there[i] {
			t.Errorf("run %q call %.20q loop %.20q: key %s in one process, %s in the next", p.run, p.call, p.loop, here[i], there[i])
		}
		if j, dup := seen[here[i]]; dup && keyProbes[j].loop == "" && p.loop == "" {
			t.Errorf("probes %d and %d share key %s", j, i, here[i])
		}
		seen[here[i]] = i
	}
}

// TestKeyIsOfTheRawCallID: a call id that reads like the replaced form of
// another (SafeCallID's "invalid_call_id_" and 16 hex digits) gets a key of
// its own, never the other's: the key is made of the id as the model sent
// it, not as sinks see it.
func TestKeyIsOfTheRawCallID(t *testing.T) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		c, _ := toolmw.CallFrom(ctx)
		return toolmw.Text(c.Key()), nil
	})
	for _, run := range []context.Context{
		budget.WithRun(context.Background(), budget.WithID("run-7")),
		budget.WithRun(context.Background()),
		context.Background(),
	} {
		key := func(id string) string {
			res, _ := tool(toolmw.WithCallID(run, id), nil)
			return res.Content
		}
		if a, b := key("call/1"), key(toolmw.SafeCallID("call/1")); a == b {
			t.Errorf("call/1 and its replaced form share key %s", a)
		}
		if a, b := key("call/1"), key("call/2"); a == b {
			t.Errorf("call/1 and call/2 share key %s", a)
		}
	}
}
