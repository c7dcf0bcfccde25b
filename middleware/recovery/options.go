package recovery

import (
	"context"

	"github.com/toolmw/toolmw/clock"
)

// An Option configures [New].
type Option func(*config)

type config struct {
	onPanic func(ctx context.Context, e PanicEvent)
	goexit  bool
	clock   clock.Clock
	err     error // the first option given a value it cannot use
}

func newConfig(opts []Option) config {
	c := config{clock: clock.System}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithOnPanic sets a function called with each recovered panic, for debug
// logs. ctx is the call's context, for what a debug log takes from it (a
// trace id, a logger). f runs on the panicking goroutine, after the panic
// is stopped and before the call returns, with no lock held, and may run
// on many goroutines at once; a panic in f is dropped: the call still ends
// with the panic error. Without it (or with nil, the default) the panic
// value is dropped and no stack is taken.
func WithOnPanic(f func(ctx context.Context, e PanicEvent)) Option {
	return func(c *config) { c.onPanic = f }
}

// WithClock sets the clock that stamps [PanicEvent.Time] (nil means
// clock.System). Tests pass a *clock.Fake.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) { cfg.clock = clock.Or(c) }
}

// Validate reports the first option given a value [New] cannot use, as a
// tool-definition-invalid/option_invalid error, or nil. Every value of
// today's options is usable (nil is the default), so it returns nil; it is
// there so that a start-up check treats every layer alike. It is safe for
// concurrent use.
func Validate(opts ...Option) error {
	return newConfig(opts).err
}

// WithGoexit runs each call's tool on a goroutine of its own and waits for
// it, so that a tool calling runtime.Goexit (t.FailNow in a test helper, a
// library that ends its goroutine) ends only that goroutine: the call ends
// as tool-failed/tool_exited instead of silently ending the caller's
// goroutine. Off by default, because the hand-off is dear: about 0.8 µs a
// call for the layer alone and 2 µs inside the default stack on a two-core
// machine (BenchmarkGoexitContained), more than the rest of the default
// stack together; turn it on for tools you do not trust.
func WithGoexit() Option {
	return func(c *config) { c.goexit = true }
}
