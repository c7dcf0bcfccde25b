package timeout

import (
	"context"
	"sync"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/internal/monotime"
)

// attemptCtx is the context of one attempt: the caller's context with the
// layer's earlier deadline. It behaves as context.WithDeadline's context
// does, but makes its channel, its timer and its link to the parent only
// when something asks for Done: most tools that finish quickly never do,
// and context.WithDeadline costs four allocations, a timer and two clock
// reads per attempt whether or not anyone waits.
//
// Err reports the deadline without a timer by reading the clock, so Err and
// Done agree whichever is asked first. Once the attempt ends (release), Err
// is context.Canceled, as after a context.WithDeadline's cancel.
//
// It implements AfterFunc, which the context package uses for the contexts
// derived from it: a child context costs no goroutine.
//
// With the system clock (clock nil) it reads the monotonic clock and its
// timer is a time.AfterFunc; with another clock (a fake in tests) it reads
// and waits on that clock, so the deadline passes when that clock says so.
type attemptCtx struct {
	context.Context // the caller's context
	deadline        time.Time
	clock           clock.Clock // nil: the system clock

	mu      sync.Mutex
	err     error         // set once: the deadline, the parent's error or Canceled
	parent  bool          // err is the parent's
	done    chan struct{} // made by the first Done
	timer   *time.Timer   // fires at the deadline; made with done (system clock)
	ctimer  clock.Timer   // fires at the deadline; made with done (another clock)
	cstop   chan struct{} // closed to end ctimer's watch
	unwatch func() bool   // stops the watch on the parent; made with done
	funcs   []*afterFunc  // registered by AfterFunc, run once err is set
}

type afterFunc struct{ f func() }

// newAttempt returns the attempt's context ending at deadline, read on clk
// (nil: the system clock, by the monotonic clock).
func newAttempt(parent context.Context, deadline time.Time, clk clock.Clock) *attemptCtx {
	return &attemptCtx{Context: parent, deadline: deadline, clock: clk}
}

// now reads the attempt's clock.
func (c *attemptCtx) now() time.Time {
	if c.clock == nil {
		return monotime.Now()
	}
	return c.clock.Now()
}

// Deadline returns the layer's deadline, which is before the parent's.
func (c *attemptCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// Done returns a channel closed at the deadline, when the parent is done,
// or when the attempt ends, whichever comes first.
func (c *attemptCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	if c.err == nil {
		c.checkLocked(c.now())
	}
	c.done = make(chan struct{})
	if c.err != nil {
		close(c.done)
		return c.done
	}
	if c.clock == nil {
		c.timer = time.AfterFunc(time.Until(c.deadline), func() { c.cancel(context.DeadlineExceeded) })
	} else {
		t, stop := c.clock.NewTimer(c.deadline.Sub(c.clock.Now())), make(chan struct{})
		c.ctimer, c.cstop = t, stop
		go func() {
			select {
			case <-t.C():
				c.cancel(context.DeadlineExceeded)
			case <-stop:
			}
		}()
	}
	parent := c.Context
	c.unwatch = context.AfterFunc(parent, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.setLocked(parent.Err(), true)
	})
	return c.done
}

// Err returns nil while the attempt may go on, then why it may not.
func (c *attemptCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && c.done == nil {
		// No timer watches the deadline: look at the clock. With a timer,
		// the timer decides, as it does for context.WithDeadline.
		c.checkLocked(c.now())
	}
	return c.err
}

// checkLocked sets err from the parent and the deadline, as of now, before
// anything watches them.
func (c *attemptCtx) checkLocked(now time.Time) {
	if err := c.Context.Err(); err != nil {
		c.setLocked(err, true)
	} else if !now.Before(c.deadline) {
		c.setLocked(context.DeadlineExceeded, false)
	}
}

// Value hides the parent's cancellation record from context.Cause while the
// attempt is not cancelled by the parent, so that Cause reports the
// attempt's own error, as it does for a context.WithDeadline.
func (c *attemptCtx) Value(key any) any {
	if key == cancelCtxKey {
		c.mu.Lock()
		if c.err == nil && c.done == nil {
			c.checkLocked(c.now())
		}
		byParent := c.parent
		c.mu.Unlock()
		if !byParent {
			return nil
		}
	}
	return c.Context.Value(key)
}

// AfterFunc arranges for f to run in its own goroutine once the attempt's
// context is done; stop reports whether it stopped f from running. The
// context package calls it for contexts derived from an attempt's.
func (c *attemptCtx) AfterFunc(f func()) (stop func() bool) {
	a := &afterFunc{f: f}
	c.mu.Lock()
	if c.err == nil && c.done == nil {
		c.mu.Unlock()
		c.Done() // start watching the deadline and the parent
		c.mu.Lock()
	}
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	c.funcs = append(c.funcs, a)
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, x := range c.funcs {
			if x == a {
				c.funcs = append(c.funcs[:i], c.funcs[i+1:]...)
				return true
			}
		}
		return false
	}
}

// cancel ends the attempt's context with err unless it has ended already.
func (c *attemptCtx) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(err, false)
}

// setLocked records err, and whether it is the parent's, closes done and
// runs the registered funcs, once.
func (c *attemptCtx) setLocked(err error, parent bool) {
	if c.err != nil {
		return
	}
	c.err, c.parent = err, parent
	if c.done != nil {
		close(c.done)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.ctimer != nil {
		c.ctimer.Stop()
		close(c.cstop)
	}
	if c.unwatch != nil {
		c.unwatch()
	}
	for _, a := range c.funcs {
		go a.f()
	}
	c.funcs = nil
}

// release ends the attempt: its context is cancelled, as a
// context.WithDeadline's is by its cancel func.
func (c *attemptCtx) release() { c.cancel(context.Canceled) }

// cancelCtxKey is the key under which the context package's cancellable
// contexts answer Value with themselves, as context.Cause asks for it. It is
// unexported, so it is learnt once by asking Cause of a context that
// records the key it is asked for.
var cancelCtxKey = func() any {
	var p keyProbe
	_ = context.Cause(&p)
	return p.key
}()

type keyProbe struct {
	context.Context
	key any
}

func (p *keyProbe) Value(key any) any {
	if p.key == nil {
		p.key = key
	}
	return nil
}

func (p *keyProbe) Err() error { return nil }
