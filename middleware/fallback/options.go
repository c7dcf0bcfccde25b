package fallback

import (
	"context"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// Option configures the fallback layer.
type Option func(*config)

type config struct {
	kinds      map[taxonomy.Kind]bool
	fn         Func
	lastGood   bool
	ttl        time.Duration
	maxEntries int
	maxBytes   int
	partition  func(context.Context, toolmw.Call) string
	shared     bool // WithSharedResults: every caller shares the results
	clk        clock.Clock
	onServe    func(Event)
	store      store.Results
	storeCfg   store.Config
	err        error
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("fallback: "+format, args...))
	}
}

// WithKinds chooses the kinds of error a fallback replaces (default
// [DefaultKinds]()); none means the default. A malformed kind is invalid, and
// so are tool-refused, tool-args-invalid, tool-not-permitted,
// tool-cancelled, tool-definition-invalid, duplicate-tool,
// run-limit-exceeded, approval-pending, approval-denied, budget-exceeded and
// guardrail-blocked: those are answers or stops that a substitute must
// never hide.
func WithKinds(kinds ...taxonomy.Kind) Option {
	return func(c *config) {
		if len(kinds) == 0 {
			c.kinds = nil
			return
		}
		m := make(map[taxonomy.Kind]bool, len(kinds))
		for _, k := range kinds {
			if !taxonomy.ValidKind(k) {
				c.reject("WithKinds(%q): not a kind", k)
				return
			}
			if why, ok := never[k]; ok {
				c.reject("WithKinds(%s): never replaced: %s", k, why)
				return
			}
			m[k] = true
		}
		c.kinds = m
	}
}

// WithFunc makes f the fallback: it is called for a call that failed with
// one of the chosen kinds and for which no last good result is served. nil
// means no function.
func WithFunc(f Func) Option {
	return func(c *config) { c.fn = f }
}

// WithLastGood serves, for a call of a tool that declares itself a read
// ([toolmw.Spec.Idempotent]) that failed with one of the chosen kinds, the
// last good result of the same tool for the same arguments (the same JSON
// value: keys in any order, any spacing) in the same partition, if it is
// at most ttl old. 0 means [DefaultTTL]; a negative ttl is invalid. Calls
// of any other tool — one that only honours idempotency keys
// ([toolmw.Spec.HonoursKeys]) included: it acts, and its last result is a
// receipt — are never remembered nor served.
//
// It needs a choice of who may be served whose results: [WithPartition]
// (per user or tenant) or [WithSharedResults] (every caller). Without
// either, or with both, the options are invalid: a cache that could serve
// one user's data to another is never the default.
func WithLastGood(ttl time.Duration) Option {
	return func(c *config) {
		if ttl < 0 {
			c.reject("WithLastGood(%v): the TTL must not be negative", ttl)
			return
		}
		c.lastGood = true
		c.ttl = ttl
	}
}

// WithMaxEntries bounds the last good results kept per tool (default
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

// WithMaxBytes bounds the bytes of results kept per tool, content and
// parts (toolmw.Result.Size) (default
// [DefaultMaxBytes]): the results used least recently are dropped to make
// room, and a result larger than n is not kept. 0 means the default; a
// negative n is invalid.
func WithMaxBytes(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.reject("WithMaxBytes(%d): the bound must not be negative", n)
			return
		}
		c.maxBytes = n
	}
}

// WithPartition keeps the last good results of each partition apart: part
// returns the partition of a call (a tenant, a user, from its context) and
// a result made in one partition is never served in another. A call whose
// partition is "" (no user known) is neither remembered nor served: "" is
// not a partition that every unknown caller shares. The partition is
// hashed into the key, never kept. part runs on every call of a read and
// must be quick; if it panics, the call is neither remembered nor served
// from the cache. With [WithLastGood], a nil part (no partition) is
// invalid unless [WithSharedResults] is given instead.
func WithPartition(part func(ctx context.Context, call toolmw.Call) string) Option {
	return func(c *config) { c.partition = part }
}

// WithSharedResults is the explicit choice, for [WithLastGood], of one
// partition: every caller of a tool shares its last good results for the
// same arguments. Choose it only for tools whose answer depends on nothing
// but their arguments (a flight schedule, an exchange rate), never for one
// that answers from who asks (a balance, an account's details): use
// [WithPartition] for those. Giving both is invalid.
func WithSharedResults() Option {
	return func(c *config) { c.shared = true }
}

// WithClock gives the layer its clock, for the age of last good results.
// nil means [clock.System].
func WithClock(clk clock.Clock) Option {
	return func(c *config) { c.clk = clk }
}

// WithOnServe calls f each time a call is served a fallback, on the
// caller's goroutine, after the result is made and under no lock of the
// layer; a panic in f is dropped. nil means no callback.
func WithOnServe(f func(Event)) Option {
	return func(c *config) { c.onServe = f }
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.kinds == nil {
		c.kinds = map[taxonomy.Kind]bool{}
		for _, k := range DefaultKinds() {
			c.kinds[k] = true
		}
	}
	if c.ttl == 0 {
		c.ttl = DefaultTTL
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
	case c.lastGood && c.partition == nil && !c.shared:
		c.reject("WithLastGood: choose who may be served whose results: WithPartition (per user or tenant) or WithSharedResults (every caller)")
	case c.store != nil && !c.lastGood:
		c.reject("WithStore: the store keeps last good results: give WithLastGood")
	}
	return c
}

// Validate reports the first invalid option value as a
// tool-definition-invalid/option_invalid error, or nil: the error
// toolmw.Wrap reports for the middleware [New] makes of them. It is safe
// for concurrent use.
func Validate(opts ...Option) error { return newConfig(opts).err }
