package cache

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/middleware/internal/partinfo"
	"github.com/toolmw/toolmw/middleware/internal/resultkey"
	"github.com/toolmw/toolmw/middleware/internal/resultlru"
	"github.com/toolmw/toolmw/middleware/internal/resultnote"
	"github.com/toolmw/toolmw/middleware/internal/resultshare"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the cache layer: a call of a read (a tool whose Spec
// declares it Idempotent) is answered with a result kept for the same
// tool, partition and arguments, at most ttl old, without calling the
// tool; a miss calls it and keeps its success. ttl 0 turns the layer off:
// it returns each tool unchanged. Each tool it wraps gets its own results
// in process; [WithStore] shares them. A negative ttl, an invalid option,
// or neither (or both) of [WithPartition] and [WithSharedResults] makes a
// [toolmw.Reject] middleware (see [Validate]).
//
// The Middleware and the Tools it makes are safe for concurrent use.
func New(ttl time.Duration, opts ...Option) toolmw.Middleware {
	cfg := newConfig(ttl, opts)
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
		if ttl == 0 {
			return next
		}
		l := &layer{config: &cfg, next: next, rule: resultkey.Rule{Partition: cfg.partition},
			kept: resultlru.New(cfg.maxEntries, cfg.maxBytes), shared: shared, flights: map[resultkey.Key]*flight{}}
		state.Register(state.Default, l, publish)
		return l.call
	}
}

// layerName is the layer's name in store.Error and toolmw.Call.Degraded.
const layerName = "cache"

// Defaults and bounds of the layer.
const (
	// DefaultMaxEntries is how many results are kept in process per tool.
	DefaultMaxEntries = 256
	// DefaultMaxBytes is how many bytes of results are kept in process per
	// tool.
	DefaultMaxBytes = 1 << 20
	// MaxArgsBytes is the longest arguments a result is kept or looked up
	// for: longer ones are not canonicalised, and such calls are a
	// [Bypass].
	MaxArgsBytes = resultkey.MaxArgs
)

// Outcome is what a lookup found.
type Outcome string

// The outcomes of a lookup.
const (
	// Hit: the call was served a kept result; the tool was not called.
	Hit Outcome = "hit"
	// Miss: no result fresh enough was kept; the tool was called, and its
	// success kept.
	Miss Outcome = "miss"
	// Bypass: the call has no key, so it was not looked up and its result
	// not kept: its arguments are over MaxArgsBytes or have no canonical
	// form, or its partition is "" or could not be had. The tool was
	// called.
	Bypass Outcome = "bypass"
)

// Source is where a hit came from.
type Source string

// The sources of a hit.
const (
	SourceMemory   Source = "memory"    // the process's own results
	SourceStore    Source = "store"     // the store of WithStore
	SourceInFlight Source = "in_flight" // a call of the same key under way when this one missed, which this one waited for
)

// Lookup reports a lookup of a call to the callback of [WithOnLookup]. It
// carries no arguments, no partition and no result: it is safe for logs
// and metrics.
type Lookup struct {
	Tool    string        // the tool's name
	CallID  string        // the model's call id, as toolmw.SafeCallID makes it; may be ""
	Outcome Outcome       // hit, miss or bypass
	Source  Source        // for a Hit, where the result came from; "" otherwise
	Age     time.Duration // for a Hit, the age of the result served (0 or more)
	Time    time.Time     // when the call was looked up, by the layer's clock
}

type layer struct {
	*config
	next   toolmw.Tool
	rule   resultkey.Rule
	kept   *resultlru.Cache
	shared *resultshare.Shared // nil without a store

	mu      sync.Mutex
	flights map[resultkey.Key]*flight // the misses under way, by key

	// For package state: the tool's name, from its first read, and the
	// hits and misses counted.
	name         state.Name
	hits, misses atomic.Int64
}

// publish reports l's hits and misses to package state.
func publish(l *layer, emit state.Emit) {
	name := l.name.String()
	emit(state.CacheHits, name, "", float64(l.hits.Load()))
	emit(state.CacheMisses, name, "", float64(l.misses.Load()))
}

// A flight is a miss under way: the calls of the same key that miss
// meanwhile wait for it instead of calling the tool too.
type flight struct {
	done chan struct{} // closed when the first call is decided
	res  toolmw.Result // what it kept, when ok; read after done
	made time.Time
	ok   bool // it was served or made a result that was kept
}

func (l *layer) call(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	call, _ := toolmw.CallFrom(ctx)
	// Only a read is served: Call.Idempotent is also true of a tool that
	// honours keys, which acts, and whose result is a receipt.
	if call.Spec == nil || !call.Spec.Idempotent {
		return l.next(ctx, args)
	}
	l.name.Learn(call.Tool)
	now := l.clk.Now()
	k, ok := l.rule.Of(ctx, call, args)
	if !ok {
		l.report(ctx, call, Lookup{Outcome: Bypass, Time: now})
		return l.next(ctx, args)
	}
	if res, made, ok := l.kept.Get(k, now, l.ttl); ok {
		return l.hit(ctx, call, res, made, SourceMemory, now), nil
	}
	l.mu.Lock()
	f, waiting := l.flights[k]
	if !waiting {
		f = &flight{done: make(chan struct{})}
		l.flights[k] = f
	}
	l.mu.Unlock()
	if waiting {
		return l.wait(ctx, call, args, f, now)
	}
	return l.lead(ctx, call, args, k, f, now)
}

// lead decides the flight f of k: the store's result, or the tool's. The
// calls waiting for it are released however it ends, a panic included.
func (l *layer) lead(ctx context.Context, call toolmw.Call, args json.RawMessage, k resultkey.Key, f *flight, now time.Time) (res toolmw.Result, err error) {
	defer func() {
		l.mu.Lock()
		delete(l.flights, k)
		l.mu.Unlock()
		close(f.done)
	}()
	if l.shared != nil {
		kept, made, found, end := l.shared.Load(ctx, k, now, l.ttl)
		if end != nil {
			return toolmw.Result{}, end
		}
		if found {
			l.kept.Put(k, kept, made)
			f.res, f.made, f.ok = kept, made, true
			return l.hit(ctx, call, kept, made, SourceStore, now), nil
		}
	}
	res, err = l.next(ctx, args)
	if err != nil {
		l.report(ctx, call, Lookup{Outcome: Miss, Time: now})
		return res, err
	}
	// A substitute a fallback inside served is no result of the tool's;
	// one a cache inside served is kept already.
	after, _ := toolmw.CallFrom(ctx)
	if after.Fallback == "" && l.kept.Fits(res) {
		made := l.clk.Now()
		l.kept.Put(k, res, made)
		if l.shared != nil {
			l.shared.Save(ctx, k, res, made, l.ttl, true) // the lookup reported a rest
		}
		f.res, f.made, f.ok = partinfo.Clone(res), made, true
	}
	l.report(ctx, call, Lookup{Outcome: Miss, Time: now})
	return res, nil
}

// wait waits for the flight f, or for ctx: the call is served what f
// kept, or, when f kept nothing (the tool failed, the result was not
// kept), calls the tool itself.
func (l *layer) wait(ctx context.Context, call toolmw.Call, args json.RawMessage, f *flight, now time.Time) (toolmw.Result, error) {
	select {
	case <-f.done:
	case <-ctx.Done():
		if ctx.Err() == context.DeadlineExceeded {
			return toolmw.Result{}, errWaitDeadline
		}
		return toolmw.Result{}, ctx.Err()
	}
	if !f.ok {
		res, err := l.next(ctx, args)
		l.report(ctx, call, Lookup{Outcome: Miss, Time: now})
		return res, err
	}
	return l.hit(ctx, call, f.res, f.made, SourceInFlight, l.clk.Now()), nil
}

// errWaitDeadline ends a call whose own deadline passed while it waited
// for a call of the same key under way.
var errWaitDeadline = taxonomy.Timeout(taxonomy.CodeDeadlineExceeded,
	"the caller's deadline passed while the call waited for the same call under way", false).
	WithCause(context.DeadlineExceeded)

// hit returns a copy of the kept result res, made at made, and reports
// the hit; an outer fallback learns that it is no new result.
func (l *layer) hit(ctx context.Context, call toolmw.Call, res toolmw.Result, made time.Time, src Source, now time.Time) toolmw.Result {
	resultnote.Served(ctx, made)
	l.report(ctx, call, Lookup{Outcome: Hit, Source: src, Age: max(now.Sub(made), 0), Time: now})
	return partinfo.Clone(res) // a copy: no caller changes what is kept
}

// report notes lk's outcome in the call record, for the observers outside
// (toolmw.SetCache), and gives lk, completed with the call's names, to the
// callback.
func (l *layer) report(ctx context.Context, call toolmw.Call, lk Lookup) {
	switch lk.Outcome {
	case Hit:
		l.hits.Add(1)
	case Miss:
		l.misses.Add(1)
	}
	toolmw.SetCache(ctx, string(lk.Outcome))
	if l.onLookup == nil {
		return
	}
	lk.Tool, lk.CallID = call.Tool, call.ID
	defer func() { _ = recover() }() // a panicking callback is dropped
	l.onLookup(lk)
}
