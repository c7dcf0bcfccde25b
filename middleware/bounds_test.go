package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/ratelimit"
)

// TestKeyedStateIsBounded: a key function that returns something different
// for every call (the model's call id — the mistake WithKey's docs warn
// about, or a hostile caller) keeps at most DefaultMaxKeys breakers and
// limiters: 30,000 keys grow the heap by what about a thousand of them
// hold, not by 30,000 of them (with the bounds lifted, the heap grew by
// 37 MiB).
func TestKeyedStateIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("30,000 calls")
	}
	byID := func(c toolmw.Call) string { return c.ID }
	ok := func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, ok,
		breaker.New(breaker.WithKey(byID)),
		ratelimit.New(rate.Inf, 1, ratelimit.WithKey(byID)))

	const keys = 30_000
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range keys {
		if _, err := tool(toolmw.WithCallID(context.Background(), fmt.Sprintf("call_%d", i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(tool) // its breakers and limiters are what is measured
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d distinct keys: heap grew by %d KiB (bounds: %d breakers, %d limiters)", keys, grew>>10, breaker.DefaultMaxKeys, ratelimit.DefaultMaxKeys)
	// A breaker and a limiter hold well under 2 KiB together; 1024 of each
	// stay under 4 MiB, where 30,000 take about 37 MiB.
	if grew > 4<<20 {
		t.Fatalf("heap grew by %d bytes for %d keys", grew, keys)
	}
}
