package runlimit

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/runstate"
	"github.com/toolmw/toolmw/middleware/internal/single"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the per-run call limit layer: each tool named by [Once] or
// [Max] may be called that many times in one run; other tools pass
// through untouched, and without any limit the layer is switched off. An
// invalid option makes a [toolmw.Reject] middleware (see [Validate]).
//
// The Middleware and the Tools it makes are safe for concurrent use; the
// Tools it wraps share its counts (calls are counted by tool name).
func New(opts ...Option) toolmw.Middleware {
	cfg := newConfig(opts)
	if cfg.err != nil {
		return toolmw.Reject(cfg.err)
	}
	if len(cfg.limits) == 0 {
		return func(next toolmw.Tool) toolmw.Tool { return next }
	}
	l := &layer{limits: cfg.limits, refusals: map[string]*taxonomy.ToolError{}, refused: map[string]*atomic.Uint64{}}
	if cfg.store.Store != nil {
		l.shared = newShared(cfg.store)
	}
	for tool, n := range cfg.limits {
		msg := fmt.Sprintf("this tool may be called at most %d times in one run, and this run has made them; nothing ran", n)
		if n == 1 {
			msg = "this tool may be called once in one run, and this run has made that call; nothing ran"
		}
		l.refusals[tool] = taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunCallLimit, msg).WithFinal()
		l.refused[tool] = new(atomic.Uint64)
	}
	state.Register(state.Default, l, publish)
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			return l.call(ctx, next, args)
		}
	}
}

// MaxCalls is the largest limit [Max] accepts: far above any number of
// calls one agent run makes, small enough that a count never overflows.
const MaxCalls = 1 << 20

// Once declares that the tool named may be called once per run: the
// limit of a tool that books, pays or cancels. It is Max(tool, 1).
func Once(tool string) Option { return Max(tool, 1) }

// Max declares that the tool named may be called at most n times per run
// (calls, not attempts: see the package documentation). n must be 1 to
// [MaxCalls], and tool a valid tool name ([toolmw.ValidName]); naming a
// tool twice with different limits is invalid too.
func Max(tool string, n int) Option {
	return func(c *config) {
		switch {
		case !toolmw.ValidName(tool):
			c.reject("Max(%q, %d): not a tool name", tool, n)
		case n < 1 || n > MaxCalls:
			c.reject("Max(%q, %d): the limit must be 1 to %d calls per run", tool, n, MaxCalls)
		case c.limits[tool] != 0 && c.limits[tool] != n:
			c.reject("Max(%q, %d): the tool already has a limit of %d", tool, n, c.limits[tool])
		default:
			if c.limits == nil {
				c.limits = map[string]int{}
			}
			c.limits[tool] = n
		}
	}
}

// errNoRun ends a limited call that carries no run: there is nothing to
// count it in, and counting it per process would let a long-lived process
// refuse a tool forever, so it fails closed.
var errNoRun = taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunCallLimit,
	"this tool may be called only a limited number of times per run, and the call carries no run to count it in; nothing ran").WithFinal()

type layer struct {
	limits   map[string]int                 // read-only after New
	refusals map[string]*taxonomy.ToolError // read-only after New
	refused  map[string]*atomic.Uint64      // calls refused, for package state; the map is read-only after New
	runs     runstate.Slot[counts]
	shared   *shared // nil without a Store
}

// refuse counts a refusal of tool and returns its error.
func (l *layer) refuse(tool string) error {
	l.refused[tool].Add(1)
	return l.refusals[tool]
}

// publish reports l's refusals to package state.
func publish(l *layer, emit state.Emit) {
	for tool, n := range l.refused {
		emit(state.RunLimitRefusals, tool, "", float64(n.Load()))
	}
}

// counts is one run's calls per limited tool: admitted ones, finished or in
// flight.
type counts struct {
	mu   sync.Mutex
	used map[string]int
}

func newCounts() *counts { return &counts{used: map[string]int{}} }

func (l *layer) call(ctx context.Context, next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	call, _ := toolmw.CallFrom(ctx)
	limit, limited := l.limits[call.Tool]
	if !limited {
		return next(ctx, args)
	}
	run, ok := budget.RunFrom(ctx)
	if !ok {
		l.refused[call.Tool].Add(1)
		return toolmw.Result{}, errNoRun
	}
	// An admitted call is one execution at a time: a hedge layer inside
	// does not start a second one beside it.
	ctx = single.Mark(ctx, "runlimit")
	if l.shared != nil && run.ID() != "" {
		return l.sharedCall(ctx, run.ID(), call.Tool, limit, next, args)
	}
	return l.localCall(ctx, l.runs.Get(run, newCounts), call.Tool, limit, next, args)
}

// localCall counts a call in c, the run's counts in this process, and runs
// next.
func (l *layer) localCall(ctx context.Context, c *counts, tool string, limit int,
	next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	if !c.take(tool, limit) {
		return toolmw.Result{}, l.refuse(tool)
	}
	// A panic or runtime.Goexit keeps the slot: the tool ran.
	attempt := attemptOf(ctx)
	res, err := next(ctx, args)
	if noEffect(ctx, attempt, err) {
		c.giveBack(tool)
	}
	return res, err
}

// take admits one call of tool if the run has not used its limit.
func (c *counts) take(tool string, limit int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used[tool] >= limit {
		return false
	}
	c.used[tool]++
	return true
}

// full reports whether the run has used its limit of tool.
func (c *counts) full(tool string, limit int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used[tool] >= limit
}

// add counts one call of tool that the Store admitted.
func (c *counts) add(tool string) {
	c.mu.Lock()
	c.used[tool]++
	c.mu.Unlock()
}

func (c *counts) giveBack(tool string) {
	c.mu.Lock()
	c.used[tool]--
	c.mu.Unlock()
}

// noEffect reports whether a call that started at attempt and ended in
// err is known to have had no effect, so its slot goes back to the run:
// taxonomy.NoEffect says so of err (the tool was not started, or a typed
// error's maker vouches that nothing landed; a timeout, a reset, a
// cancellation, an untyped error, a panic and a success possibly ran), and
// no earlier attempt may have had one. A retry layer inside this one
// repeats an idempotent call (one whose tool is idempotent or honours
// idempotency keys) after a timeout or a reset, whose outcome is unknown,
// and its last error speaks for the last attempt only: such a call that
// took more than one attempt keeps its slot. A call that is not idempotent
// is repeated only after an error that its maker made retryable for it,
// vouching that nothing landed.
func noEffect(ctx context.Context, attempt int, err error) bool {
	if !taxonomy.NoEffect(err) {
		return false
	}
	call, ok := toolmw.CallFrom(ctx)
	return !ok || call.Attempt == attempt || !call.Idempotent
}

// attemptOf returns the attempt the call carried by ctx is at, or 0.
func attemptOf(ctx context.Context) int {
	call, _ := toolmw.CallFrom(ctx)
	return call.Attempt
}
