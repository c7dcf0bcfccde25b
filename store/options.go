package store

import (
	"fmt"
	"time"
)

// An Option sets how a layer uses its store. The same Options serve every
// layer: pass them after the store, as in runlimit.WithStore(s, opts...). An
type Option func(*Config)

// Config is what the Options given to a layer set. A layer reads it with
// [NewConfig]; the zero Config is the defaults.
type Config struct {
	// Timeout bounds each operation of the store; 0 means [DefaultTimeout].
	Timeout time.Duration
	// OnError is called for every operation the store did not complete;
	// nil means none.
	OnError func(Error)

	err error
}

// NewConfig applies opts, in order, to the defaults and returns the result
// with the first invalid option's error (Timeout is then the default). nil
// options are skipped.
func NewConfig(opts ...Option) (Config, error) {
	var c Config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	return c, c.err
}

// WithTimeout bounds how long one operation waits for the store (0 means
// [DefaultTimeout]); the call's own deadline bounds it too. A layer given a
// negative d refuses it at start-up.
func WithTimeout(d time.Duration) Option {
	return func(c *Config) {
		if d < 0 {
			if c.err == nil {
				c.err = fmt.Errorf("store.WithTimeout(%v): the timeout must not be negative", d)
			}
			return
		}
		c.Timeout = d
	}
}

// WithOnError sets a function called for every operation the store did not
// complete (nil means none): count them, log them. It runs on the call's
// goroutine, or on the one that retries an operation in the background,
// and must not block.
func WithOnError(f func(Error)) Option {
	return func(c *Config) { c.OnError = f }
}
