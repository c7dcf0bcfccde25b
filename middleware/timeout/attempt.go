package timeout

import (
	"context"
	"sync"
	"time"

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
type attemptCtx struct {
	context.Context // the caller's context
	deadline        time.Time

	mu      sync.Mutex
	err     error         // set once: the deadline, the parent's error or Canceled
	parent  bool          // err is the parent's
	done    chan struct{} // made by the first Done
	timer   *time.Timer   // fires at the deadline; made with done
	unwatch func() bool   // stops the watch on the parent; made with done
	funcs   []*afterFunc  // registered by AfterFunc, run once err is set
}

type afterFunc struct{ f func() }

func newAttempt(parent context.Context, deadline time.Time) *attemptCtx {
	return &attemptCtx{Context: parent, deadline: deadline}
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
		c.checkLocked(monotime.Now())
	}
	c.done = make(chan struct{})
	if c.err != nil {
		close(c.done)
		return c.done
	}
	c.timer = time.AfterFunc(time.Until(c.deadline), func() { c.cancel(context.DeadlineExceeded) })
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
		c.checkLocked(monotime.Now())
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
			c.checkLocked(monotime.Now())
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
