package anthropic

import (
	"fmt"

	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// DefaultMaxParallel is how many of one turn's tool calls run at once when
// no other bound is given. A model rarely asks for more in one turn; the
// rest wait for a slot, so a reply holding hundreds of calls never starts
// hundreds of goroutines.
const DefaultMaxParallel = turn.DefaultMaxParallel

// Option configures [New].
type Option func(*options)

type options struct {
	maxParallel int
	countCalls  bool
	err         error
}

var defaultOptions = options{
	maxParallel: DefaultMaxParallel,
}

func (o *options) reject(format string, args ...any) {
	if o.err == nil {
		o.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("adapters/anthropic: "+format, args...))
	}
}

// evaluateOptions copies the defaults, then applies opts in order; nil
// options are skipped.
func evaluateOptions(opts []Option) options {
	o := defaultOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// WithMaxParallel bounds how many of one turn's tool calls run at once
// (default [DefaultMaxParallel]); 1 runs them one after another, in the
// model's order, for tools whose side effects must not overlap. 0 means the
// default; a negative n is a tool-definition-invalid/option_invalid error
// from [New]. It bounds [Tools.Call], not the SDK's tool runner, which
// starts every call of a turn itself (a bulkhead layer bounds a tool).
func WithMaxParallel(n int) Option {
	return func(o *options) {
		switch {
		case n < 0:
			o.reject("WithMaxParallel(%d): the bound must not be negative", n)
		case n > 0:
			o.maxParallel = n
		}
	}
}

// WithCallsCounted makes the dispatcher (and the tools of
// [Tools.BetaTools]) take one attempt from the context's run budget
// (budget.WithRun) for every call before it reaches the box, and
// answer a call whose tool has no attempt left with run-limit-exceeded
// without calling it. Use it for a Toolbox whose tools have no retry layer:
// the retry layer (in middleware.Default) takes an attempt for each of its
// attempts itself, so with both every call would count twice.
func WithCallsCounted() Option {
	return func(o *options) { o.countCalls = true }
}
