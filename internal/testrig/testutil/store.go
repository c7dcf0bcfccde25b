package testutil

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// Reports collects the store.Errors a layer reports: give its Add to
// store.WithOnError. It is safe for concurrent use.
type Reports struct {
	mu  sync.Mutex
	got []store.Error
}

// Add records e.
func (r *Reports) Add(e store.Error) {
	r.mu.Lock()
	r.got = append(r.got, e)
	r.mu.Unlock()
}

// Take returns what was recorded since the last Take.
func (r *Reports) Take() []store.Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

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
