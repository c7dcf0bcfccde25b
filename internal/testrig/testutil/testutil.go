// Package testutil holds the test helpers that several packages' tests
// share: stand-in tools and a stand-in retry layer. It is imported by
// _test.go files only.
package testutil

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// OK is a tool that succeeds with the text "ok".
func OK(context.Context, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Text("ok"), nil
}

// Returning returns a tool that returns res and err, whatever it is called
// with.
func Returning(res toolmw.Result, err error) toolmw.Tool {
	return func(context.Context, json.RawMessage) (toolmw.Result, error) { return res, err }
}

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
