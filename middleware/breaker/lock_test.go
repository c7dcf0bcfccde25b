package breaker

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// TestCallbackRunsWithoutOurLock checks the breaker's own lock; the external
// tests check gobreaker's by calling back into the breaker.
func TestCallbackRunsWithoutOurLock(t *testing.T) {
	var b *Breaker
	calls := 0
	b = NewBreaker("upstream", WithConsecutiveFailures(1), WithOnStateChange(func(StateChangeEvent) {
		calls++
		if !b.mu.TryLock() {
			t.Error("the callback runs under the breaker's lock")
			return
		}
		b.mu.Unlock()
	}))
	failing := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Transient("down", "down")
	}
	New(WithShared(b))(failing)(context.Background(), nil)
	if calls != 1 {
		t.Fatalf("callback ran %d times, want 1", calls)
	}
}
