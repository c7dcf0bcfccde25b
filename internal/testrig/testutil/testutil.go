// Package testutil holds the test helpers that several packages' tests
// share: a stand-in retry layer and store-test rigs. It is imported by
// _test.go files only; the stand-in tools are public, in package
// toolmwtest.
package testutil

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// RetryN stands in for the retry layer: it makes up to n attempts while the
// error is retryable (taxonomy.ShouldRetry, not idempotent), advancing the
// Call's attempt, and never waits.
func RetryN(n int) toolmw.Middleware {
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			for i := 1; ; i++ {
				toolmw.SetAttempt(ctx, i)
				res, err := next(ctx, args)
				if retry, _ := taxonomy.ShouldRetry(err, false); !retry || i == n {
					return res, err
				}
			}
		}
	}
}

// Degraded returns a middleware that records, after each call, the
// layer the call record says fell back to local state (Call.Degraded, ""
// when none did), and a func returning what it recorded. Put it outside
// the layer under test.
func Degraded() (toolmw.Middleware, func() []string) {
	var mu sync.Mutex
	var seen []string
	mw := func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			res, err := next(ctx, args)
			c, _ := toolmw.CallFrom(ctx)
			mu.Lock()
			seen = append(seen, c.Degraded)
			mu.Unlock()
			return res, err
		}
	}
	return mw, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}
