package chaos

import (
	"fmt"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/taxonomy"
)

// Option configures the chaos layer ([New]) and a [StoreFaults]
// ([NewStoreFaults]).
type Option func(*config)

type config struct {
	seed       uint64
	seeded     bool
	faults     []rule // WithFault, in the order given
	storeRules []rule // WithStoreFault, in the order given
	enabled    bool
	when       func(Target) bool
	onInject   func(Injection)
	clock      clock.Clock
	err        error // the first invalid option value
}

// rule is one WithFault or WithStoreFault: a fault, the share of calls
// (or store operations) it is injected into, and whom it is for.
type rule struct {
	fault Fault
	rate  float64
	names []string // tools (WithFault) or layers (WithStoreFault); nil: every one
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("chaos: "+format, args...))
	}
}

// WithFault injects f into rate of the calls of the tools named, or of
// every tool when none is named: rate is a share from 0 to 1 (0.05 is one
// call in twenty). Several faults for one tool take disjoint shares of its
// calls, in the order given, so their rates for any one tool must add up to
// at most 1; a call gets at most one fault. A rate outside [0, 1] (or NaN),
// a fault not made by this package's constructors, [StoreFailure] (a fault
// of a store, for [WithStoreFault]) or rates adding up past 1 are invalid.
func WithFault(f Fault, rate float64, tools ...string) Option {
	return func(c *config) {
		if f.kind == storeFailure {
			c.reject("WithFault(%v): a store's fault; give it to WithStoreFault", f)
			return
		}
		c.add(&c.faults, "WithFault", f, rate, tools)
	}
}

// WithStoreFault injects f into rate of the operations of a shared store
// made by the layers named (the names of store.Error.Layer: "breaker",
// "ratelimit", "runlimit", "spend", "approval", "dedupe", "retry_budget",
// "run_budget", "cache", "fallback"), or by every layer when none is named,
// through the stores a [StoreFaults] wraps. f is [StoreFailure] (the
// operation fails and changes nothing) or [Latency] (it answers late, or
// not at all when the wait outlasts its context). Rates add up as for
// [WithFault]. The chaos layer made by [New] ignores store faults.
func WithStoreFault(f Fault, rate float64, layers ...string) Option {
	return func(c *config) {
		if f.kind != storeFailure && f.kind != latency {
			c.reject("WithStoreFault(%v): a store is given StoreFailure or Latency", f)
			return
		}
		c.add(&c.storeRules, "WithStoreFault", f, rate, layers)
	}
}

func (c *config) add(rules *[]rule, opt string, f Fault, rate float64, names []string) {
	switch {
	case f.kind == none:
		c.reject("%s: the zero Fault; make one with Failure, Latency, Timeout, …", opt)
	case f.err != "":
		c.reject("%s(%v): %s", opt, f, f.err)
	case !(rate >= 0 && rate <= 1): // also NaN
		c.reject("%s(%v, %v): the rate is a share from 0 to 1", opt, f, rate)
	default:
		*rules = append(*rules, rule{fault: f, rate: rate, names: append([]string(nil), names...)})
	}
}

// WithSeed sets the seed every decision is derived from: the same seed
// makes the same faults at the same places (see the package
// documentation). Without it, New draws a seed at random, so two runs
// differ; a test that must repeat a failure gives one.
func WithSeed(seed uint64) Option {
	return func(c *config) { c.seed, c.seeded = seed, true }
}

// WithEnabled(true) injects into every call (or store operation) that no
// [Disable] context exempts. Without it (or with false) the layer injects
// only into calls made with an [Enable] context or chosen by
// [WithEnabledWhen].
func WithEnabled(on bool) Option {
	return func(c *config) { c.enabled = on }
}

// WithEnabledWhen injects into the calls for which f returns true (and
// into those an [Enable] context turns on), unless a [Disable] context
// exempts them: a run id, a tool, an attempt. f is called on the caller's
// goroutine, possibly from many at once; it must be safe for that, and
// fast: it runs on every call. nil means the default, no predicate.
func WithEnabledWhen(f func(Target) bool) Option {
	return func(c *config) { c.when = f }
}

// WithOnInject sets a function called with every fault injected, before
// it takes effect (before an injected panic, too), on the caller's
// goroutine, possibly from many at once. nil means the default: nothing is
// called.
func WithOnInject(f func(Injection)) Option {
	return func(c *config) { c.onInject = f }
}

// WithClock sets the clock injected latencies and timeouts wait on (nil
// means clock.System). Tests pass a *clock.Fake, or run in a
// testing/synctest bubble with the default.
func WithClock(cl clock.Clock) Option {
	return func(c *config) { c.clock = clock.Or(cl) }
}

func newConfig(opts []Option) config {
	c := config{clock: clock.System}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.err == nil {
		c.checkSums("WithFault", c.faults, "tool")
		c.checkSums("WithStoreFault", c.storeRules, "layer")
	}
	return c
}

// checkSums rejects rules whose rates add up past 1 for some name: the
// rules for every name, plus those naming it.
func (c *config) checkSums(opt string, rules []rule, what string) {
	var all float64
	named := map[string]float64{}
	for _, r := range rules {
		if r.names == nil {
			all += r.rate
			continue
		}
		for _, n := range dedup(r.names) {
			named[n] += r.rate
		}
	}
	const slack = 1e-9 // 0.1+0.2+0.7 is not exactly 1 in floating point
	if all > 1+slack {
		c.reject("%s: the rates for every %s add up to %v, past 1", opt, what, all)
		return
	}
	for n, sum := range named {
		if all+sum > 1+slack {
			c.reject("%s: the rates for %s %q add up to %v, past 1", opt, what, n, all+sum)
			return
		}
	}
}

func dedup(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := names[:0:0]
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// Validate reports the first invalid option value, as a
// tool-definition-invalid error with code option_invalid, or nil. It is
// safe for concurrent use.
func Validate(opts ...Option) error {
	return newConfig(opts).err
}
