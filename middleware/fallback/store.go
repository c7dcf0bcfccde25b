package fallback

import "github.com/toolmw/toolmw/store"

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
