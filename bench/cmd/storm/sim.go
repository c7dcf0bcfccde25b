package main

import (
	"container/heap"
	"sync"
	"time"

	"github.com/toolmw/toolmw/clock"
)

// sim is a deterministic discrete-event simulation on a virtual clock.
//
// Every simulated call runs in its own goroutine, so the code under test
// (the real toolmw retry and breaker layers, failsafe-go's executor) runs
// unchanged, concurrently in virtual time. Determinism comes from running one
// goroutine at a time: the loop starts the next event (a call's arrival or a
// timer firing) only once every goroutine has either finished or is waiting
// on one of the sim's timers. A goroutine counts as waiting from the moment
// it asks a sim timer for its channel (Timer.C), which the code under test
// does right before it blocks on it. Waits therefore cost virtual time only,
// and a run's figures depend on its seed alone.
//
// sim implements clock.Clock. It is safe for concurrent use.
type sim struct {
	mu      sync.Mutex
	idle    *sync.Cond // signalled when active drops to zero
	now     time.Time
	queue   events
	seq     uint64
	active  int         // goroutines running, not waiting on a sim timer
	waiting int         // workers that finished their function and wait for another
	work    chan func() // hands a function to a waiting worker
}

var _ clock.Clock = (*sim)(nil)

func newSim(start time.Time) *sim {
	s := &sim{now: start, work: make(chan func())}
	s.idle = sync.NewCond(&s.mu)
	return s
}

// Now returns the virtual time.
func (s *sim) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

// NewTimer returns a timer firing d from now in virtual time.
func (s *sim) NewTimer(d time.Duration) clock.Timer {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &simTimer{s: s, c: make(chan time.Time, 1)}
	if d <= 0 {
		t.done = true
		t.c <- s.now
		return t
	}
	s.push(&event{at: s.now.Add(d), timer: t})
	return t
}

// Sleep waits d in virtual time.
func (s *sim) Sleep(d time.Duration) {
	<-s.NewTimer(d).C()
}

// Go starts fn in a new goroutine at virtual time at.
func (s *sim) Go(at time.Time, fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.push(&event{at: at, start: fn})
}

// Run processes events until none is left and every goroutine has finished.
func (s *sim) Run() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for s.active > 0 {
			s.idle.Wait()
		}
		if len(s.queue) == 0 {
			close(s.work) // the waiting workers return
			return
		}
		e := heap.Pop(&s.queue).(*event)
		if e.at.After(s.now) {
			s.now = e.at
		}
		if t := e.timer; t != nil {
			if t.done { // stopped
				continue
			}
			t.done = true
			if t.waiting {
				s.active++
			}
			t.c <- s.now
			continue
		}
		s.active++
		if s.waiting > 0 {
			s.waiting--
			s.work <- e.start // the worker needs no lock to receive it
		} else {
			go s.worker(e.start)
		}
	}
}

// worker runs fn, then the functions handed to it, until the run ends.
// Reusing goroutines keeps their grown stacks: a call through the layers
// under test needs a few kilobytes, and growing a new goroutine's stack for
// each call would cost a quarter of the run.
func (s *sim) worker(fn func()) {
	for {
		fn()
		s.mu.Lock()
		s.waiting++
		s.release()
		s.mu.Unlock()
		var ok bool
		if fn, ok = <-s.work; !ok {
			return
		}
	}
}

func (s *sim) push(e *event) {
	s.seq++
	e.seq = s.seq
	heap.Push(&s.queue, e)
}

// release records that a goroutine stopped running; s.mu is held.
func (s *sim) release() {
	s.active--
	if s.active == 0 {
		s.idle.Signal()
	}
}

type simTimer struct {
	s       *sim
	c       chan time.Time
	waiting bool // its goroutine is waiting on c
	done    bool // fired or stopped
}

// C returns the timer's channel and marks its goroutine as waiting: callers
// ask for the channel right before they block on it.
func (t *simTimer) C() <-chan time.Time {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if !t.done && !t.waiting {
		t.waiting = true
		t.s.release()
	}
	return t.c
}

func (t *simTimer) Stop() bool {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if t.done {
		return false
	}
	t.done = true
	if t.waiting {
		// Its owner stopped waiting on another channel (a cancelled
		// context) and runs again.
		t.waiting = false
		t.s.active++
	}
	return true
}

// event is a goroutine to start or a timer to fire, at a virtual time.
type event struct {
	at    time.Time
	seq   uint64 // ties are broken in the order of scheduling
	timer *simTimer
	start func()
}

type events []*event

func (q events) Len() int { return len(q) }
func (q events) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q events) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *events) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *events) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return e
}
