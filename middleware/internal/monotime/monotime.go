// Package monotime reads the time for deadlines and durations from the
// monotonic clock alone.
//
// time.Now reads two clocks, the wall clock and the monotonic one; on some
// virtual machines each read is a slow call. A deadline or a rate needs
// only the monotonic clock: Now returns the process's start time advanced
// by the monotonic time since, which carries a monotonic reading, so that
// time.Until, Sub and Before on it (and on deadlines made from it) use the
// monotonic clock as they would with time.Now's value. Its wall-clock part
// drifts from the wall clock when that is stepped (or when the machine was
// suspended): use it for deadlines and durations, never as a timestamp.
package monotime

import (
	"time"

	"github.com/toolmw/toolmw/clock"
)

var base = time.Now()

// Now returns the current time by the monotonic clock; see the package
// documentation. It is safe for concurrent use.
func Now() time.Time {
	return base.Add(time.Since(base))
}

// Of reads c: clock.System by the monotonic clock alone (Now), any other
// clock (a fake in tests) as it is. Layers that take a clock.Clock read
// deadlines, waits and latencies through it.
func Of(c clock.Clock) time.Time {
	if c == clock.System {
		return Now()
	}
	return c.Now()
}
