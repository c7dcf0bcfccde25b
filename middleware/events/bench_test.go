package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/toolmwtest"
)

func benchCall(b *testing.B, tool toolmw.Tool, mws ...toolmw.Middleware) {
	wrapped := toolmw.MustWrap(toolmw.Spec{Name: "bench"}, tool, mws...)
	ctx := toolmw.WithCallID(context.Background(), "call_1")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, _ = wrapped(ctx, nil)
	}
}

// BenchmarkSuccess measures the success path: no event.
func BenchmarkSuccess(b *testing.B) {
	b.Run("bare", func(b *testing.B) { benchCall(b, toolmwtest.OK) })
	b.Run("events", func(b *testing.B) {
		em := events.NewEmitter(events.SinkFunc(func(events.Event) {}))
		benchCall(b, toolmwtest.OK, em.Middleware())
		_ = em.Flush(context.Background())
	})
}

// BenchmarkFailure measures a failed call whose event is queued for a sink
// that discards it (or dropped when the queue is full).
func BenchmarkFailure(b *testing.B) {
	failing := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, errors.New("x")
	}
	em := events.NewEmitter(events.SinkFunc(func(events.Event) {}))
	benchCall(b, failing, em.Middleware())
	b.StopTimer()
	_ = em.Flush(context.Background())
}
