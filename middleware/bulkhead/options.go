package bulkhead

import (
	"fmt"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/taxonomy"
)

// DefaultMaxQueue is how many calls may wait for a slot of one pool when no
// other bound is given.
const DefaultMaxQueue = 1024

// Option configures the bulkhead layer.
type Option func(*config)

type config struct {
	maxWait  time.Duration // 0: no cap but the deadline
	maxQueue int
	shared   *Pool
	adaptive *Adaptive   // nil: a fixed limit
	clock    clock.Clock // for an adaptive pool's latency
	err      error
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("bulkhead: "+format, args...))
	}
}

// WithMaxWait caps how long a call waits for a slot; past it the call ends
// as rate-limited/bulkhead_full. 0 means the default, no cap but the
// context's deadline; a negative d is invalid.
func WithMaxWait(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.reject("WithMaxWait(%v): the cap must not be negative", d)
			return
		}
		c.maxWait = d
	}
}

// WithMaxQueue bounds how many calls may wait for a slot at once; a call
// finding the queue full ends at once as rate-limited/bulkhead_full. 0 means
// [DefaultMaxQueue]; a negative n is invalid. With a shared pool, the pool's
// own bound applies (see [NewPool]).
func WithMaxQueue(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.reject("WithMaxQueue(%d): the bound must not be negative", n)
			return
		}
		c.maxQueue = n
	}
}

// WithShared makes every tool the layer wraps take its slots from p, a pool
// shared, typically, by the tools of one upstream; New's n is then not used.
// nil means the default, a pool of n slots per tool.
func WithShared(p *Pool) Option {
	return func(c *config) { c.shared = p }
}

func newConfig(opts []Option) config {
	c := config{clock: clock.System}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.maxQueue == 0 {
		c.maxQueue = DefaultMaxQueue
	}
	return c
}

// Validate reports a negative n or the first invalid option value, as a
// tool-definition-invalid error with code option_invalid, or nil: the error
// toolmw.Wrap reports for the middleware [New] makes of them.
func Validate(n int, opts ...Option) error {
	if n < 0 {
		return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("bulkhead: New(%d): the limit must not be negative", n))
	}
	return newConfig(opts).err
}
