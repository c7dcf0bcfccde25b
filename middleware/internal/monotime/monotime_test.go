package monotime

import (
	"testing"
	"time"
)

func TestNowIsMonotonicAndCloseToTheWallClock(t *testing.T) {
	a := Now()
	wall := time.Now()
	b := Now()
	if b.Before(a) {
		t.Errorf("Now went back: %v then %v", a, b)
	}
	if d := wall.Sub(a); d < -time.Second || d > time.Second {
		t.Errorf("Now is %v away from time.Now", d)
	}
	// The value carries a monotonic reading: Round(0) strips it, String
	// shows it as "m=".
	if s := a.String(); len(s) == len(a.Round(0).String()) {
		t.Errorf("Now() = %s has no monotonic reading", s)
	}
	if d := time.Until(a.Add(time.Hour)); d < 59*time.Minute || d > time.Hour {
		t.Errorf("time.Until an hour from Now = %v", d)
	}
}
