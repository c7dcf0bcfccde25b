package classify

import (
	"github.com/toolmw/toolmw/mapper"
)

// An Option configures [New].
type Option func(*config)

type config struct {
	m *mapper.Map
}

// WithMap sets the map that classifies errors. The default, and a nil m, is
// mapper.Default().
func WithMap(m *mapper.Map) Option {
	return func(c *config) { c.m = m }
}

// Validate reports the first invalid option value as a
// tool-definition-invalid/option_invalid error, or nil. Every value of this
// package's options is usable (a nil map means mapper.Default()), so it
// returns nil; it is here so that every layer is checked the same way.
func Validate(opts ...Option) error { return nil }
