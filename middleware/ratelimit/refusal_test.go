package ratelimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw/middleware/ratelimit"
)

// TestRefusalsTakeNoCapacity: 64 callers of one limiter (100 a second,
// a burst of 1, refusing at once or after at most 1 ms) call every 200 µs
// for 300 ms, nearly all of them refused: the limiter still admits its
// rate, 30 calls and the burst, give or take one. A refusal takes nothing. It used to: the
// layer reserved a token and cancelled the reservation, and x/time/rate's
// CancelAt gives back nothing once a later reservation exists, so under
// concurrent refusals the limiter admitted about half its rate.
func TestRefusalsTakeNoCapacity(t *testing.T) {
	for _, mode := range []struct {
		name string
		opt  ratelimit.Option
	}{{"reject", ratelimit.WithReject()}, {"max wait shorter than the interval", ratelimit.WithMaxWait(time.Millisecond)}} {
		t.Run(mode.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := &counter{}
				tool := wrap(t, "search", c, ratelimit.New(100, 1, mode.opt))
				var refused atomic.Int64
				var wg sync.WaitGroup
				end := time.Now().Add(300 * time.Millisecond)
				for range 64 {
					wg.Go(func() {
						for time.Now().Before(end) {
							if _, err := tool(context.Background(), nil); err != nil {
								rateLimited(t, err)
								refused.Add(1)
							}
							time.Sleep(200 * time.Microsecond)
						}
					})
				}
				wg.Wait()
				admitted := c.n.Load()
				t.Logf("%d admitted, %d refused in 300 ms at 100/s", admitted, refused.Load())
				if admitted < 30 || admitted > 32 {
					t.Fatalf("%d calls admitted in 300 ms at 100/s with a burst of 1 (%d refused), want 31 ± 1", admitted, refused.Load())
				}
				if refused.Load() < int64(admitted) {
					t.Fatalf("only %d refused: most calls should be", refused.Load())
				}
			})
		})
	}
}
