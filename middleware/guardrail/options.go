package guardrail

import (
	"context"
	"fmt"

	"github.com/toolmw/toolmw/taxonomy"
)

// Option adds a guardrail to the layer, or configures it.
type Option func(*config)

type config struct {
	args, results []check
	values        [2]bool // whether a check of the stage (args, result) reads every string on its own
	names         map[string]bool
	onBlock       func(context.Context, Block)
	err           error
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("guardrail: "+format, args...))
	}
}

// add validates a guardrail's name and check; what is its caller's name,
// for the error.
func (c *config) add(what, name string, isNil bool) bool {
	switch {
	case !taxonomy.ValidCode(name):
		c.reject("%s(%q): a guardrail's name is snake_case words, like a code", what, name)
	case isNil:
		c.reject("%s(%q): the check is nil", what, name)
	case c.names[name]:
		c.reject("%s(%q): two guardrails have that name", what, name)
	default:
		if c.names == nil {
			c.names = map[string]bool{}
		}
		c.names[name] = true
		return true
	}
	return false
}

// WithOnBlock sets a debug hook told of every block with the check's own
// error or panic value ([Block]), on the call's goroutine with the call's
// context, outside every lock; a panic in it is dropped. It is the only
// place the check's error goes. nil means none (the default).
func WithOnBlock(f func(ctx context.Context, b Block)) Option {
	return func(c *config) { c.onBlock = f }
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// Validate reports the first invalid option value as a
// tool-definition-invalid/option_invalid error, or nil: the error
// toolmw.Wrap reports for the middleware [New] makes of them. It is safe
// for concurrent use.
func Validate(opts ...Option) error { return newConfig(opts).err }
