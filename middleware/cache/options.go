package cache

import (
	"context"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// An Option configures the cache layer.
type Option func(*config)

type config struct {
	ttl        time.Duration
	partition  func(context.Context, toolmw.Call) string
	shared     bool // WithSharedResults: every caller shares the results
	maxEntries int
	maxBytes   int
	clk        clock.Clock
	onLookup   func(Lookup)
	store      store.Results
	storeCfg   store.Config
	err        error
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("cache: "+format, args...))
	}
}

// WithPartition keeps the results of each partition apart: part returns
// the partition of a call (a tenant, a user, from its context), and a
// result made in one partition is never served in another. A call whose
// partition is "" (no caller known) is neither kept nor served: "" is not
// a partition every unknown caller shares. The partition is hashed into
// the key, never kept. part runs on every call of a read and must be
// quick; if it panics, the call is neither kept nor served. A nil part is
// invalid unless [WithSharedResults] is given instead.
func WithPartition(part func(ctx context.Context, call toolmw.Call) string) Option {
	return func(c *config) { c.partition = part }
}

// WithSharedResults is the explicit choice of one partition: every caller
// of a tool shares its results for the same arguments. Choose it only for
// tools whose answer depends on nothing but their arguments (a flight
// schedule, an exchange rate), never for one that answers from who asks
// (a balance, an account's details): use [WithPartition] for those.
// Giving both is invalid.
func WithSharedResults() Option {
	return func(c *config) { c.shared = true }
}

// WithMaxEntries bounds the results kept in process per tool (default
// [DefaultMaxEntries]); the one used least recently is dropped first. 0
// means the default; a negative n is invalid.
func WithMaxEntries(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.reject("WithMaxEntries(%d): the bound must not be negative", n)
			return
		}
		c.maxEntries = n
	}
}

// WithMaxBytes bounds the bytes of results kept in process per tool
// (default [DefaultMaxBytes]), each counting its content and parts
// (toolmw.Result.Size) and an overhead (see the package documentation):
// the results used least recently are dropped to make room, and a result
// larger than n is not kept. 0 means the default; a negative n is
// invalid.
func WithMaxBytes(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.reject("WithMaxBytes(%d): the bound must not be negative", n)
			return
		}
		c.maxBytes = n
	}
}

// WithClock gives the layer its clock, for the age of kept results. nil
// means [clock.System].
func WithClock(clk clock.Clock) Option {
	return func(c *config) { c.clk = clk }
}

// WithOnLookup calls f for each call of a read the layer looked up (or
// could not: [Bypass]), on the caller's goroutine, under no lock of the
// layer, once the call's outcome is known: a hit before it is returned, a
// miss after the tool answered. A panic in f is dropped. nil means no
// callback.
func WithOnLookup(f func(Lookup)) Option {
	return func(c *config) { c.onLookup = f }
}

// WithStore keeps results in s too, shared by every replica and every
// layer given the same store.Results — a fallback's last good results
// included (fallback.WithStore): both key a result by the same rule —
// and uses s as opts say (store.WithTimeout, store.WithOnError; see
// package store). A call first looks in the process's own results, then
// in s; a miss that succeeds is kept in both, in s for the layer's TTL.
// A result whose encoding is over store.MaxResultBytes, or that has more
// than 4096 parts, is kept in process only.
//
// The cache fails open: when s fails or does not answer within the store
// timeout, the call is a miss (the tool is called) and is marked degraded
// (toolmw.Call.Degraded is "cache"), the failure is reported as a
// store.Error (Layer "cache", Op "get" or "set", Key the result's key, a
// hash), and s is left alone for store.Rest. A value in s that does not
// decode is a miss too, reported with an Err wrapping store.ErrCorrupt;
// the store is not left alone, since it answered, and the next success
// replaces the value. An invalid store option is invalid. nil means
// results in process only (the default).
func WithStore(s store.Results, opts ...store.Option) Option {
	return func(c *config) {
		cfg, err := store.NewConfig(opts...)
		if err != nil {
			c.reject("WithStore: %v", err)
		}
		c.store, c.storeCfg = s, cfg
	}
}

func newConfig(ttl time.Duration, opts []Option) config {
	c := config{ttl: ttl}
	if ttl < 0 {
		c.reject("New(%v): the TTL must not be negative", ttl)
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.maxEntries == 0 {
		c.maxEntries = DefaultMaxEntries
	}
	if c.maxBytes == 0 {
		c.maxBytes = DefaultMaxBytes
	}
	c.clk = clock.Or(c.clk)
	switch {
	case c.partition != nil && c.shared:
		c.reject("WithPartition and WithSharedResults: choose one")
	case c.partition == nil && !c.shared:
		c.reject("choose who may be served whose results: WithPartition (per user or tenant) or WithSharedResults (every caller)")
	}
	return c
}

// Validate reports the first invalid value of ttl or of an option as a
// tool-definition-invalid/option_invalid error, or nil: the error
// toolmw.Wrap reports for the middleware [New] makes of them. It is safe
// for concurrent use.
func Validate(ttl time.Duration, opts ...Option) error { return newConfig(ttl, opts).err }
