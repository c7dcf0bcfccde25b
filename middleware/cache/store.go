package cache

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

// load looks k up in the store, through the guard: found says a result at
// most ttl old from now was kept (made by another replica's clock, it may
// be ahead of this one's by up to ttl), end that the call's own context
// ended while the store was asked. A store that failed, did not answer or
// rests marks the call degraded; a value that does not decode is
// reported, and the call misses.
func (l *layer) load(ctx context.Context, k resultkey.Key, now time.Time) (res toolmw.Result, made time.Time, found bool, end error) {
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
		return toolmw.Result{}, time.Time{}, false, end
	case local:
		toolmw.SetDegraded(ctx, layerName)
		return toolmw.Result{}, time.Time{}, false, nil
	case corrupt != nil:
		l.guard.Report("get", key, corrupt)
		return toolmw.Result{}, time.Time{}, false, nil
	case value == nil:
		return toolmw.Result{}, time.Time{}, false, nil
	}
	if age := now.Sub(made); age > l.ttl || age < -l.ttl {
		return toolmw.Result{}, time.Time{}, false, nil
	}
	res, err := resultcodec.Decode(value)
	if err != nil {
		l.guard.Report("get", key, fmt.Errorf("cache: the value kept does not decode: %w", err))
		return toolmw.Result{}, time.Time{}, false, nil
	}
	if made.After(now) {
		made = now // ahead by another replica's clock: fresh, never of a negative age
	}
	return res, made, true, nil
}

// save keeps res, made at made, in the store, through the guard, unless
// it rests (the call's lookup reported it) or res is over a stored
// result's bounds. The call's result is known: its cancellation does not
// stop the write, but its deadline still bounds it. A store that failed
// or did not answer marks the call degraded.
func (l *layer) save(ctx context.Context, k resultkey.Key, res toolmw.Result, made time.Time) {
	if l.guard == nil || l.guard.Resting() {
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
