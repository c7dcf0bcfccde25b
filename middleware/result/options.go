package result

import (
	"strings"

	"github.com/toolmw/toolmw/taxonomy"
)

// DefaultMaxBytes is the default size cap of a result's content: 1 MiB.
const DefaultMaxBytes = 1 << 20

// An Option configures [New].
type Option func(*config)

type config struct {
	maxBytes int
	invalid  []string // the options given a value they cannot use
}

func newConfig(opts []Option) *config {
	c := &config{maxBytes: DefaultMaxBytes}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	return c
}

// WithMaxBytes caps the size of a result's content at n bytes. 0 means the
// default, [DefaultMaxBytes]; a negative n is ignored and reported by
// [Validate].
func WithMaxBytes(n int) Option {
	return func(c *config) {
		switch {
		case n < 0:
			c.invalid = append(c.invalid, "WithMaxBytes needs n >= 0")
		case n == 0:
			c.maxBytes = DefaultMaxBytes
		default:
			c.maxBytes = n
		}
	}
}

// err returns the options given a value they cannot use, as one
// tool-definition-invalid/option_invalid error, or nil.
func (c *config) err() error {
	if len(c.invalid) == 0 {
		return nil
	}
	return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
		"result: "+strings.Join(c.invalid, "; "))
}

// Validate reports the options given a value they cannot use, as a
// tool-definition-invalid/option_invalid error, or nil.
func Validate(opts ...Option) error {
	return newConfig(opts).err()
}
