package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSimRunsWaitsInVirtualTime(t *testing.T) {
	s := newSim(epoch)
	var order []string
	for _, c := range []struct {
		name  string
		start time.Duration
		wait  time.Duration
	}{{"a", 0, 3 * time.Second}, {"b", time.Second, time.Second}, {"c", time.Second, 0}} {
		s.Go(epoch.Add(c.start), func() {
			s.Sleep(c.wait)
			order = append(order, c.name+"@"+s.Now().Sub(epoch).String())
		})
	}
	s.Run()
	want := []string{"c@1s", "b@2s", "a@3s"}
	if !slices.Equal(order, want) {
		t.Errorf("order = %v, want %v", order, want)
	}
}

// small is an outage scenario small enough for a unit test.
var small = scenario{name: "outage", rate: 100, calls: 600, down: [2]int{100, 500}}

func TestSimulationIsDeterministic(t *testing.T) {
	for _, sys := range systems {
		a, b := simulate(small, sys, 7), simulate(small, sys, 7)
		if !slices.Equal(a.attempts, b.attempts) || !slices.Equal(a.ok, b.ok) || a.opens != b.opens {
			t.Errorf("%s: two runs with the same seed differ", sys.name)
		}
	}
}

func TestToolmwBoundsTheLoad(t *testing.T) {
	for _, sys := range systems {
		st := simulate(small, sys, 1).outage()
		limit := outageRatio*float64(st.calls) + outageReserve
		switch sys.name {
		case "naive":
			if st.attempts < 29*st.calls/10 { // the last calls may retry after the recovery
				t.Errorf("naive: %d attempts for %d calls, want about 3 each", st.attempts, st.calls)
			}
		case "toolmw", "toolmw_retry":
			if float64(st.attempts) > limit {
				t.Errorf("%s: %d attempts for %d calls, want at most %.0f", sys.name, st.attempts, st.calls, limit)
			}
		}
	}
}

func TestReportAndChart(t *testing.T) {
	scs := []scenario{small, {name: "faults 5%", rate: 10, calls: 300, faults: 0.05}}
	results := runAll(scs, 1)
	var md, svg bytes.Buffer
	report(&md, results, 1)
	for _, want := range []string{"### Outage", "### Transient faults", "### Targets", "| toolmw |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if err := chart(&svg, results); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(svg.String(), "<polyline"); got != len(systems) {
		t.Errorf("chart has %d lines, want %d", got, len(systems))
	}
}
