package fallback

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/middleware/internal/panicked"
	"github.com/toolmw/toolmw/middleware/internal/partinfo"
	"github.com/toolmw/toolmw/middleware/internal/resultkey"
	"github.com/toolmw/toolmw/middleware/internal/resultlru"
	"github.com/toolmw/toolmw/middleware/internal/resultnote"
	"github.com/toolmw/toolmw/middleware/internal/resultshare"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the fallback layer. Each tool it wraps gets its own cache of
// last good results. With neither [WithFunc] nor [WithLastGood] it has
// nothing to serve and returns each tool unchanged. An invalid option, or
// WithLastGood without a choice of [WithPartition] or [WithSharedResults],
// makes a [toolmw.Reject] middleware (see [Validate]).
//
// The Middleware and the Tools it makes are safe for concurrent use.
func New(opts ...Option) toolmw.Middleware {
	cfg := newConfig(opts)
	if cfg.err != nil {
		return toolmw.Reject(cfg.err)
	}
	var shared *resultshare.Shared
	if cfg.store != nil {
		// One guard per layer: the store rests for all its tools.
		shared = &resultshare.Shared{Store: cfg.store, Layer: layerName,
			Guard: storeguard.New(layerName, cfg.storeCfg, false, cfg.clk)}
	}
	return func(next toolmw.Tool) toolmw.Tool {
		if cfg.fn == nil && !cfg.lastGood {
			return next
		}
		l := &layer{config: &cfg, next: next, shared: shared}
		if cfg.lastGood {
			l.kept = resultlru.New(cfg.maxEntries, cfg.maxBytes)
			l.rule = resultkey.Rule{Partition: cfg.partition}
		}
		state.Register(state.Default, l, publish)
		return l.call
	}
}

// Defaults and fixed bounds of the layer.
const (
	// DefaultTTL is how long a last good result may be served when
	// WithLastGood is given 0.
	DefaultTTL = 5 * time.Minute
	// DefaultMaxEntries is how many last good results are kept per tool.
	DefaultMaxEntries = 256
	// DefaultMaxBytes is how many bytes of results are kept per tool,
	// content and parts (toolmw.Result.Size); a result larger than the
	// bound is not kept.
	DefaultMaxBytes = 1 << 20
	// MaxArgsBytes is the largest arguments a last good result is kept or
	// looked up for: larger ones are not canonicalised (that costs their
	// size in time and memory on every success), so such calls are neither
	// remembered nor served from the cache. A function fallback still
	// applies to them.
	MaxArgsBytes = resultkey.MaxArgs
)

// Func makes a substitute result for a call that failed with err, one of
// the chosen kinds. It receives the call's context, its Call, its
// arguments (do not modify them) and the error. Its result is marked as a
// fallback before it reaches the caller; its error is returned as it is, in
// place of err (return err itself to decline). A panic in it becomes
// tool-failed/tool_panicked; runtime.Goexit is not stopped.
//
// A Func must be safe for concurrent use.
type Func func(ctx context.Context, call toolmw.Call, args json.RawMessage, err error) (toolmw.Result, error)

// Event reports a call served a fallback, to the callback of [WithOnServe].
// It carries no error text and no arguments: only the kind and code of the
// error replaced (as [taxonomy.InfoOf] reports them), which are safe for
// logs and metrics.
type Event struct {
	Tool   string        // the tool's name
	CallID string        // the model's call id, as toolmw.SafeCallID makes it; may be ""
	Mark   Mark          // what the result was marked with
	Time   time.Time     // when it was served, by the layer's clock
	Age    time.Duration // for SourceLastGood, the age of the result served, unrounded
}

// DefaultKinds returns the kinds a fallback replaces when WithKinds is not
// given: the dependency is unavailable (circuit-open), the call was not
// admitted (rate-limited), or it did not answer in time (tool-timeout).
// It returns a new slice each time and is safe for concurrent use.
func DefaultKinds() []taxonomy.Kind {
	return []taxonomy.Kind{taxonomy.KindCircuitOpen, taxonomy.KindRateLimited, taxonomy.KindTimeout}
}

// never are the kinds no fallback may replace: answers (a refusal, bad
// arguments, a denial), the caller's own cancellation, errors of the
// definition, and the run's limit, which tells the loop to stop.
var never = map[taxonomy.Kind]string{
	taxonomy.KindRefused:           "a refusal is the tool's answer",
	taxonomy.KindArgsInvalid:       "bad arguments are the model's to fix",
	taxonomy.KindNotPermitted:      "a denial is an answer",
	taxonomy.KindCancelled:         "the caller is gone",
	taxonomy.KindDefinitionInvalid: "a definition error is the program's to fix",
	taxonomy.KindDuplicateTool:     "a definition error is the program's to fix",
	taxonomy.KindRunLimitExceeded:  "the run's limit tells the loop to stop",
	taxonomy.KindApprovalPending:   "the call waits for a person's decision",
	taxonomy.KindApprovalDenied:    "a reviewer's no is an answer",
	taxonomy.KindBudgetExceeded:    "the run's spend limit tells the loop to stop",
	taxonomy.KindGuardrailBlocked:  "a guardrail's block must not be worked around",
}

type layer struct {
	*config
	next   toolmw.Tool
	kept   *resultlru.Cache    // nil without WithLastGood
	rule   resultkey.Rule      // how a last good result is keyed
	shared *resultshare.Shared // nil without WithStore

	// For package state: the tool's name, from its first call, and the
	// substitutes served, by source.
	name                   state.Name
	servedLast, servedFunc atomic.Int64
}

// publish reports the substitutes l served to package state.
func publish(l *layer, emit state.Emit) {
	name := l.name.String()
	if l.kept != nil {
		emit(state.FallbacksServed, name, string(SourceLastGood), float64(l.servedLast.Load()))
	}
	if l.fn != nil {
		emit(state.FallbacksServed, name, string(SourceFunc), float64(l.servedFunc.Load()))
	}
}

func (l *layer) call(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	call, _ := toolmw.CallFrom(ctx)
	l.name.Learn(call.Tool)
	// Only a read is remembered and served: Call.Idempotent is also true of
	// a tool that honours keys, which acts.
	read := l.kept != nil && call.Spec != nil && call.Spec.Idempotent && len(args) <= MaxArgsBytes
	inner := ctx
	var note *resultnote.Note
	if read {
		inner, note = resultnote.Watch(ctx) // a cache inside says when it served a kept result
	}
	res, err := l.next(inner, args)
	if err == nil {
		if read {
			l.remember(ctx, call, args, res, note)
		}
		return res, err
	}
	kind, code, ok := l.replaces(ctx, err)
	if !ok {
		return res, err
	}
	if read {
		now := l.clk.Now()
		if good, at, found := l.lastGood(ctx, call, args, now); found {
			age := max(now.Sub(at), 0) // a clock set back reads as fresh, never negative
			m := Mark{Source: SourceLastGood, Kind: kind, Code: code, Age: age.Truncate(time.Second)}
			l.served(ctx, call, m, now, age)
			return markResult(partinfo.Clone(good), m), nil // a copy: no caller changes what is kept
		}
	}
	if l.fn == nil {
		return res, err
	}
	sub, ferr := l.substitute(ctx, call, args, err)
	if ferr != nil {
		return toolmw.Result{}, ferr // one outcome: the function's error, no content
	}
	m := Mark{Source: SourceFunc, Kind: kind, Code: code}
	l.served(ctx, call, m, l.clk.Now(), 0)
	return markResult(sub, m), nil
}

// replaces reports whether err is one a fallback may replace for a caller
// still waiting, and its kind and code as taxonomy.InfoOf normalises them.
func (l *layer) replaces(ctx context.Context, err error) (taxonomy.Kind, string, bool) {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return "", "", false // the caller is gone: nobody to serve
	}
	te, ok := taxonomy.From(err)
	if ok && te.Kind() == taxonomy.KindTimeout && te.Code() == taxonomy.CodeDeadlineExceeded {
		return "", "", false // the caller's own deadline
	}
	info := taxonomy.InfoOf(err)
	if !l.kinds[info.Kind] {
		return "", "", false
	}
	return info.Kind, info.Code, true
}

// substitute runs the fallback function, containing a panic.
func (l *layer) substitute(ctx context.Context, call toolmw.Call, args json.RawMessage, err error) (res toolmw.Result, ferr error) {
	defer func() {
		if r := recover(); r != nil {
			res, ferr = toolmw.Result{}, panicked.Err
		}
	}()
	return l.fn(ctx, call, args, err)
}

// served records the substitute in the call (toolmw.SetFallback), for the
// observers outside, and reports it to the WithOnServe callback.
func (l *layer) served(ctx context.Context, call toolmw.Call, m Mark, now time.Time, age time.Duration) {
	if m.Source == SourceLastGood {
		l.servedLast.Add(1)
	} else {
		l.servedFunc.Add(1)
	}
	toolmw.SetFallback(ctx, string(m.Source))
	if l.onServe == nil {
		return
	}
	defer func() { _ = recover() }() // a panicking callback is dropped
	l.onServe(Event{Tool: call.Tool, CallID: call.ID, Mark: m, Time: now, Age: age})
}
