package hedge

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/internal/monotime"
	"github.com/toolmw/toolmw/middleware/internal/panicked"
	"github.com/toolmw/toolmw/middleware/internal/single"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the hedge layer. Each tool it wraps gets its own latency
// record and, unless [WithBudget] says otherwise, its own retry budget. An
// invalid option makes a [toolmw.Reject] middleware (see [Validate]).
func New(opts ...Option) toolmw.Middleware {
	cfg := newConfig(opts)
	if cfg.err != nil {
		return toolmw.Reject(cfg.err)
	}
	return func(next toolmw.Tool) toolmw.Tool {
		h := &hedger{config: cfg, next: next}
		if h.budget == nil {
			h.budget, h.deposits = budget.NewRetry(), true
		}
		if h.delay > 0 {
			h.current.Store(int64(h.delay))
		}
		state.Register(state.Default, h, publish)
		return h.call
	}
}

// The latency window: how many successful attempts the percentile is taken
// over, and how often (and from how many samples on) it is recomputed.
const (
	window  = 512
	refresh = 32
)

// Late is the outcome of an attempt that lost the race: what it returned
// after the call had been decided.
type Late struct {
	Call   toolmw.Call   // the call; zero when the tool was not Wrap'd
	Result toolmw.Result // what the attempt returned
	Err    error         // its error, or nil
	Panic  any           // the value it panicked with, or nil
	After  time.Duration // how long after the call was decided it returned
}

// hedger is the layer around one tool.
type hedger struct {
	config
	next     toolmw.Tool
	deposits bool // the budget is the layer's own: each call deposits

	losers  atomic.Int64 // losers still running
	current atomic.Int64 // the delay in force; 0: not yet known

	// For package state: the tool's name (nil until a hedgeable call),
	// the hedges started and the calls a hedge decided.
	name    state.Name
	started atomic.Uint64
	won     atomic.Uint64

	mu      sync.Mutex
	samples [window]time.Duration
	n       int // samples recorded, ever
}

// outcome is what one attempt returned.
type outcome struct {
	res    toolmw.Result
	err    error
	panic  any
	hedged bool
}

// race is one hedged call: its attempts deliver to done until the caller
// decides, and to the late callback after.
type race struct {
	mu        sync.Mutex
	decided   bool
	decidedAt time.Time
	running   int
	done      chan outcome // room for every attempt: never blocks
}

func (h *hedger) call(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	call, ok := toolmw.CallFrom(ctx)
	if !ok || !call.Idempotent {
		return h.next(ctx, args)
	}
	if _, limited := single.By(ctx); limited {
		// A layer outside bounds this call's executions (a run's call
		// limit, a spend reservation): a second execution beside the
		// first would go past what it admitted.
		return h.next(ctx, args)
	}
	h.name.Learn(call.Tool)
	if h.deposits {
		h.budget.Deposit()
	}
	delay := time.Duration(h.current.Load())
	if delay <= 0 { // no latency profile yet: learn from a plain call
		start := h.now()
		res, err := h.next(ctx, args)
		if err == nil {
			h.observe(h.now().Sub(start))
		}
		return res, err
	}

	r := &race{done: make(chan outcome, 2)}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	h.start(actx, r, call, args, false)
	timer := h.clock.NewTimer(delay)
	defer timer.Stop()
	var o outcome
	select {
	case o = <-r.done:
		return h.decide(r, call, o)
	case <-ctx.Done():
		return h.abandon(r, call, ctx.Err())
	case <-timer.C():
	}
	if h.mayHedge(ctx, call) {
		h.started.Add(1)
		h.start(actx, r, call, args, true)
	} else {
		select {
		case o = <-r.done:
			return h.decide(r, call, o)
		case <-ctx.Done():
			return h.abandon(r, call, ctx.Err())
		}
	}
	var first *outcome
	for range 2 {
		select {
		case o = <-r.done:
		case <-ctx.Done():
			return h.abandon(r, call, ctx.Err())
		}
		if o.err == nil || o.panic != nil {
			return h.decide(r, call, o)
		}
		// Both failed: the first failure is returned, unless it says
		// nothing happened and the other possibly ran (a timeout, a
		// reset): the call's outcome is then unknown, and the layers
		// outside must know it.
		if first == nil || taxonomy.NoEffect(first.err) && !taxonomy.NoEffect(o.err) {
			failed := o
			first = &failed
		}
	}
	return h.decide(r, call, *first)
}

// mayHedge reports whether a hedge may start, taking what it costs.
func (h *hedger) mayHedge(ctx context.Context, call toolmw.Call) bool {
	if h.losers.Load() >= int64(h.maxLosers) || ctx.Err() != nil {
		return false
	}
	if run, ok := budget.RunFrom(ctx); ok {
		ok, degraded := run.TakeContext(ctx, call.Tool)
		if degraded {
			toolmw.SetDegraded(ctx, "run_budget")
		}
		if !ok {
			return false
		}
	}
	ok, degraded := h.budget.TryRetryContext(ctx)
	if degraded {
		toolmw.SetDegraded(ctx, "retry_budget")
	}
	return ok
}

// start runs one attempt on a goroutine of its own.
func (h *hedger) start(ctx context.Context, r *race, call toolmw.Call, args json.RawMessage, hedged bool) {
	r.mu.Lock()
	r.running++
	r.mu.Unlock()
	go h.run(ctx, r, call, args, hedged)
}

// run calls the tool and delivers its outcome; the hand-off is deferred so
// a panic or runtime.Goexit is delivered too.
func (h *hedger) run(ctx context.Context, r *race, call toolmw.Call, args json.RawMessage, hedged bool) {
	o := outcome{hedged: hedged}
	returned := false
	start := h.now()
	defer func() {
		if !returned {
			if p := recover(); p != nil {
				o.panic = p
			} else {
				o.err = panicked.Exited
			}
		} else if o.err == nil {
			h.observe(h.now().Sub(start))
		}
		r.mu.Lock()
		r.running--
		if !r.decided {
			r.done <- o
			r.mu.Unlock()
			return
		}
		after := h.now().Sub(r.decidedAt)
		r.mu.Unlock()
		h.late(call, o, after)
		h.losers.Add(-1)
	}()
	o.res, o.err = h.next(ctx, args)
	returned = true
}

// decide ends the race with o: attempts that delivered meanwhile, and those
// still running when they return, are losers.
func (h *hedger) decide(r *race, call toolmw.Call, o outcome) (toolmw.Result, error) {
	for _, lost := range h.close(r) {
		h.late(call, lost, 0)
	}
	if o.hedged {
		h.won.Add(1)
	}
	if o.panic != nil {
		panic(o.panic)
	}
	return o.res, o.err
}

// abandon ends the race with the caller's error.
func (h *hedger) abandon(r *race, call toolmw.Call, err error) (toolmw.Result, error) {
	for _, lost := range h.close(r) {
		h.late(call, lost, 0)
	}
	return toolmw.Result{}, err
}

// close marks r decided and returns the outcomes delivered but not taken.
func (h *hedger) close(r *race) []outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.decided, r.decidedAt = true, h.now()
	h.losers.Add(int64(r.running))
	var left []outcome
	for {
		select {
		case o := <-r.done:
			left = append(left, o)
		default:
			return left
		}
	}
}

// publish reports h's hedges to package state.
func publish(h *hedger, emit state.Emit) {
	name := h.name.String()
	emit(state.HedgesStarted, name, "", float64(h.started.Load()))
	emit(state.HedgesWon, name, "", float64(h.won.Load()))
}

// now reads the layer's clock, for durations only: clock.System by the
// monotonic clock alone.
func (h *hedger) now() time.Time { return monotime.Of(h.clock) }

func (h *hedger) late(call toolmw.Call, o outcome, after time.Duration) {
	if h.onLate == nil {
		return
	}
	l := Late{Call: call, Result: o.res, Err: o.err, Panic: o.panic, After: after}
	if o.panic != nil {
		l.Err = panicked.Err
	}
	h.onLate(l)
}

// observe records the latency of a successful attempt and, every refresh
// samples, recomputes the delay.
func (h *hedger) observe(d time.Duration) {
	if h.delay > 0 {
		return
	}
	h.mu.Lock()
	h.samples[h.n%window] = d
	h.n++
	if h.n%refresh != 0 {
		h.mu.Unlock()
		return
	}
	s := slices.Clone(h.samples[:min(h.n, window)])
	h.mu.Unlock()
	slices.Sort(s)
	h.current.Store(int64(max(s[int(h.percentile*float64(len(s)-1))], 1)))
}
