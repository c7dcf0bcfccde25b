package retry

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the retry layer. Each tool it wraps gets its own adaptive
// retry token budget ([budget.NewAdaptive]) unless [WithBudget] or
// [WithoutBudget] says otherwise. An invalid
// option value makes a [toolmw.Reject] middleware: toolmw.Wrap reports it at
// start-up (see [Validate]). The returned Middleware and the Tools it makes
// are safe for concurrent use.
func New(opts ...Option) toolmw.Middleware {
	cfg := newConfig(opts)
	if cfg.err != nil {
		return toolmw.Reject(cfg.err)
	}
	return func(next toolmw.Tool) toolmw.Tool {
		r := &retrier{config: cfg, next: next}
		if r.budget == nil && !r.noBudget {
			r.budget = budget.NewAdaptive()
		}
		state.Register(state.Default, r, publish)
		return r.call
	}
}

// retrier is the layer around one tool.
type retrier struct {
	config
	next toolmw.Tool

	// For package state: the tool's name (nil until its first call), the
	// retries the retry budget refused and the attempts the run budget
	// refused. Written off the success path only, but for the name, once.
	name          state.Name
	budgetRefused atomic.Uint64
	runRefused    atomic.Uint64
}

// publish reports r's budgets to package state.
func publish(r *retrier, emit state.Emit) {
	name := r.name.String()
	if r.budget != nil {
		emit(state.RetryBudgetTokens, name, "", r.budget.Tokens())
		emit(state.RetryBudgetRefusals, name, "", float64(r.budgetRefused.Load()))
	}
	emit(state.RunBudgetRefusals, name, "", float64(r.runRefused.Load()))
}

const (
	msgPastDeadline = "retrying stopped: the next wait would end past the deadline"
	msgTooLong      = "retrying stopped: the dependency asked for a wait longer than the cap"
	msgRunExhausted = "the run's attempt cap for this tool is used up"
	msgNoBudget     = "retrying stopped: the retry budget is empty"
)

func (r *retrier) call(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	call, hasCall := toolmw.CallFrom(ctx)
	if hasCall {
		r.name.Learn(call.Tool)
	}
	run, _ := budget.RunFrom(ctx)
	var last error
	for n := 1; ; n++ {
		if run != nil {
			ok, degraded := run.TakeContext(ctx, call.Tool)
			if degraded {
				toolmw.SetDegraded(ctx, "run_budget")
			}
			if !ok {
				r.runRefused.Add(1)
				return toolmw.Result{}, runExhausted(last)
			}
		}
		if hasCall && n != call.Attempt {
			toolmw.SetAttempt(ctx, n)
		}
		if n == 1 && r.budget != nil {
			r.budget.Deposit()
		}
		res, err := r.next(ctx, args)
		if r.budget != nil && (err != nil || n > 1) {
			r.budget.Observe(budget.Attempt{Retry: n > 1, Outcome: outcome(err)})
		}
		if err == nil {
			return res, nil
		}
		last = err

		retryable, after := taxonomy.ShouldRetry(err, call.Idempotent)
		if !retryable || n >= r.maxAttempts {
			return res, taxonomy.Final(err, call.Idempotent)
		}
		if cerr := ctx.Err(); cerr == context.Canceled {
			return toolmw.Result{}, cerr
		}
		if after > r.ceiling(n) && isCircuitOpen(err) {
			// An open breaker answers at once; sleeping out its open period
			// would hold the call for nothing (see the package docs).
			return res, taxonomy.Final(err, call.Idempotent)
		}
		wait := max(r.backoff(n), after)
		if !budget.WaitFits(ctx, r.clock.Now(), wait) {
			return toolmw.Result{}, stopped(last, taxonomy.CodeWaitPastDeadline, msgPastDeadline, wait)
		}
		if after > r.maxWait {
			return toolmw.Result{}, stopped(last, taxonomy.CodeWaitTooLong, msgTooLong, wait)
		}
		if run != nil && run.Remaining(call.Tool) <= 0 {
			r.runRefused.Add(1)
			return toolmw.Result{}, runExhausted(last)
		}
		if r.budget != nil {
			ok, degraded := r.budget.TryRetryContext(ctx)
			if degraded {
				toolmw.SetDegraded(ctx, "retry_budget")
			}
			if !ok {
				r.budgetRefused.Add(1)
				return toolmw.Result{}, taxonomy.New(taxonomy.KindRetryBudgetExhausted,
					taxonomy.CodeRetryBudgetExhausted, msgNoBudget).WithCause(last)
			}
		}
		if err := r.sleep(ctx, wait, last); err != nil {
			return toolmw.Result{}, err
		}
	}
}

// ceiling returns the longest backoff of retry k: min(cap, base·2^(k-1)),
// held to maxWait.
func (r *retrier) ceiling(k int) time.Duration {
	ceil := r.cap
	if shift := k - 1; shift < 63 && r.base <= r.cap>>shift {
		ceil = r.base << shift
	}
	return min(ceil, r.maxWait)
}

// backoff returns the full-jitter backoff before retry k, a random duration
// in [0, ceiling(k)).
func (r *retrier) backoff(k int) time.Duration {
	ceil := r.ceiling(k)
	if ceil <= 0 {
		return 0
	}
	f := r.rand()
	if !(f > 0) { // also NaN
		return 0
	}
	if f >= 1 {
		return ceil - 1
	}
	return time.Duration(f * float64(ceil))
}

// outcome tells the retry budget how an attempt ended: overloaded when its
// error is a sign that the dependency, or the way to it, cannot take more
// load (see package budget). A caller's deadline and an open breaker are
// not: the first says nothing about the dependency, the second kept the
// attempt from reaching it.
func outcome(err error) budget.AttemptOutcome {
	if err == nil {
		return budget.Succeeded
	}
	te, ok := taxonomy.From(err)
	if !ok {
		return budget.Failed
	}
	switch te.Kind() {
	case taxonomy.KindTimeout:
		if te.Code() != taxonomy.CodeDeadlineExceeded {
			return budget.Overloaded
		}
	case taxonomy.KindRateLimited: // a limiter, a 429, a full bulkhead
		return budget.Overloaded
	case taxonomy.KindCircuitOpen:
	default:
		if te.Retryable() && te.RetryAfter() > 0 { // a push-back
			return budget.Overloaded
		}
	}
	return budget.Failed
}

// isCircuitOpen reports whether err says a breaker refused the call.
func isCircuitOpen(err error) bool {
	te, ok := taxonomy.From(err)
	return ok && te.Kind() == taxonomy.KindCircuitOpen
}

// sleep waits d on the layer's clock. A cancel returns the context's error
// as is; a deadline reached meanwhile (the clock and the context's timer
// disagreeing) fails closed as a wait past the deadline.
func (r *retrier) sleep(ctx context.Context, d time.Duration, last error) error {
	if d <= 0 {
		return nil
	}
	t := r.clock.NewTimer(d)
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		t.Stop()
		if err := ctx.Err(); err == context.Canceled {
			return err
		}
		return stopped(last, taxonomy.CodeWaitPastDeadline, msgPastDeadline, d)
	}
}

// stopped is the error of a wait that is not started: the last failure's
// kind, its own code, not retryable, wrapping the last failure.
func stopped(last error, code, msg string, wait time.Duration) error {
	return taxonomy.New(taxonomy.InfoOf(last).Kind, code, msg).
		WithCause(last).WithRetryable(false).WithRetryAfter(wait)
}

func runExhausted(last error) error {
	e := taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunAttemptsExhausted, msgRunExhausted)
	if last != nil {
		e = e.WithCause(last)
	}
	return e
}
