package redact

import (
	"fmt"

	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
)

// An Option configures [New].
type Option func(*config)

type config struct {
	scrubber *scrub.Scrubber
	results  bool
	err      error // the first option value that could not be used
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("redact: "+format, args...))
	}
}

// WithScrubber sets the scrubber, made with scrub.New. The default, and a
// nil s, is scrub.Default(). The last of WithScrubber and [WithKeyedHash]
// wins.
func WithScrubber(s *scrub.Scrubber) Option {
	return func(c *config) { c.scrubber = s }
}

// WithKeyedHash scrubs with the default families and identifiers replaced by
// a keyed hash of their value ([REDACTED:email:ab12cd34]), so the same value
// reads the same wherever this key is used and cannot be read back without
// it. An empty key means a random key made once per process: pseudonyms are
// stable within the process and meaningless outside it. It is
// WithScrubber with the Scrubber scrub.New(scrub.WithKeyedHash(key)) makes;
// the last of the two wins.
func WithKeyedHash(key []byte) Option {
	if len(key) == 0 {
		key = processKey()
	}
	s, err := scrub.New(scrub.WithKeyedHash(key))
	return func(c *config) {
		if err != nil { // scrub.New takes any key today; should that change, report it
			c.reject("WithKeyedHash: %v", err)
			return
		}
		c.scrubber = s
	}
}

// WithResults scrubs the content of results too, and their parts (see
// the package documentation for what of a part is scrubbed). This layer is the one
// that scrubs results; the result layer only checks them, and goes outside
// this one so that its size cap holds for the scrubbed result.
//
// Results carry ids a model names back in its next call. The default
// scrubber redacts the ones that look generated (family high_entropy: a
// ULID such as 01ARZ3NDEKTSV4RRFFQ69G5FAV, a nanoid); to keep them, give a scrubber
// without it: WithScrubber(s) with s from
// scrub.New(scrub.WithoutFamilies("high_entropy")).
func WithResults() Option {
	return func(c *config) { c.results = true }
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

// Validate reports the first option value [New] would ignore, as a
// tool-definition-invalid error with code option_invalid, or nil.
func Validate(opts ...Option) error {
	return newConfig(opts).err
}
