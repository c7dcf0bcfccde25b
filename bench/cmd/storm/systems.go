package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fsbudget "github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/retrypolicy"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

// The backoff every system uses: full jitter, exponential from 100ms, capped
// at 5s (the toolmw retry layer's defaults).
const (
	backoffBase = retry.DefaultBaseDelay
	backoffCap  = retry.DefaultMaxDelay
)

// maxAttempts is every system's cap of attempts per call.
const maxAttempts = 3

// lockedRand is a seeded random source safe for concurrent use.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func newRand(seed uint64) *lockedRand {
	return &lockedRand{r: rand.New(rand.NewPCG(seed, 0x5eed))}
}

func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

// fullJitter is the wait before retry k (from 1).
func fullJitter(k int, r *lockedRand) time.Duration {
	ceil := min(backoffBase<<(k-1), backoffCap)
	return time.Duration(r.Float64() * float64(ceil))
}

// A system is built per run around the dependency; opens reports how often
// its breaker opened, or -1 when it has none.
type system struct {
	name  string
	about string // one line for the report
	build func(s *sim, dep toolmw.Tool, jitter *lockedRand) (tool toolmw.Tool, opens func() int)
}

func noBreaker() int { return -1 }

var systems = []system{
	{"naive", "retries every failure.", buildLoop(func() quota { return nil })},
	{"failsafe_retry_budget", "failsafe-go v0.9.8's retry policy with its retry budget, the real library " +
		"(defaults: retries may be at most 20% of the executions in flight, with at least 3 allowed).", buildFailsafe},
	{"grpc_throttling", "gRPC retry throttling as specified in gRFC A6 (\"Throttling Configuration\") and implemented by " +
		"grpc-go (`retryThrottler` in clientconn.go, `shouldRetry` in stream.go), with A6's example configuration, " +
		"maxTokens 10 and tokenRatio 0.1: tokens start at 10; every failed attempt takes 1 (not below 0), every call that " +
		"succeeds adds 0.1 (not above 10); after a failed attempt a retry is made only while tokens > 5, half of max.",
		buildLoop(newGRPCThrottle)},
	{"aws_standard", "the AWS SDKs' standard retry mode quota (AWS SDKs and Tools Reference Guide, \"Retry behavior\"; " +
		"aws-sdk-go-v2 `aws/retry` defaults `DefaultRetryRateTokens` 500, `DefaultRetryCost` 5, `DefaultRetryTimeoutCost` 10, " +
		"`DefaultNoRetryIncrement` 1): a bucket of 500 tokens; a retry takes 5, or 10 when the failure it retries is a timeout, " +
		"and is not made when the bucket lacks them; a retry that succeeds gives its cost back; a call that succeeds at its " +
		"first attempt adds 1; never above 500.", buildLoop(newAWSQuota)},
	{"toolmw_fixed", "toolmw's retry layer with the fixed-ratio budget (`budget.NewRetry()`: 10% of calls, a reserve of 10 tokens).",
		buildToolmw(false, func() *budget.Retry { return budget.NewRetry() })},
	{"toolmw_adaptive", "toolmw's retry layer with its default budget, the adaptive one (`budget.NewAdaptive()`: " +
		"the same ratio and reserve, a retry that succeeds refunded, an overloaded attempt charged twice; see package budget).",
		buildToolmw(false, nil)},
	{"toolmw", "toolmw_adaptive with toolmw's breaker layer inside it, with its defaults (see package breaker: " +
		"a run of 5 failures that is not a fluke opens it for 30s, then 1 probe), in the default stack's order. " +
		"gobreaker times the open period with the real clock, so the simulation holds it in virtual time in front of " +
		"the real layer (see openGate).", buildToolmw(true, nil)},
}

// A quota is a peer's retry budget, modelled after its specification. The
// retry loop consults it after each failed attempt and tells it how the
// call ended. A nil quota allows every retry. The simulation runs one
// goroutine at a time, but a quota still locks: the goroutines are real.
type quota interface {
	// failed records that attempt k failed with err and reports whether a
	// retry may follow, taking its price; k may be the last attempt.
	failed(k int, err error) (retry bool, price int)
	// succeeded records that attempt k succeeded, ending the call; price is
	// what the retry that made it paid (0 for a first attempt).
	succeeded(k, price int)
}

// buildLoop is a plain retry loop: up to maxAttempts attempts with full
// jitter between them, every failure retried when the quota allows.
func buildLoop(newQuota func() quota) func(*sim, toolmw.Tool, *lockedRand) (toolmw.Tool, func() int) {
	return func(s *sim, dep toolmw.Tool, jitter *lockedRand) (toolmw.Tool, func() int) {
		q := newQuota()
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			price := 0
			for k := 1; ; k++ {
				res, err := dep(ctx, args)
				if err == nil {
					if q != nil {
						q.succeeded(k, price)
					}
					return res, nil
				}
				if q != nil {
					var ok bool
					if ok, price = q.failed(k, err); !ok {
						return res, err
					}
				}
				if k == maxAttempts {
					return res, err
				}
				s.Sleep(fullJitter(k, jitter))
			}
		}, noBreaker
	}
}

// grpcThrottle is gRPC retry throttling (gRFC A6; grpc-go's retryThrottler).
// grpc-go counts a failure in shouldRetry before it checks the attempt cap,
// so a call's last failed attempt takes a token too, and counts a success
// once per call, when the call finishes without error.
type grpcThrottle struct {
	mu                  sync.Mutex
	tokens, max, thresh float64
	ratio               float64
}

func newGRPCThrottle() quota {
	const maxTokens, tokenRatio = 10, 0.1
	return &grpcThrottle{tokens: maxTokens, max: maxTokens, thresh: maxTokens / 2, ratio: tokenRatio}
}

func (g *grpcThrottle) failed(int, error) (bool, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tokens = max(g.tokens-1, 0)
	return g.tokens > g.thresh, 0
}

func (g *grpcThrottle) succeeded(int, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tokens = min(g.tokens+g.ratio, g.max)
}

// The AWS standard mode's quota parameters.
const (
	awsTokens      = 500 // DefaultRetryRateTokens: the bucket's size and start
	awsRetryCost   = 5   // DefaultRetryCost
	awsTimeoutCost = 10  // DefaultRetryTimeoutCost: retrying a timeout
	awsNoRetryInc  = 1   // DefaultNoRetryIncrement: a call that needed no retry
)

// awsQuota is the AWS SDKs' standard retry quota.
type awsQuota struct {
	mu     sync.Mutex
	tokens int
}

func newAWSQuota() quota { return &awsQuota{tokens: awsTokens} }

func (a *awsQuota) failed(k int, err error) (bool, int) {
	if k == maxAttempts {
		return false, 0 // the SDK asks for a retry token only when it may retry
	}
	cost := awsRetryCost
	if te, ok := taxonomy.From(err); ok && te.Kind() == taxonomy.KindTimeout {
		cost = awsTimeoutCost
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tokens < cost {
		return false, 0
	}
	a.tokens -= cost
	return true, cost
}

func (a *awsQuota) succeeded(k, price int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if k == 1 {
		price = awsNoRetryInc
	}
	a.tokens = min(a.tokens+price, awsTokens)
}

// buildFailsafe is failsafe-go's retry policy with three attempts and its
// retry budget (default: at most 20% of in-flight executions are retries,
// with at least 3 allowed). The backoff runs on the virtual clock through a
// delay function; failsafe-go then waits zero real time.
func buildFailsafe(s *sim, dep toolmw.Tool, jitter *lockedRand) (toolmw.Tool, func() int) {
	exec := failsafe.With[toolmw.Result](retrypolicy.NewBuilder[toolmw.Result]().
		WithMaxAttempts(maxAttempts).
		ReturnLastFailure().
		WithDelayFunc(func(exec failsafe.ExecutionAttempt[toolmw.Result]) time.Duration {
			s.Sleep(fullJitter(exec.Attempts(), jitter))
			return 0
		}).
		WithBudget(fsbudget.New()).
		Build())
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		return exec.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[toolmw.Result]) (toolmw.Result, error) {
			return dep(e.Context(), args)
		})
	}, noBreaker
}

// buildToolmw is the real toolmw retry layer (three attempts; newBudget's
// budget, or the layer's default when nil) and, with withBreaker, the real
// breaker layer with its defaults inside it, in the default stack's order.
// The tool is idempotent, so a timed-out attempt may be retried.
func buildToolmw(withBreaker bool, newBudget func() *budget.Retry) func(*sim, toolmw.Tool, *lockedRand) (toolmw.Tool, func() int) {
	return func(s *sim, dep toolmw.Tool, jitter *lockedRand) (toolmw.Tool, func() int) {
		opts := []retry.Option{retry.WithMaxAttempts(maxAttempts), retry.WithClock(s), retry.WithRand(jitter.Float64)}
		if newBudget != nil {
			opts = append(opts, retry.WithBudget(newBudget()))
		}
		mws := []toolmw.Middleware{retry.New(opts...)}
		opens := noBreaker
		if withBreaker {
			g := &openGate{s: s, openFor: breaker.DefaultOpenFor}
			mws = append(mws, g.middleware, breaker.New(
				breaker.WithClock(s),
				breaker.WithOpenFor(time.Nanosecond),
				breaker.WithOnStateChange(g.changed),
			))
			opens = g.count
		}
		return toolmw.MustWrap(toolmw.Spec{Name: "dependency", Idempotent: true}, dep, mws...), opens
	}
}

// openGate holds a breaker's open period in virtual time. gobreaker measures
// the open period with the real clock, which a simulation cannot move, so
// the real breaker layer is given a one-nanosecond open period (it is
// half-open again by its next call) and the gate, just outside it, fails
// calls fast for the default open period of virtual time after each opening,
// with the error the layer returns when open. The breaker layer still
// decides what counts as a failure, when to open, which call is the probe,
// and whether the probe closes it.
type openGate struct {
	s       *sim
	openFor time.Duration

	mu       sync.Mutex
	open     bool
	openedAt time.Time
	opens    int
}

func (g *openGate) changed(e breaker.StateChangeEvent) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch e.To {
	case breaker.StateOpen:
		g.open, g.openedAt = true, e.Time // stamped by the simulation's clock
		g.opens++
	case breaker.StateClosed:
		g.open = false
	}
}

func (g *openGate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.opens
}

func (g *openGate) middleware(next toolmw.Tool) toolmw.Tool {
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		g.mu.Lock()
		open, until := g.open, g.openedAt.Add(g.openFor)
		g.mu.Unlock()
		if wait := until.Sub(g.s.Now()); open && wait > 0 {
			return toolmw.Result{}, taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen,
				"the circuit breaker is open").WithRetryAfter(wait)
		}
		return next(ctx, args)
	}
}
