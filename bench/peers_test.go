package bench

import (
	"context"
	"encoding/json"
	"time"

	retrygo "github.com/avast/retry-go/v4"
	"github.com/cenkalti/backoff/v5"
	"github.com/failsafe-go/failsafe-go"
	fscircuitbreaker "github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	fstimeout "github.com/failsafe-go/failsafe-go/timeout"
	"github.com/go-kit/kit/circuitbreaker"
	"github.com/go-kit/kit/endpoint"
	"github.com/go-kit/kit/ratelimit"
	"github.com/sony/gobreaker"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
)

// The peers are configured as a user would configure them for a tool call:
// three attempts with exponential backoff, a breaker that opens after five
// consecutive failures for 30s, a per-attempt timeout of 2s and a rate limit
// that never throttles. Each is built once and then called per iteration,
// adapted to the toolmw.Tool signature so every system runs the same work.

// failsafeRetryCBTimeout composes a failsafe-go retry policy, circuit
// breaker and timeout: Retry(CircuitBreaker(Timeout(tool))). The tool sees
// the execution's context, which the timeout policy cancels.
func failsafeRetryCBTimeout(tool toolmw.Tool) toolmw.Tool {
	rp := retrypolicy.NewBuilder[toolmw.Result]().
		WithMaxAttempts(3).
		WithBackoff(100*time.Millisecond, 10*time.Second).
		Build()
	cb := fscircuitbreaker.NewBuilder[toolmw.Result]().
		WithFailureThreshold(5).
		WithDelay(30 * time.Second).
		Build()
	to := fstimeout.New[toolmw.Result](2 * time.Second)
	exec := failsafe.With[toolmw.Result](rp, cb, to)
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		return exec.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[toolmw.Result]) (toolmw.Result, error) {
			return tool(e.Context(), args)
		})
	}
}

// gokitGobreakerRatelimit is a go-kit endpoint chain: the sony/gobreaker v1
// breaker outside an erroring x/time/rate limiter (with the same limit as
// toolmw's), around an endpoint that calls the tool.
func gokitGobreakerRatelimit(tool toolmw.Tool) toolmw.Tool {
	ep := func(ctx context.Context, req any) (any, error) {
		return tool(ctx, req.(json.RawMessage))
	}
	ep = endpoint.Chain(
		circuitbreaker.Gobreaker(gobreaker.NewCircuitBreaker(gobreaker.Settings{
			Name:    "bench",
			Timeout: 30 * time.Second,
		})),
		ratelimit.NewErroringLimiter(rate.NewLimiter(hugeRate, hugeBurst)),
	)(ep)
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		resp, err := ep(ctx, args)
		if err != nil {
			return toolmw.Result{}, err
		}
		return resp.(toolmw.Result), nil
	}
}

// retryGo calls the tool through avast/retry-go v4 with three attempts.
func retryGo(tool toolmw.Tool) toolmw.Tool {
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		return retrygo.DoWithData(func() (toolmw.Result, error) {
			return tool(ctx, args)
		}, retrygo.Attempts(3), retrygo.Context(ctx))
	}
}

// backoffRetry calls the tool through cenkalti/backoff v5 with an
// exponential backoff and three tries. An ExponentialBackOff holds state, so
// each call makes its own, as the package documents.
func backoffRetry(tool toolmw.Tool) toolmw.Tool {
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		return backoff.Retry(ctx, func() (toolmw.Result, error) {
			return tool(ctx, args)
		}, backoff.WithBackOff(backoff.NewExponentialBackOff()), backoff.WithMaxTries(3))
	}
}
