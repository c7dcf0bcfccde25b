// Package runstate attaches state to an agent run: a value per
// [budget.Run], made on first use and dropped when the Run itself is
// garbage collected, so what a layer keeps for a run ends with the run
// without the loop having to say so.
//
// It exists because budget.Run has no slot for other packages' state; the
// map below holds the Run only weakly.
package runstate

import (
	"runtime"
	"sync"
	"weak"

	"github.com/toolmw/toolmw/budget"
)

// Slot holds one value of type T per run. The zero Slot is ready to use
// and safe for concurrent use. A value must not refer to its Run, or the
// Run (and the value) would never be collected.
type Slot[T any] struct {
	mu sync.Mutex
	m  map[weak.Pointer[budget.Run]]*T
}

// Get returns the value attached to run, making it with make on first use.
// make runs under the Slot's lock: keep it to an allocation.
func (s *Slot[T]) Get(run *budget.Run, make func() *T) *T {
	wp := weak.Make(run)
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[wp]; ok {
		return v
	}
	if s.m == nil {
		s.m = map[weak.Pointer[budget.Run]]*T{}
	}
	v := make()
	s.m[wp] = v
	runtime.AddCleanup(run, s.drop, wp)
	return v
}

// Len returns how many runs have a value, for tests.
func (s *Slot[T]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

func (s *Slot[T]) drop(wp weak.Pointer[budget.Run]) {
	s.mu.Lock()
	delete(s.m, wp)
	s.mu.Unlock()
}
