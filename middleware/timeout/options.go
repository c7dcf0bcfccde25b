package timeout

import (
	"fmt"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/taxonomy"
)

// Option configures the timeout layer.
type Option func(*config)

type config struct {
	clock        clock.Clock
	abandon      bool
	onLate       func(Late)
	maxAbandoned int
	err          error // the first invalid option value
}

// DefaultMaxAbandoned is how many executions of one tool [WithAbandon]'s
// layer lets run at once, awaited or abandoned, before it refuses new calls;
// so at most this many abandoned executions are ever still running.
const DefaultMaxAbandoned = 100

// WithMaxAbandoned bounds, per wrapped tool, the executions that
// [WithAbandon] has stopped waiting for and that are still running (each
// holds a goroutine and whatever the tool holds). The bound is exact under
// any concurrency: since any execution may be abandoned, a slot is reserved
// (atomically) before an execution starts and given back when the tool
// returns, so at most n executions run at once, awaited or abandoned. While
// n of them run, a new call is not started: it ends at once as
// tool-failed/too_many_abandoned, retryable, since nothing ran. In abandon
// mode the bound is therefore also a cap on the tool's concurrent calls. 0
// means [DefaultMaxAbandoned]; a negative n is invalid. Without WithAbandon
// it has no effect.
func WithMaxAbandoned(n int) Option {
	return func(c *config) {
		switch {
		case n < 0:
			if c.err == nil {
				c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
					fmt.Sprintf("timeout: WithMaxAbandoned(%d): the bound must not be negative", n))
			}
		case n > 0:
			c.maxAbandoned = n
		}
	}
}

// WithAbandon makes the layer return at the deadline without waiting for a
// tool that ignores its context; what the tool returns later goes to
// [WithOnLate], which it needs (without, the options are invalid). Without
// WithAbandon the layer waits for the tool (cooperative).
func WithAbandon() Option {
	return func(c *config) { c.abandon = true }
}

// WithOnLate sets a function called with what an abandoned tool returned
// ([WithAbandon]), once per abandoned call, on the abandoned tool's
// goroutine — possibly from many goroutines at once, so it must be safe
// for that. nil means the default: it is discarded once the goroutine
// ends.
func WithOnLate(f func(Late)) Option {
	return func(c *config) { c.onLate = f }
}

// WithClock sets the clock the layer reads and waits on (nil means
// clock.System): the attempt's deadline passes when that clock reaches it,
// and an abandoned call's lateness is measured on it. Tests pass a
// *clock.Fake; see the package documentation for the deadline the tool sees.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) { cfg.clock = clock.Or(c) }
}

func newConfig(opts []Option) config {
	c := config{clock: clock.System, maxAbandoned: DefaultMaxAbandoned}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.abandon && c.onLate == nil && c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			"timeout: WithAbandon needs WithOnLate: what an abandoned tool returns would be lost without a word")
	}
	return c
}

// Validate reports a negative d as a tool-definition-invalid error with
// code option_invalid, or nil: the error that toolmw.Wrap reports for the
// middleware [New] makes of it, or the first invalid option value. A d of 0
// is valid (the layer is off); nil options are the defaults. It is safe for
// concurrent use.
func Validate(d time.Duration, opts ...Option) error {
	if d < 0 {
		return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("timeout: New(%v): the timeout must not be negative", d))
	}
	return newConfig(opts).err
}
