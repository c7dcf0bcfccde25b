package testutil

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// Recorder collects what a callback reports, in order: give its Add to
// the option. It is safe for concurrent use.
type Recorder[T any] struct {
	mu  sync.Mutex
	got []T
}

// Add records e.
func (r *Recorder[T]) Add(e T) {
	r.mu.Lock()
	r.got = append(r.got, e)
	r.mu.Unlock()
}

// All returns a copy of what was recorded.
func (r *Recorder[T]) All() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.got...)
}

// Take returns what was recorded since the last Take.
func (r *Recorder[T]) Take() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

// Reports collects the store.Errors a layer reports: give its Add to
// store.WithOnError.
type Reports = Recorder[store.Error]

// NoDeadline returns a context without a deadline.
func NoDeadline() (context.Context, context.CancelFunc) { return context.Background(), func() {} }

// Deadline returns a func returning a context that ends after d.
func Deadline(d time.Duration) func() (context.Context, context.CancelFunc) {
	return func() (context.Context, context.CancelFunc) { return context.WithTimeout(context.Background(), d) }
}

// Cancelled returns a context already cancelled.
func Cancelled() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx, cancel
}

// IsNil reports whether err is nil.
func IsNil(err error) bool { return err == nil }

// IsTimeout reports whether err is a timeout of the call's own deadline.
func IsTimeout(err error) bool {
	return taxonomy.InfoOf(err).Kind == taxonomy.KindTimeout && errors.Is(err, context.DeadlineExceeded)
}

// IsCanceled reports whether err is the call's cancellation.
func IsCanceled(err error) bool { return errors.Is(err, context.Canceled) }

// FailsOpen is a layer with a store that fails open, set up for
// [FailsOpen.Run]: a call of a run whose limit the store's first answer
// and four local decisions fill.
type FailsOpen struct {
	Layer, Op string                       // the layer's degraded name and the operation that asks the store
	Call      func() (ran bool, err error) // makes one call of the run
	Asked     func() int64                 // how many times the store was asked
	Fail      func(error)                  // makes the store fail with an error
	Refusal   func(error) bool             // whether an error is the limit's refusal
	Reports   *Reports                     // the layer's store.WithOnError
	Seen      func() []string              // Degraded's second result, outside the layer
}

// Run checks, in a testing/synctest bubble, that when the store fails a
// call is decided on the replica's own state (which holds the call the
// store admitted), reported with the store's error (Refused false) and
// marked degraded; that for store.Rest the store is left alone and calls
// are reported with store.ErrResting; that it is asked again after it;
// and that a call the replica's own state has no room for is refused
// without asking. It leaves the store failing.
func (f FailsOpen) Run(t *testing.T) {
	t.Helper()
	down := errors.New("store down at 10.0.0.7:6379")
	step := func(name string, runs, asks bool, report error) {
		t.Helper()
		asked := f.Asked()
		ran, err := f.Call()
		if ran != runs || ran && err != nil || !ran && !f.Refusal(err) {
			t.Errorf("%s: ran %v (%v), want %v", name, ran, err, runs)
		}
		if a := f.Asked() > asked; a != asks {
			t.Errorf("%s: asked the store %v, want %v", name, a, asks)
		}
		got := f.Reports.Take()
		switch {
		case report == nil && len(got) != 0:
			t.Errorf("%s: reported %v, want nothing", name, got)
		case report != nil && (len(got) != 1 || got[0] != store.Error{Layer: f.Layer, Op: f.Op, Err: report}):
			t.Errorf("%s: reported %v, want one %s with %v", name, got, f.Op, report)
		}
		want := ""
		if report != nil {
			want = f.Layer
		}
		if d := f.Seen(); d[len(d)-1] != want {
			t.Errorf("%s: degraded %q, want %q", name, d[len(d)-1], want)
		}
	}
	step("store admits", true, true, nil)
	f.Fail(down)
	step("store fails: decided locally", true, true, down)
	step("resting", true, false, store.ErrResting)
	time.Sleep(store.Rest - time.Nanosecond)
	step("still resting", true, false, store.ErrResting)
	time.Sleep(time.Nanosecond)
	step("rest over: asked again", true, true, down)
	step("the replica's own state, with the store's call, is full: refused without asking", false, false, nil)
}

// Hang is one case of [Hangs]: a call, with the context Ctx makes, of a
// layer whose store does not answer, with the store timeout Timeout.
type Hang struct {
	Name     string
	Timeout  time.Duration // store.WithTimeout
	Ctx      func() (context.Context, context.CancelFunc)
	Wait     time.Duration    // how long the call waits
	Runs     bool             // whether the tool runs
	Reported bool             // whether the store's timeout is reported
	Want     func(error) bool // whether the call's error is right
}

// Hangs checks, in a testing/synctest bubble per case, that a store that
// does not answer holds a call for exactly the store timeout (50 ms by
// default), after which the call runs, decided locally, and is reported
// with context.DeadlineExceeded; and that a call whose own context ends
// first does not run and is not reported. setup returns the case's call,
// made with the case's context (ran says the tool ran), and after, the
// layer's own checks once the call returned.
func Hangs(t *testing.T, setup func(t *testing.T, c Hang, rep *Reports) (call func(context.Context) (ran bool, err error), after func())) {
	for _, c := range []Hang{
		{"default timeout", 0, NoDeadline, store.DefaultTimeout, true, true, IsNil},
		{"10ms", 10 * time.Millisecond, NoDeadline, 10 * time.Millisecond, true, true, IsNil},
		{"call deadline first", 0, Deadline(20 * time.Millisecond), 20 * time.Millisecond, false, false, IsTimeout},
		{"call cancelled", 0, Cancelled, 0, false, false, IsCanceled},
	} {
		t.Run(c.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var rep Reports
				call, after := setup(t, c, &rep)
				ctx, cancel := c.Ctx()
				defer cancel()
				start := time.Now()
				ran, err := call(ctx)
				if d := time.Since(start); d != c.Wait {
					t.Errorf("the call waited %v, want %v", d, c.Wait)
				}
				if !c.Want(err) {
					t.Errorf("error %v", err)
				}
				if ran != c.Runs {
					t.Errorf("ran %v, want %v", ran, c.Runs)
				}
				got := rep.Take()
				if reported := len(got) > 0; reported != c.Reported {
					t.Fatalf("reported %v, want %v", got, c.Reported)
				}
				if c.Reported && !errors.Is(got[0].Err, context.DeadlineExceeded) {
					t.Errorf("reported %v, want context.DeadlineExceeded", got[0].Err)
				}
				after()
			})
		})
	}
}

// Options checks that validate (the layer's Validate) and wrap (the error
// of toolmw.Wrap with the layer New makes) accept each of valid and refuse
// each of invalid, as tool-definition-invalid/option_invalid.
func Options[O any](t *testing.T, validate, wrap func(O) error, valid, invalid []O) {
	t.Helper()
	for i, o := range append(slices.Clone(valid), invalid...) {
		want := i < len(valid)
		err := validate(o)
		if (err == nil) != want {
			t.Errorf("option %d: Validate = %v, want valid %v", i, err, want)
		}
		if !want && taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
			t.Errorf("option %d: %v, want option_invalid", i, err)
		}
		if werr := wrap(o); (werr == nil) != want {
			t.Errorf("option %d: Wrap = %v, want valid %v", i, werr, want)
		}
	}
}
