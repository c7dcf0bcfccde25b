// Package resultshare is how the layers that answer from a result made
// before (cache, fallback) read and write a shared store.Results: through
// their store guard, with one keying rule (resultkey) and one codec
// (resultcodec), so that what one writes the other reads.
package resultshare

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/middleware/internal/resultcodec"
	"github.com/toolmw/toolmw/middleware/internal/resultkey"
	"github.com/toolmw/toolmw/store"
)

// Shared is a layer's store of results and its guard. Layer names the
// layer in store.Error and toolmw.Call.Degraded.
type Shared struct {
	Store store.Results
	Guard *storeguard.Guard
	Layer string
}

// Load looks k up in the store, through the guard: found says a result at
// most ttl old from now was kept (made by another replica's clock, it may
// be ahead of this one's by up to ttl), end that the call's own context
// ended while the store was asked. A store that failed, did not answer or
// rests marks the call degraded; a value that does not decode is
// reported, without resting the store, and found is false.
func (s *Shared) Load(ctx context.Context, k resultkey.Key, now time.Time, ttl time.Duration) (res toolmw.Result, made time.Time, found bool, end error) {
	key := k.String()
	var value []byte
	var corrupt error
	local, end := s.Guard.Ask(ctx, "get", key, func(sctx context.Context) (err error) {
		value, made, err = s.Store.Get(sctx, key)
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
		toolmw.SetDegraded(ctx, s.Layer)
		return toolmw.Result{}, time.Time{}, false, nil
	case corrupt != nil:
		s.Guard.Report("get", key, corrupt)
		return toolmw.Result{}, time.Time{}, false, nil
	case value == nil:
		return toolmw.Result{}, time.Time{}, false, nil
	}
	if age := now.Sub(made); age > ttl || age < -ttl {
		return toolmw.Result{}, time.Time{}, false, nil
	}
	res, err := resultcodec.Decode(value)
	if err != nil {
		s.Guard.Report("get", key, fmt.Errorf("%s: the value kept does not decode: %w", s.Layer, err))
		return toolmw.Result{}, time.Time{}, false, nil
	}
	if made.After(now) {
		made = now // ahead by another replica's clock: of age 0, never negative
	}
	return res, made, true, nil
}

// Save keeps res, made at made, in the store for ttl, through the guard,
// unless res is over a stored result's bounds (it is kept in process
// only). While the store rests, nothing is written; the rest is reported
// and the call marked degraded unless reported says the call's lookup
// reported it already. The call's result is known: its cancellation does
// not stop the write, but its deadline still bounds it. A store that
// failed or did not answer marks the call degraded.
func (s *Shared) Save(ctx context.Context, k resultkey.Key, res toolmw.Result, made time.Time, ttl time.Duration, reported bool) {
	if s.Guard.Resting() {
		if !reported {
			s.Guard.Report("set", k.String(), store.ErrResting)
			toolmw.SetDegraded(ctx, s.Layer)
		}
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
	local, _ := s.Guard.Ask(sctx, "set", key, func(sctx context.Context) error {
		return s.Store.Set(sctx, key, value, made, ttl)
	})
	if local {
		toolmw.SetDegraded(ctx, s.Layer)
	}
}
