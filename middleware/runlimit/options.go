package runlimit

import (
	"fmt"

	"github.com/toolmw/toolmw/middleware/internal/runshare"
	"github.com/toolmw/toolmw/taxonomy"
)

// Option declares the limit of one tool, or configures the layer.
type Option func(*config)

type config struct {
	limits map[string]int // tool name → calls per run
	store  runshare.Config[Store]
	err    error
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("runlimit: "+format, args...))
	}
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
