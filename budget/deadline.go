package budget

import (
	"context"
	"time"
)

// Remaining returns the time left before ctx's deadline as seen at now (0
// once it has passed), and false when ctx has no deadline.
func Remaining(ctx context.Context, now time.Time) (time.Duration, bool) {
	dl, ok := ctx.Deadline()
	if !ok {
		return 0, false
	}
	return max(dl.Sub(now), 0), true
}

// WaitFits reports whether a wait starting at now may be started: ctx is not
// done, and the wait ends before ctx's deadline, if any. A wait ending at or
// past the deadline does not fit: the attempt after it would have no time.
func WaitFits(ctx context.Context, now time.Time, wait time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	dl, ok := ctx.Deadline()
	return !ok || now.Add(wait).Before(dl)
}
