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

// latency is how long the dependency takes to answer, success or failure.
const latency = 50 * time.Millisecond

// The backoff every system uses: full jitter, exponential from 100ms, capped
// at 5s (the toolmw retry layer's defaults).
const (
	backoffBase = retry.DefaultBaseDelay
	backoffCap  = retry.DefaultMaxDelay
)

// errUnavailable is the dependency's failure: transient, as the classify
// layer would map a 503 or a refused connection.
var errUnavailable = taxonomy.Transient("upstream_unavailable", "the dependency is unavailable")

type attemptsKey struct{}

// dependency is the simulated upstream. Each attempt takes latency of
// virtual time; it fails when the dependency is down at the attempt's start,
// or, independently, with probability faults.
type dependency struct {
	s        *sim
	downFrom time.Time // the outage, [downFrom, downTo); zero when none
	downTo   time.Time
	faults   float64
	rand     *lockedRand
}

func (d *dependency) call(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	*ctx.Value(attemptsKey{}).(*int)++
	now := d.s.Now()
	fail := !now.Before(d.downFrom) && now.Before(d.downTo)
	if !fail && d.faults > 0 {
		fail = d.rand.Float64() < d.faults
	}
	d.s.Sleep(latency)
	if fail {
		return toolmw.Result{}, errUnavailable
	}
	return toolmw.Result{Content: "ok"}, nil
}

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
	build func(s *sim, dep toolmw.Tool, jitter *lockedRand) (tool toolmw.Tool, opens func() int)
}

func noBreaker() int { return -1 }

var systems = []system{
	{"naive", buildNaive},
	{"failsafe_retry", buildFailsafe(false)},
	{"failsafe_retry_budget", buildFailsafe(true)},
	{"toolmw_retry", buildToolmw(false)},
	{"toolmw", buildToolmw(true)},
}

// buildNaive retries every failure, three attempts in all.
func buildNaive(s *sim, dep toolmw.Tool, jitter *lockedRand) (toolmw.Tool, func() int) {
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		for k := 1; ; k++ {
			res, err := dep(ctx, args)
			if err == nil || k == 3 {
				return res, err
			}
			s.Sleep(fullJitter(k, jitter))
		}
	}, noBreaker
}

// buildFailsafe is failsafe-go's retry policy with three attempts, with or
// without its retry budget (default: at most 20% of in-flight executions
// are retries, with at least 3 allowed). The backoff runs on the virtual
// clock through a delay function; failsafe-go then waits zero real time.
func buildFailsafe(withBudget bool) func(*sim, toolmw.Tool, *lockedRand) (toolmw.Tool, func() int) {
	return func(s *sim, dep toolmw.Tool, jitter *lockedRand) (toolmw.Tool, func() int) {
		b := retrypolicy.NewBuilder[toolmw.Result]().
			WithMaxAttempts(3).
			ReturnLastFailure().
			WithDelayFunc(func(exec failsafe.ExecutionAttempt[toolmw.Result]) time.Duration {
				s.Sleep(fullJitter(exec.Attempts(), jitter))
				return 0
			})
		if withBudget {
			b = b.WithBudget(fsbudget.New())
		}
		exec := failsafe.With[toolmw.Result](b.Build())
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			return exec.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[toolmw.Result]) (toolmw.Result, error) {
				return dep(e.Context(), args)
			})
		}, noBreaker
	}
}

// buildToolmw is the real toolmw retry layer (three attempts, its default
// retry token budget) and, with withBreaker, the real breaker layer with its
// defaults inside it, in the default stack's order.
func buildToolmw(withBreaker bool) func(*sim, toolmw.Tool, *lockedRand) (toolmw.Tool, func() int) {
	return func(s *sim, dep toolmw.Tool, jitter *lockedRand) (toolmw.Tool, func() int) {
		mws := []toolmw.Middleware{retry.New(
			retry.WithMaxAttempts(3),
			retry.WithBudget(budget.NewRetry()),
			retry.WithClock(s),
			retry.WithRand(jitter.Float64),
		)}
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
		return toolmw.MustWrap(toolmw.Spec{Name: "dependency"}, dep, mws...), opens
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
