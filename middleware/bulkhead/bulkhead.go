package bulkhead

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/monotime"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns a layer that lets at most n executions of each tool it wraps
// run at once (or of a shared pool, see [WithShared]). n == 0 without a
// pool switches the layer off. An invalid value makes a [toolmw.Reject]
// middleware (see [Validate]).
func New(n int, opts ...Option) toolmw.Middleware {
	if err := Validate(n, opts...); err != nil {
		return toolmw.Reject(err)
	}
	cfg := newConfig(opts)
	msg := "the tool's concurrency limit had no free slot in time"
	if cfg.maxWait > 0 {
		msg = fmt.Sprintf("the tool's concurrency limit had no free slot within %v", cfg.maxWait)
	}
	return func(next toolmw.Tool) toolmw.Tool {
		p := cfg.shared
		if p == nil {
			if n == 0 {
				return next
			}
			p = newPool(n, cfg)
		}
		l := &layer{pool: p, maxWait: cfg.maxWait, full: taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeBulkheadFull, msg), next: next,
			named: cfg.shared != nil} // a shared pool serves many tools: it keeps no tool's name
		return l.call
	}
}

type layer struct {
	pool    *Pool
	maxWait time.Duration
	full    *taxonomy.ToolError
	next    toolmw.Tool
	named   bool // the pool is shared, or has its tool's name
}

const msgDeadline = "the caller's deadline passed while the call waited for a slot"

func (l *layer) call(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	if !l.named && !l.pool.name.IsSet() {
		if call, ok := toolmw.CallFrom(ctx); ok {
			l.pool.name.Learn(call.Tool)
		}
	}
	if err := l.pool.acquire(ctx, l.maxWait); err != nil {
		switch err {
		case errFull:
			l.pool.refused.Add(1)
			return toolmw.Result{}, l.full
		case context.DeadlineExceeded:
			return toolmw.Result{}, taxonomy.Timeout(taxonomy.CodeDeadlineExceeded, msgDeadline, false).WithCause(err)
		}
		return toolmw.Result{}, err
	}
	if l.pool.adaptive == nil {
		defer l.pool.release()
		return l.next(ctx, args)
	}
	start := monotime.Of(l.pool.clock)
	var err error
	defer func() { l.pool.releaseAfter(monotime.Of(l.pool.clock).Sub(start), err) }()
	var res toolmw.Result
	res, err = l.next(ctx, args)
	return res, err
}
