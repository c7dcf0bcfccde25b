// Package kitrig is what the public conformance kits of the run stores
// (runlimittest, spendtest) have in common: operation ids, goroutines
// racing, hostile keys, and the faults their memory stores inject.
package kitrig

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Racers is how many goroutines race in the concurrency checks.
const Racers = 50

// Op returns the i-th operation id of a check: 32 hexadecimal digits.
func Op(i int) string { return fmt.Sprintf("%032x", i+1) }

// Race runs f(i) on Racers goroutines at once, reports its errors, and
// returns how many returned true.
func Race(t *testing.T, f func(i int) (bool, error)) int {
	t.Helper()
	var n atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range Racers {
		wg.Go(func() {
			<-start
			ok, err := f(i)
			if err != nil {
				t.Errorf("racer %d: %v", i, err)
			}
			if ok {
				n.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	return int(n.Load())
}

// Hostile returns keys a store must keep apart: long (64 KiB, and one
// byte more), binary, look-alike (case, a trailing space, a separator,
// Unicode forms).
func Hostile() []string {
	long := strings.Repeat("r", 64<<10)
	return []string{"a", "A", "a ", "a:b", "a\x00b", "a\nb", "\xff\xfe", "é", "e\u0301", long, long + "x",
		strings.Repeat("\x00", 64)}
}

// Faults makes a memory store fail or hang on demand and counts its
// operations. Its zero value injects nothing; it is safe for concurrent
// use.
type Faults struct {
	mu    sync.Mutex
	errs  map[string]error
	hang  string        // the operation that waits for its context, or ""
	late  string        // the operation applied after its answer is lost, or ""
	after time.Duration // how long after
	calls sync.Map
}

// Fail makes the operation named op (the Store's method, in lower case)
// return err, without effect; nil makes it work again.
func (f *Faults) Fail(op string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.errs == nil {
		f.errs = map[string]error{}
	}
	f.errs[op] = err
}

// Hang makes the operation named op wait for its context to end and
// return its error; "" makes it work again.
func (f *Faults) Hang(op string) {
	f.mu.Lock()
	f.hang = op
	f.mu.Unlock()
}

// Late makes the operation named op answer nothing before its context
// ends, and take effect after, later by after: a Redis that runs a script
// the client stopped waiting for. "" makes it work again.
func (f *Faults) Late(op string, after time.Duration) {
	f.mu.Lock()
	f.late, f.after = op, after
	f.mu.Unlock()
}

// Calls returns how many times the operation named op was called.
func (f *Faults) Calls(op string) int64 {
	n, ok := f.calls.Load(op)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

// Enter counts a call of op and returns the error it must end with, or
// nil. When op hangs, it waits for ctx to end and returns its error; when
// op is late, too, and apply, the operation's effect, runs after the delay
// Late set, on a goroutine of its own; when Fail set an error, it returns
// it.
func (f *Faults) Enter(ctx context.Context, op string, apply func()) error {
	n, _ := f.calls.LoadOrStore(op, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	f.mu.Lock()
	hang, late, after, err := f.hang == op, f.late == op, f.after, f.errs[op]
	f.mu.Unlock()
	if hang || late {
		<-ctx.Done()
		if late {
			go func() {
				time.Sleep(after)
				apply()
			}()
		}
		return ctx.Err()
	}
	return err
}

// Check is one conformance check of a store S.
type Check[S any] struct {
	Name string
	Run  func(t *testing.T, s S)
}

// Run runs each check as a subtest, on a fresh store from newStore.
func Run[S any](t *testing.T, newStore func(t *testing.T) S, checks ...Check[S]) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.Name, func(t *testing.T) { c.Run(t, newStore(t)) })
	}
}
