package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
)

func ExampleDefault() {
	stack := middleware.Default()
	fmt.Println(stack)

	// Swap one layer, drop another: the rest stays as it was.
	custom := func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			return next(ctx, args) // a breaker of your own
		}
	}
	stack, err := stack.Replace(middleware.Breaker, custom)
	if err != nil {
		panic(err)
	}
	stack, err = stack.Remove(middleware.RateLimit)
	if err != nil {
		panic(err)
	}
	fmt.Println(stack)

	search, err := stack.Wrap(toolmw.Spec{Name: "search", Idempotent: true},
		func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			return toolmw.Text("3 results"), nil
		})
	if err != nil {
		panic(err)
	}
	res, err := search(context.Background(), json.RawMessage(`{"q":"flights"}`))
	fmt.Println(toolmw.ForModel(res, err))
	// Output:
	// tracing → logging → events → retry → breaker → ratelimit → timeout → recovery → redact → classify → tool
	// tracing → logging → events → retry → breaker → timeout → recovery → redact → classify → tool
	// <untrusted-data source="tool_result">3 results</untrusted-data>
}
