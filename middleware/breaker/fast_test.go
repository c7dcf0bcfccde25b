package breaker_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/taxonomy"
)

// TestFastPathKeepsGobreakersBooks: a breaker that skips gobreaker for the
// calls that cannot change its state (the default rule) reports, after
// every step of a random sequence of successes, faults, neutral outcomes
// and waits, the same state and counts as one that sends every call through
// gobreaker (an interval of a year turns the fast path off and clears
// nothing within the test).
func TestFastPathKeepsGobreakersBooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		outcomes := []error{nil, nil, nil, errors.New("supplier down"),
			taxonomy.Refusal("booking_not_cancellable", "no"), nil}
		var mu sync.Mutex
		var next error
		fn := func(context.Context, json.RawMessage) (toolmw.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			return toolmw.Text("ok"), next
		}
		fast := breaker.NewBreaker("fast", breaker.WithOpenFor(time.Second))
		slow := breaker.NewBreaker("slow", breaker.WithOpenFor(time.Second), breaker.WithInterval(365*24*time.Hour))
		tools := []toolmw.Tool{}
		for _, b := range []*breaker.Breaker{fast, slow} {
			tool, err := toolmw.Wrap(toolmw.Spec{Name: "book"}, func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) { return fn(ctx, args) }, breaker.New(breaker.WithShared(b)))
			if err != nil {
				t.Fatal(err)
			}
			tools = append(tools, tool)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for step := range 3000 {
			if rng.IntN(40) == 0 {
				time.Sleep(time.Second) // an open breaker half-opens
			}
			mu.Lock()
			next = outcomes[rng.IntN(len(outcomes))]
			if rng.IntN(3) == 0 {
				next = outcomes[3] // runs of faults, so that it trips
			}
			mu.Unlock()
			var errs [2]error
			for i, tool := range tools {
				_, errs[i] = tool(context.Background(), nil)
			}
			if (errs[0] == nil) != (errs[1] == nil) || taxonomy.InfoOf(errs[0]).Code != taxonomy.InfoOf(errs[1]).Code {
				t.Fatalf("step %d: fast path %v, gobreaker %v", step, errs[0], errs[1])
			}
			if fs, ss := fast.State(), slow.State(); fs != ss {
				t.Fatalf("step %d: fast path %v, gobreaker %v", step, fs, ss)
			}
			if fc, sc := fast.Counts(), slow.Counts(); fc != sc {
				t.Fatalf("step %d: fast path counts %+v, gobreaker %+v", step, fc, sc)
			}
		}
	})
}

// TestFastPathUnderConcurrency: calls racing on a breaker whose dependency
// fails and recovers do not start while it is open: each of the 8
// goroutines may have one call admitted before an opening still running
// after it, no more; and the counts add up.
func TestFastPathUnderConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		down, ranWhileOpen, openings := false, 0, 0
		b := breaker.NewBreaker("book", breaker.WithOpenFor(time.Second),
			breaker.WithOnStateChange(func(e breaker.StateChangeEvent) {
				if e.To == breaker.StateOpen {
					mu.Lock()
					openings++
					mu.Unlock()
				}
			}))
		tool, err := toolmw.Wrap(toolmw.Spec{Name: "book"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			if b.State() == breaker.StateOpen {
				mu.Lock()
				ranWhileOpen++
				mu.Unlock()
			}
			mu.Lock()
			defer mu.Unlock()
			if down {
				return toolmw.Result{}, errors.New("supplier down")
			}
			return toolmw.Text("ok"), nil
		}, breaker.New(breaker.WithShared(b)))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 500 {
					if g == 0 && i%100 == 0 {
						mu.Lock()
						down = !down
						mu.Unlock()
						time.Sleep(2 * time.Second)
					}
					_, _ = tool(context.Background(), nil)
				}
			})
		}
		wg.Wait()
		if openings == 0 {
			t.Fatal("the breaker never opened")
		}
		if ranWhileOpen > 8*openings {
			t.Errorf("%d executions while the breaker was open, in %d openings: more than one per goroutine and opening", ranWhileOpen, openings)
		}
		c := b.Counts()
		if c.Requests != c.Successes+c.Failures+c.Neutral {
			t.Errorf("counts do not add up: %+v", c)
		}
	})
}

// TestStaleFaultIsNeutral: the fault of a call that started before the
// breaker opened, and ended once it was half-open, does not open it again
// (gobreaker ignores the outcomes of an earlier generation's calls).
func TestStaleFaultIsNeutral(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		slowFn := func(context.Context, json.RawMessage) (toolmw.Result, error) {
			<-release
			return toolmw.Result{}, errors.New("supplier down")
		}
		failFn := func(context.Context, json.RawMessage) (toolmw.Result, error) {
			return toolmw.Result{}, errors.New("supplier down")
		}
		b := breaker.NewBreaker("book", breaker.WithOpenFor(time.Second))
		mw := breaker.New(breaker.WithShared(b))
		slow := toolmw.MustWrap(toolmw.Spec{Name: "book"}, slowFn, mw)
		fail := toolmw.MustWrap(toolmw.Spec{Name: "book"}, failFn, mw)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = slow(context.Background(), nil)
		}()
		synctest.Wait() // the slow call is admitted and waits
		for range breaker.DefaultConsecutiveFailures {
			_, _ = fail(context.Background(), nil)
		}
		if s := b.State(); s != breaker.StateOpen {
			t.Fatalf("after %d faults: %v", breaker.DefaultConsecutiveFailures, s)
		}
		time.Sleep(time.Second)
		if s := b.State(); s != breaker.StateHalfOpen {
			t.Fatalf("after the open period: %v", s)
		}
		close(release)
		<-done
		if s := b.State(); s != breaker.StateHalfOpen {
			t.Errorf("a fault of a call admitted before the breaker opened moved it to %v", s)
		}
	})
}
