package langchaingo

import (
	"context"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/toolmw/toolmw/budget"
)

// TestRunStateEndsWithTheRun: what the adapter keeps for a run (its call
// counts) is dropped once the run's *budget.Run is garbage collected.
func TestRunStateEndsWithTheRun(t *testing.T) {
	wp := func() weak.Pointer[budget.Run] {
		ctx := budget.WithRun(context.Background(), budget.WithID("run_gc"))
		for range 3 {
			callID(ctx, nil, "echo", []byte(`{}`))
		}
		run, _ := budget.RunFrom(ctx)
		wp := weak.Make(run)
		if !runs.has(wp) {
			t.Fatal("the run has no state")
		}
		return wp
	}()
	// Cleanups run on a goroutine of their own after a collection: give
	// them up to a minute (no timing is asserted).
	for deadline := time.Now().Add(time.Minute); runs.has(wp) && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if runs.has(wp) {
		t.Fatal("the run's state outlived it")
	}
}

// TestCanonical: the same JSON value however spaced or ordered is one
// form; other bytes keep theirs, tagged apart.
func TestCanonical(t *testing.T) {
	a := string(canonical([]byte(`{"b":[1, 2.50],"a":{"y":null,"x":"é"}}`)))
	b := string(canonical([]byte(" {\"a\":{\"x\":\"\\u00e9\",\"y\":null},\n\"b\":[1,2.50]} ")))
	if a != b || a[0] != 'c' {
		t.Errorf("%q and %q", a, b)
	}
	for _, raw := range []string{`not json`, `{"a":1} {"a":1}`, `{"a":`} {
		if got := string(canonical([]byte(raw))); got != "r"+raw {
			t.Errorf("%q: %q", raw, got)
		}
	}
	if string(canonical([]byte(`1.0`))) == string(canonical([]byte(`1`))) {
		t.Error("numbers are kept as written")
	}
}
