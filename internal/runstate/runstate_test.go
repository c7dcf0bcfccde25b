package runstate

import (
	"runtime"
	"testing"
	"time"

	"github.com/toolmw/toolmw/budget"
)

// TestEndsWithTheRun: a run's value is the same on every Get, another run
// has its own, and the value is dropped once the run is collected.
func TestEndsWithTheRun(t *testing.T) {
	var s Slot[int]
	mk := func() *int { return new(int) }
	a, b := budget.NewRun(), budget.NewRun()
	first := s.Get(a, mk)
	if s.Get(a, mk) != first || s.Get(b, mk) == first {
		t.Fatal("one value per run")
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	a, b = nil, nil
	_, _ = a, b
	for i := 0; s.Len() > 0 && i < 100; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond) // cleanups run on their own goroutine
	}
	if n := s.Len(); n != 0 {
		t.Fatalf("%d values outlived their runs", n)
	}
}
