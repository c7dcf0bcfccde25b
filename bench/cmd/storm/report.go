package main

import (
	"fmt"
	"io"
	"strconv"
	"time"
)

// outageStats are a run's figures for an outage scenario.
type outageStats struct {
	calls, attempts int // calls arriving during the outage, and their attempts
	maxWindow       int // the most attempts of any window after the first of the outage
	okDuring        float64
	okAfter         float64 // success of the calls arriving after the recovery
}

func (r result) outage() outageStats {
	from, to := r.sc.down[0], r.sc.down[1]
	st := outageStats{calls: to - from}
	for i := from; i < to; i++ {
		st.attempts += r.attempts[i]
	}
	for _, w := range r.windows()[from/window+1:] {
		st.maxWindow = max(st.maxWindow, w)
	}
	st.okDuring = successRate(r.ok[from:to])
	st.okAfter = successRate(r.ok[to:])
	return st
}

// windows returns the attempts of each window of calls, by arrival.
func (r result) windows() []int {
	w := make([]int, (len(r.attempts)+window-1)/window)
	for i, n := range r.attempts {
		w[i/window] += n
	}
	return w
}

func (r result) perCall() float64 {
	total := 0
	for _, n := range r.attempts {
		total += n
	}
	return float64(total) / float64(len(r.attempts))
}

func successRate(ok []bool) float64 {
	n := 0
	for _, o := range ok {
		if o {
			n++
		}
	}
	return float64(n) / float64(len(ok))
}

// goodput returns, for each second of arrivals, the calls arriving in it
// and how many of them succeeded.
func (r result) goodput() (arrived, succeeded []int) {
	for i, ok := range r.ok {
		sec := int(r.sc.arrival(i) / time.Second)
		for len(arrived) <= sec {
			arrived, succeeded = append(arrived, 0), append(succeeded, 0)
		}
		arrived[sec]++
		if ok {
			succeeded[sec]++
		}
	}
	return arrived, succeeded
}

// metaStats are a run's figures for the metastable scenario.
type metaStats struct {
	before, during, after float64       // success of the calls arriving before, during and after the trigger
	peak                  float64       // the most attempts reaching the dependency in one second of the trigger ÷ the calls offered
	recovery              time.Duration // from the trigger's end to the first second from which every second's goodput is ≥ recovered
	recovered             bool
	bestAfter             float64 // the best second's goodput after the trigger
}

// recovered is the share of the offered calls that must succeed, second by
// second, for the dependency to count as recovered.
const recoveredShare = 0.95

func (r result) metastable() metaStats {
	o := r.sc.overload
	from, to := int(o.trigger[0]/time.Second), int(o.trigger[1]/time.Second)
	first, last := int(r.sc.rate)*from, int(r.sc.rate)*to
	st := metaStats{before: successRate(r.ok[:first]), during: successRate(r.ok[first:last]), after: successRate(r.ok[last:])}
	for sec := from; sec < to && sec < len(r.load); sec++ {
		st.peak = max(st.peak, float64(r.load[sec])/r.sc.rate)
	}
	arrived, succeeded := r.goodput()
	bad := to - 1 // the last second after the trigger whose goodput is short
	for sec := to; sec < len(arrived); sec++ {
		share := float64(succeeded[sec]) / float64(arrived[sec])
		st.bestAfter = max(st.bestAfter, share)
		if share < recoveredShare {
			bad = sec
		}
	}
	st.recovered = bad < len(arrived)-1
	st.recovery = time.Duration(bad+1-to) * time.Second
	return st
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 2, 64) + "%" }

func opens(n int) string {
	if n < 0 {
		return "–"
	}
	return strconv.Itoa(n)
}

func rate(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// The targets toolmw must meet at every call rate.
const (
	outageRatio   = 1.10 // attempts during the outage ≤ outageRatio × calls + outageReserve
	outageReserve = 10
	windowMax     = 110 // attempts in any window after warm-up
)

var faultTargets = map[float64]struct{ success, perCall float64 }{
	0.05: {0.9995, 1.06},
	0.20: {0.99, 1.25},
}

// The metastable scenario's targets.
const (
	recoveryMax = 30 * time.Second // from the trigger's end to recovered goodput
	peakMax     = 1.2              // attempts per second during the trigger ÷ calls offered
	naiveMax    = 0.5              // naive retry's goodput in every second after the trigger stays below this (the model's own check)
)

// checked are the systems the targets are checked on: the adaptive budget
// alone, and with the breaker, as the default stack has them.
var checked = map[string]bool{"toolmw_adaptive": true, "toolmw": true}

// target is one checked figure.
type target struct {
	what, rate, system, value, limit string
	met                              bool
}

// report writes the markdown report and returns how many targets were
// missed.
func report(w io.Writer, results []result, fleet []fleetResult, seed uint64) int {
	fmt.Fprintf(w, "Seed %d. Calls arrive evenly at the given rate, each in its own goroutine, whatever the earlier calls are doing. "+
		"Without a capacity limit every attempt takes %v of virtual time. Every system makes at most %d attempts per call and "+
		"waits full-jitter exponential backoff from %v, capped at %v, between them; every system retries every failure, "+
		"timeouts included (toolmw's tool is idempotent).\n\n", seed, latency, maxAttempts, backoffBase, backoffCap)
	for _, sys := range systems {
		fmt.Fprintf(w, "- %s: %s\n", sys.name, sys.about)
	}
	fmt.Fprintf(w, "\nThe peers' budgets are models written from their specifications (failsafe-go's is the library itself), "+
		"run by the same retry loop, so that only the budget differs; gRPC's and the AWS SDKs' own retry loops differ in "+
		"other ways (gRPC has no per-attempt timeout, for one) that are not modelled. failsafe-go's retry policy without a budget "+
		"retries as naive does (its figures were naive's to the digit) and is left out.\n\n")

	var targets []target
	add := func(t target) { targets = append(targets, t) }
	outageSection(w, results, add)
	fleetSection(w, fleet, add)
	faultSection(w, results, add)
	metastableSection(w, results, add)

	failed := 0
	fmt.Fprintf(w, "\n### Targets\n\n")
	fmt.Fprintf(w, "Checked on toolmw_adaptive (the retry layer and its default budget alone) and toolmw (with the breaker); "+
		"the naive row checks the model itself: it must show the failure it claims to prevent. "+
		"The window of 100 calls is checked on toolmw only, as before the adaptive budget: without the breaker the calls of "+
		"one window may spend a token the first calls of the next deposited, since a retry is made after its backoff "+
		"(111 at 100 calls/s, with either budget), while the bound on the whole outage holds.\n\n")
	fmt.Fprintf(w, "| target | calls/s | system | value | limit | met |\n|---|---:|---|---:|---:|---|\n")
	for _, t := range targets {
		met := "yes"
		if !t.met {
			met, failed = "**NO**", failed+1
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", t.what, t.rate, t.system, t.value, t.limit, met)
	}
	return failed
}

func outageSection(w io.Writer, results []result, add func(target)) {
	fmt.Fprintf(w, "### Outage\n\n")
	fmt.Fprintf(w, "The dependency answers while calls 0–999 arrive, is 100%% down while calls 1000–3999 arrive, then recovers (calls 4000–4999). Warm-up is the outage's first window of %d calls.\n\n", window)
	fmt.Fprintf(w, "| calls/s | system | attempts during outage (3000 calls) | per call | most attempts per %d calls after warm-up | success during outage | success after recovery | breaker opens |\n", window)
	fmt.Fprintf(w, "|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		if !r.sc.outage() {
			continue
		}
		st := r.outage()
		fmt.Fprintf(w, "| %s | %s | %d | %.3f | %d | %s | %s | %s |\n", rate(r.sc.rate), r.system, st.attempts,
			float64(st.attempts)/float64(st.calls), st.maxWindow, pct(st.okDuring), pct(st.okAfter), opens(r.opens))
		if checked[r.system] {
			limit := outageRatio*float64(st.calls) + outageReserve
			add(target{"outage: attempts ≤ 1.10 × calls + 10", rate(r.sc.rate), r.system, strconv.Itoa(st.attempts),
				strconv.FormatFloat(limit, 'f', 0, 64), float64(st.attempts) <= limit})
		}
		if r.system == "toolmw" {
			add(target{"outage: attempts per 100 calls after warm-up", rate(r.sc.rate), r.system, strconv.Itoa(st.maxWindow),
				strconv.Itoa(windowMax), st.maxWindow <= windowMax})
		}
	}
}

func faultSection(w io.Writer, results []result, add func(target)) {
	fmt.Fprintf(w, "\n### Transient faults\n\n")
	fmt.Fprintf(w, "Each attempt fails independently with the given probability; the dependency is never overloaded.\n\n")
	fmt.Fprintf(w, "| faults | calls/s | system | calls | success | attempts per call | breaker opens |\n")
	fmt.Fprintf(w, "|---:|---:|---|---:|---:|---:|---:|\n")
	for _, r := range results {
		if r.sc.outage() || r.sc.metastable() {
			continue
		}
		ok, per := successRate(r.ok), r.perCall()
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %.4f | %s |\n", pct(r.sc.faults), rate(r.sc.rate), r.system,
			r.sc.calls, pct(ok), per, opens(r.opens))
		if t, found := faultTargets[r.sc.faults]; found && checked[r.system] {
			what := "faults " + strconv.FormatFloat(100*r.sc.faults, 'f', 0, 64) + "%: "
			add(target{what + "success", rate(r.sc.rate), r.system, pct(ok), "≥ " + pct(t.success), ok >= t.success})
			add(target{what + "attempts per call", rate(r.sc.rate), r.system, strconv.FormatFloat(per, 'f', 4, 64),
				"≤ " + strconv.FormatFloat(t.perCall, 'f', 2, 64), per <= t.perCall})
		}
	}
}

func metastableSection(w io.Writer, results []result, add func(target)) {
	o := metastable.overload
	fmt.Fprintf(w, "\n### Metastable failure\n\n")
	fmt.Fprintf(w, "![goodput and dependency load per second in the metastable scenario, one panel per system](storm-metastable.svg)\n\n")
	fmt.Fprintf(w, "The dependency has a capacity: %d workers serve one request each at a time, first come first served, "+
		"taking %v on average (exponentially distributed), so %.0f requests a second. Offered more, its queue grows, "+
		"its latency with it, and an attempt not answered within %v times out and fails; the server still does the work "+
		"when the request's turn comes (it cannot see its client leave), so timed-out work consumes capacity. "+
		"Calls arrive at %s a second, %.0f%% of the capacity. From %v to %v (the trigger) every request takes %.0f× as long: "+
		"the capacity is halved, and the offered load is %.0f%% of it. Then the dependency is as before until calls stop at %v. "+
		"This is the mechanism of the metastable failures of Bronson et al. (HotOS 2021) and Huang et al. (OSDI 2022): "+
		"once the queue is longer than the timeout every attempt times out and is retried, and the retries keep the queue "+
		"long after the trigger is gone.\n\n",
		o.workers, latency, o.capacity(), o.timeout, rate(metastable.rate), 100*metastable.rate/o.capacity(),
		o.trigger[0], o.trigger[1], o.slowdown, 100*metastable.rate*o.slowdown/o.capacity(), metastable.arrival(metastable.calls))
	fmt.Fprintf(w, "Goodput is the share of the calls arriving in a second that succeed; load is the attempts reaching the dependency in a second. "+
		"Recovered: goodput ≥ %.0f%% in every second from then to the end of the run, counted from the trigger's end.\n\n", 100*recoveredShare)
	fmt.Fprintf(w, "| system | success before | during | after the trigger | peak load during the trigger (× offered) | recovered after | best second after the trigger | attempts per call | breaker opens |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		if !r.sc.metastable() {
			continue
		}
		st := r.metastable()
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.2f | %s | %s | %.3f | %s |\n", r.system, pct(st.before), pct(st.during), pct(st.after),
			st.peak, recovery(st), pct(st.bestAfter), r.perCall(), opens(r.opens))
		if checked[r.system] {
			add(target{"metastable: goodput ≥ 95% again after the trigger", rate(r.sc.rate), r.system, recovery(st),
				"≤ " + strconv.Itoa(int(recoveryMax/time.Second)) + " s", st.recovered && st.recovery <= recoveryMax})
			add(target{"metastable: peak load during the trigger (× offered)", rate(r.sc.rate), r.system,
				strconv.FormatFloat(st.peak, 'f', 2, 64), "≤ " + strconv.FormatFloat(peakMax, 'f', 2, 64), st.peak <= peakMax})
		}
		if r.system == "naive" {
			add(target{"metastable, the model: naive retry's best second after the trigger", rate(r.sc.rate), r.system,
				pct(st.bestAfter), "< " + pct(naiveMax), st.bestAfter < naiveMax})
		}
	}
}

func recovery(st metaStats) string {
	if !st.recovered {
		return "never"
	}
	return strconv.Itoa(int(st.recovery/time.Second)) + " s"
}
