package fallback

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/resultcodec"
	"github.com/toolmw/toolmw/middleware/internal/resultkey"
	"github.com/toolmw/toolmw/store"
)

// WithStore keeps the last good results in s too, shared by every replica
// and every layer given the same store.Results — a cache's results
// included (cache.WithStore): both key a result by the same rule (the
// tool's name, the partition, the canonical arguments), so a result the
// cache kept is a last good result here, and the reverse. It needs
// [WithLastGood]. opts set how the layer uses s (store.WithTimeout,
// store.WithOnError; see package store).
//
// Each success of a read is written to s (Set, for the TTL of
// WithLastGood), one round trip after the tool answered, bounded by the
// store timeout; a result a cache layer inside served again is not. A
// result whose encoding is over store.MaxResultBytes, or that has more
// than 4096 parts, is kept in process only. A call that fails with a
// chosen kind is served the last good result in s (Get) if there is one
// at most the TTL old, else the process's own.
//
// When s fails or does not answer within the store timeout, the layer
// uses the process's own last good results, marks the call degraded
// (toolmw.Call.Degraded is "fallback"), reports the failure as a
// store.Error (Layer "fallback", Op "get" or "set", Key the result's key,
// a hash), and leaves s alone for store.Rest. A value in s that does not
// decode is taken for none and reported with an Err wrapping
// store.ErrCorrupt, without resting s. An invalid store option is
// invalid. nil means the process's own last good results only (the
// default).
func WithStore(s store.Results, opts ...store.Option) Option {
	return func(c *config) {
		cfg, err := store.NewConfig(opts...)
		if err != nil {
			c.reject("WithStore: %v", err)
		}
		c.store, c.storeCfg = s, cfg
	}
}

// layerName is the layer's name in store.Error and toolmw.Call.Degraded.
const layerName = "fallback"

// load looks k up in the store, through the guard: found says a result at
// most the TTL old from now was kept (made by another replica's clock, it
// may be ahead of this one's by up to the TTL). A store that failed, did
// not answer or rests marks the call degraded; a value that does not
// decode is reported.
func (l *layer) load(ctx context.Context, k resultkey.Key, now time.Time) (res toolmw.Result, made time.Time, found bool) {
	key := k.String()
	var value []byte
	var corrupt error
	local, end := l.guard.Ask(ctx, "get", key, func(sctx context.Context) (err error) {
		value, made, err = l.store.Get(sctx, key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			value, err = nil, nil
		case errors.Is(err, store.ErrCorrupt):
			corrupt, err = err, nil // an answer: the store is not to rest
		case err == nil && value == nil:
			value = []byte{}
		}
		return err
	})
	switch {
	case end != nil:
		return toolmw.Result{}, time.Time{}, false // the caller is gone
	case local:
		toolmw.SetDegraded(ctx, layerName)
		return toolmw.Result{}, time.Time{}, false
	case corrupt != nil:
		l.guard.Report("get", key, corrupt)
		return toolmw.Result{}, time.Time{}, false
	case value == nil:
		return toolmw.Result{}, time.Time{}, false
	}
	if age := now.Sub(made); age > l.ttl || age < -l.ttl {
		return toolmw.Result{}, time.Time{}, false
	}
	res, err := resultcodec.Decode(value)
	if err != nil {
		l.guard.Report("get", key, fmt.Errorf("fallback: the value kept does not decode: %w", err))
		return toolmw.Result{}, time.Time{}, false
	}
	if made.After(now) {
		made = now // ahead by another replica's clock: of age 0, never negative
	}
	return res, made, true
}

// save keeps res, made at made, in the store, through the guard, unless
// there is none, it rests, or res is over a stored result's bounds. The
// call's result is known: its cancellation does not stop the write, but
// its deadline still bounds it. A store that failed or did not answer
// marks the call degraded.
func (l *layer) save(ctx context.Context, k resultkey.Key, res toolmw.Result, made time.Time) {
	if l.guard == nil {
		return
	}
	if l.guard.Resting() {
		l.guard.Report("set", k.String(), store.ErrResting)
		toolmw.SetDegraded(ctx, layerName)
		return
	}
	value, err := resultcodec.Encode(res)
	if err != nil {
		return // over the bounds: kept in process only
	}
	sctx := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		sctx, cancel = context.WithDeadline(sctx, dl)
		defer cancel()
	}
	key := k.String()
	local, _ := l.guard.Ask(sctx, "set", key, func(sctx context.Context) error {
		return l.store.Set(sctx, key, value, made, l.ttl)
	})
	if local {
		toolmw.SetDegraded(ctx, layerName)
	}
}
