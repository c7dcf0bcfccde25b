package clock_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFakeTimers(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := clock.NewFake(t0)
	a := f.NewTimer(2 * time.Second)
	b := f.NewTimer(time.Second)
	c := f.NewTimer(3 * time.Second)
	if !c.Stop() {
		t.Fatal("Stop of a waiting timer reported false")
	}
	f.Advance(1500 * time.Millisecond)
	select {
	case got := <-b.C():
		if !got.Equal(t0.Add(time.Second)) {
			t.Fatalf("b fired with %v", got)
		}
	default:
		t.Fatal("b did not fire")
	}
	select {
	case <-a.C():
		t.Fatal("a fired early")
	default:
	}
	if !f.AdvanceToNext() {
		t.Fatal("AdvanceToNext found no timer")
	}
	<-a.C()
	if got := f.Now(); !got.Equal(t0.Add(2 * time.Second)) {
		t.Fatalf("Now = %v", got)
	}
	if f.AdvanceToNext() || f.Timers() != 0 {
		t.Fatal("timers left")
	}
	now := f.NewTimer(0)
	<-now.C()
}

func TestWaitForTimers(t *testing.T) {
	f := clock.NewFake(time.Now())
	done := make(chan struct{})
	go func() {
		<-f.NewTimer(time.Minute).C()
		close(done)
	}()
	f.WaitForTimers(1)
	f.Advance(time.Minute)
	<-done
}

func TestOr(t *testing.T) {
	if clock.Or(nil) != clock.System {
		t.Fatal("Or(nil) is not System")
	}
	f := clock.NewFake(time.Now())
	if clock.Or(f) != clock.Clock(f) {
		t.Fatal("Or(f) is not f")
	}
}
