package dedupe

import (
	"bytes"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// Defaults of the per-run bounds.
const (
	DefaultMaxRecords = 1024    // finished calls remembered per run
	DefaultMaxBytes   = 1 << 20 // bytes of results (content and parts) held per run
)

// Defaults of the records kept in a [Store].
const (
	DefaultLease  = 15 * time.Second // how long a claim holds a record without renewal
	DefaultWindow = 24 * time.Hour   // how long a record is kept after its last write
)

// MinLease is the shortest lease [WithLease] accepts: a lease is renewed
// every third of it, and each renewal is a round trip to the Store.
const MinLease = 100 * time.Millisecond

// Option configures the dedupe layer.
type Option func(*config)

type config struct {
	byArgs     map[string]bool
	maxRecords int
	maxBytes   int
	store      Store
	storeCfg   store.Config
	lease      time.Duration
	window     time.Duration
	clk        clock.Clock
	sealKey    []byte
	err        error
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("dedupe: "+format, args...))
	}
}

// WithArguments names tools whose repeats are recognised by their
// arguments too: two calls of such a tool in one run with the same JSON
// arguments are one call, whatever their call ids. Use it for
// side-effecting tools a model may call again in a later turn with a new
// call id. A name that is not a valid tool name is invalid.
func WithArguments(tools ...string) Option {
	return func(c *config) {
		for _, t := range tools {
			if !toolmw.ValidName(t) {
				c.reject("WithArguments(%q): not a tool name", t)
				return
			}
			if c.byArgs == nil {
				c.byArgs = map[string]bool{}
			}
			c.byArgs[t] = true
		}
	}
}

// WithMaxRecords bounds the finished calls remembered per run (default
// [DefaultMaxRecords]); the oldest is forgotten first. 0 means the default;
// a negative n is invalid.
func WithMaxRecords(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.reject("WithMaxRecords(%d): the bound must not be negative", n)
			return
		}
		c.maxRecords = n
	}
}

// WithMaxBytes bounds the bytes of results, content and parts
// (toolmw.Result.Size), and of error text held per run (default
// [DefaultMaxBytes]). 0 means the default; a negative n is invalid.
func WithMaxBytes(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.reject("WithMaxBytes(%d): the bound must not be negative", n)
			return
		}
		c.maxBytes = n
	}
}

// WithStore keeps the records of the calls of a named run (budget.WithID)
// in s, shared by every process using the same Store, so that a call is
// made once across crashes, restarts and replicas: before the tool runs,
// the call claims its record in s, holding it with a lease ([WithLease])
// renewed while the tool runs, and after, it finishes the record with the
// outcome, kept for [WithWindow]. A call of a run without an id keeps
// in-process records. opts set how the layer uses s (store.WithTimeout,
// store.WithOnError); an invalid one is invalid (see [Validate]). See the
// package documentation ("Across processes") for what a repeat gets and how
// an outage of s is decided. nil means in-process records only (the
// default).
func WithStore(s Store, opts ...store.Option) Option {
	return func(c *config) {
		cfg, err := store.NewConfig(opts...)
		if err != nil {
			c.reject("WithStore: %v", err)
			return
		}
		c.store, c.storeCfg = s, cfg
	}
}

// WithLease sets how long a claim in the [Store] holds a call's record
// without being renewed (default [DefaultLease]). The holder renews it
// every third of d while the tool runs, so a lease ends only when its
// holder died or lost the Store: a repeat waits for the holder at most
// that long before it learns the call's outcome is unknown. 0 means the
// default; a d shorter than [MinLease] is invalid.
func WithLease(d time.Duration) Option {
	return func(c *config) {
		if d != 0 && d < MinLease {
			c.reject("WithLease(%v): the lease must be at least %v", d, MinLease)
			return
		}
		c.lease = d
	}
}

// WithWindow sets how long the [Store] keeps a call's record after its
// last write (default [DefaultWindow]): a repeat within it gets the
// recorded outcome, one after it runs the tool again. 0 means the default;
// a negative d, or one shorter than twice the lease, is invalid.
func WithWindow(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.reject("WithWindow(%v): the window must not be negative", d)
			return
		}
		c.window = d
	}
}

// WithClock gives the layer its clock, for the leases and windows of the
// records in the [Store] and the waits for a record's holder. nil means
// [clock.System].
func WithClock(clk clock.Clock) Option {
	return func(c *config) { c.clk = clk }
}

// MinKeyLen is the shortest key [WithSealKey] accepts: 32 bytes, the size
// of an HMAC-SHA256 tag.
const MinKeyLen = 32

// WithSealKey seals the outcome of every record the layer writes to its
// [Store] with key (HMAC-SHA256 over the run id, the record's name, the
// digest of the arguments and the outcome), and refuses every outcome it
// reads that is not sealed so: an outcome changed, forged, written with
// another key or copied from another call or run ends the call as
// tool-failed/call_record_corrupt, and the tool does not run. Without it,
// whoever can write to the Store can answer a call with a result of their
// own. The key must be at least [MinKeyLen] bytes; keep it secret, and
// give the same one to every process sharing the Store. The layer keeps a
// copy. nil means no seal (the default).
func WithSealKey(key []byte) Option {
	return func(c *config) {
		if key != nil && len(key) < MinKeyLen {
			c.reject("WithSealKey: the key has %d bytes, fewer than %d", len(key), MinKeyLen)
			return
		}
		c.sealKey = bytes.Clone(key)
	}
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.maxRecords == 0 {
		c.maxRecords = DefaultMaxRecords
	}
	if c.maxBytes == 0 {
		c.maxBytes = DefaultMaxBytes
	}
	if c.lease == 0 {
		c.lease = DefaultLease
	}
	if c.window == 0 {
		c.window = DefaultWindow
	}
	if c.err == nil && c.window < 2*c.lease {
		c.reject("WithWindow(%v): the window must be at least twice the lease (%v)", c.window, c.lease)
	}
	c.clk = clock.Or(c.clk)
	return c
}

// Validate reports the first invalid option value as a
// tool-definition-invalid/option_invalid error, or nil.
func Validate(opts ...Option) error { return newConfig(opts).err }
