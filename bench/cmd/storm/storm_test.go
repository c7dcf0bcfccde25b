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
		case "toolmw", "toolmw_adaptive", "toolmw_fixed":
			if float64(st.attempts) > limit {
				t.Errorf("%s: %d attempts for %d calls, want at most %.0f", sys.name, st.attempts, st.calls, limit)
			}
		}
	}
}

func TestReportAndChart(t *testing.T) {
	scs := []scenario{small, {name: "faults 5%", rate: 10, calls: 300, faults: 0.05}, shortMetastable}
	results := runAll(scs, 1)
	var md, svg, meta bytes.Buffer
	report(&md, results, runFleet(scs, 1), 1)
	for _, want := range []string{"### Outage", "### Transient faults", "### Metastable failure", "### Targets", "| toolmw |", "| fleet_shared |", "storm-metastable.svg"} {
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
	if err := metastableChart(&meta, results); err != nil {
		t.Fatal(err)
	}
	// Per system: the capacity guide, the load and the goodput.
	if got := strings.Count(meta.String(), "<polyline"); got != 3*len(systems) {
		t.Errorf("metastable chart has %d lines, want %d", got, 3*len(systems))
	}
}

// shortMetastable is the metastable scenario, shortened for a unit test:
// 10s before the trigger, 40s after it.
var shortMetastable = scenario{
	name:  "metastable",
	rate:  80,
	calls: 60 * 80,
	overload: &overload{
		workers:  5,
		timeout:  time.Second,
		trigger:  [2]time.Duration{10 * time.Second, 20 * time.Second},
		slowdown: 2,
	},
}

// The model shows the failure it claims to prevent, and the adaptive budget
// prevents it.
func TestMetastable(t *testing.T) {
	for _, sys := range systems {
		if sys.name != "naive" && sys.name != "toolmw_adaptive" {
			continue
		}
		st := simulate(shortMetastable, sys, 1).metastable()
		t.Logf("%s: %+v", sys.name, st)
		switch sys.name {
		case "naive":
			if st.bestAfter >= naiveMax {
				t.Errorf("naive: goodput %v in a second after the trigger: the model shows no metastable failure", st.bestAfter)
			}
		case "toolmw_adaptive":
			if !st.recovered || st.recovery > recoveryMax || st.peak > peakMax {
				t.Errorf("toolmw_adaptive: recovered %v after %v, peak %.2f", st.recovered, st.recovery, st.peak)
			}
		}
	}
}

// The server serves first come first served on its workers, and a trigger
// slows what starts during it.
func TestServer(t *testing.T) {
	sv := &server{
		free:     make([]time.Time, 2),
		timeout:  time.Second,
		trigger:  [2]time.Time{epoch.Add(time.Second), epoch.Add(2 * time.Second)},
		slowdown: 3,
	}
	r := newRand(1)
	var done []time.Duration
	for range 3 { // two start at once; the third waits for the first free worker
		done = append(done, sv.admit(epoch, r).Sub(epoch))
	}
	if first := min(done[0], done[1]); done[0] <= 0 || done[1] <= 0 || done[2] <= first {
		t.Errorf("served at %v: the third must start when the first worker frees", done)
	}
	// Mean service time: about latency outside the trigger, slowdown × inside.
	for _, tc := range []struct {
		at   time.Duration
		want time.Duration
	}{{10 * time.Second, latency}, {1500 * time.Millisecond, 3 * latency}} {
		var total time.Duration
		const n = 4000
		for range n {
			sv.free = make([]time.Time, 1)
			at := epoch.Add(tc.at)
			total += sv.admit(at, r).Sub(at)
		}
		if mean := total / n; mean < tc.want*9/10 || mean > tc.want*11/10 {
			t.Errorf("at %v: mean service %v, want about %v", tc.at, mean, tc.want)
		}
	}
}

// The peers' quotas follow their specifications step by step.
func TestQuotas(t *testing.T) {
	timeout, unavailable := error(errTimeout), error(errUnavailable)
	t.Run("grpc", func(t *testing.T) {
		q := newGRPCThrottle().(*grpcThrottle)
		// 10 tokens: failures take 1 each; a retry only while tokens > 5.
		for i, want := range []bool{true, true, true, true, false, false} {
			if got, _ := q.failed(1, unavailable); got != want {
				t.Fatalf("failure %d: retry = %v, want %v (tokens %v)", i+1, got, want, q.tokens)
			}
		}
		if q.tokens != 4 {
			t.Fatalf("tokens %v after 6 failures, want 4", q.tokens)
		}
		for range 11 { // 11 successes add 1.1: 5.1 > 5
			q.succeeded(1, 0)
		}
		if got, _ := q.failed(1, unavailable); got { // 4.1
			t.Fatal("retry allowed at 4.1 tokens")
		}
		for range 1000 {
			q.succeeded(1, 0)
		}
		if q.tokens != 10 {
			t.Fatalf("tokens %v, want at most maxTokens 10", q.tokens)
		}
	})
	t.Run("aws", func(t *testing.T) {
		q := newAWSQuota().(*awsQuota)
		if ok, price := q.failed(1, unavailable); !ok || price != 5 || q.tokens != 495 {
			t.Fatalf("a retry: %v, price %d, tokens %d; want true, 5, 495", ok, price, q.tokens)
		}
		if ok, price := q.failed(2, timeout); !ok || price != 10 || q.tokens != 485 {
			t.Fatalf("a timeout's retry: %v, price %d, tokens %d; want true, 10, 485", ok, price, q.tokens)
		}
		if ok, _ := q.failed(maxAttempts, unavailable); ok || q.tokens != 485 {
			t.Fatalf("the last attempt took a token: tokens %d", q.tokens)
		}
		q.succeeded(3, 10) // a retry that succeeds gives its cost back
		q.succeeded(1, 0)  // a first attempt that succeeds adds 1
		if q.tokens != 496 {
			t.Fatalf("tokens %d, want 496", q.tokens)
		}
		for range 10 {
			q.succeeded(1, 0)
		}
		if q.tokens != awsTokens {
			t.Fatalf("tokens %d, want at most %d", q.tokens, awsTokens)
		}
		q.tokens = 9
		if ok, _ := q.failed(1, timeout); ok || q.tokens != 9 {
			t.Fatalf("a timeout retried with 9 tokens: tokens %d", q.tokens)
		}
	})
}

// The fleet's runs are deterministic, and shared state puts no more load
// on the dependency during the outage than per-replica state, within the
// single-process bound; the shared breaker opens once for the fleet where
// each replica's opens on its own.
func TestFleetSharesTheOutage(t *testing.T) {
	by := map[string]fleetResult{}
	for _, fs := range fleetSystems {
		a, b := simulateFleet(small, fs, 7), simulateFleet(small, fs, 7)
		if !slices.Equal(a.attempts, b.attempts) || !slices.Equal(a.ok, b.ok) || a.opens != b.opens || a.ops != b.ops {
			t.Errorf("%s: two runs with the same seed differ", fs.name)
		}
		by[fs.name] = a
	}
	local, shared := by["fleet_local"], by["fleet_shared"]
	l, s := local.outage(), shared.outage()
	t.Logf("attempts during the outage: per-replica %d, shared %d; opens %d, %d; store ops %d", l.attempts, s.attempts, local.opens, shared.opens, shared.ops)
	if limit := outageRatio*float64(s.calls) + outageReserve; float64(s.attempts) > limit || s.attempts > l.attempts {
		t.Errorf("shared state: %d attempts, want at most %.0f and at most per-replica state's %d", s.attempts, limit, l.attempts)
	}
	if shared.opens != 1 || local.opens != replicas || shared.ops <= 0 || local.ops != -1 {
		t.Errorf("opens %d (shared), %d (per replica), store ops %d, %d: want 1, %d, some, none",
			shared.opens, local.opens, shared.ops, local.ops, replicas)
	}
}
