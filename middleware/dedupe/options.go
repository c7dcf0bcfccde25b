package dedupe

import (
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// Defaults of the per-run bounds.
const (
	DefaultMaxRecords = 1024    // finished calls remembered per run
	DefaultMaxBytes   = 1 << 20 // bytes of results (content and parts) held per run
)

// Option configures the dedupe layer.
type Option func(*config)

type config struct {
	byArgs     map[string]bool
	maxRecords int
	maxBytes   int
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
	return c
}

// Validate reports the first invalid option value as a
// tool-definition-invalid/option_invalid error, or nil.
func Validate(opts ...Option) error { return newConfig(opts).err }
