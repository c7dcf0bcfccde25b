package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/toolmw/toolmw/middleware/breaker"
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
	0.20: {0.87, 1.11},
}

// target is one checked figure.
type target struct {
	what, rate, value, limit string
	met                      bool
}

// report writes the markdown report and returns how many targets toolmw
// missed.
func report(w io.Writer, results []result, seed uint64) int {
	fmt.Fprintf(w, "Seed %d. Calls arrive evenly at the given rate, each in its own goroutine, whatever the earlier calls are doing. "+
		"Every attempt takes %v of virtual time; retries wait full-jitter exponential backoff from %v, capped at %v. "+
		"Every system makes at most 3 attempts per call.\n\n", seed, latency, backoffBase, backoffCap)
	fmt.Fprintf(w, "- naive: retries every failure.\n")
	fmt.Fprintf(w, "- failsafe_retry: failsafe-go's retry policy.\n")
	fmt.Fprintf(w, "- failsafe_retry_budget: the same with failsafe-go's retry budget (defaults: retries may be at most 20%% of the executions in flight, with at least 3 allowed).\n")
	fmt.Fprintf(w, "- toolmw_retry: toolmw's retry layer with its retry token budget (defaults: 10%% of calls, a reserve of 10 tokens), no breaker.\n")
	fmt.Fprintf(w, "- toolmw: the same with toolmw's breaker layer inside it, with its defaults (see package breaker: "+
		"a run of %d failures that is not a fluke opens it for %v, then %d probe). "+
		"gobreaker times the open period with the real clock, so the simulation holds it in virtual time in front of the real layer (see openGate).\n\n",
		breaker.DefaultConsecutiveFailures, breaker.DefaultOpenFor, breaker.DefaultProbes)

	var targets []target
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
		if r.system == "toolmw" {
			limit := outageRatio*float64(st.calls) + outageReserve
			targets = append(targets,
				target{"outage: attempts ≤ 1.10 × calls + 10", rate(r.sc.rate), strconv.Itoa(st.attempts),
					strconv.FormatFloat(limit, 'f', 0, 64), float64(st.attempts) <= limit},
				target{"outage: attempts per 100 calls after warm-up", rate(r.sc.rate), strconv.Itoa(st.maxWindow),
					strconv.Itoa(windowMax), st.maxWindow <= windowMax})
		}
	}

	fmt.Fprintf(w, "\n### Transient faults\n\n")
	fmt.Fprintf(w, "Each attempt fails independently with the given probability.\n\n")
	fmt.Fprintf(w, "| faults | calls/s | system | calls | success | attempts per call | breaker opens |\n")
	fmt.Fprintf(w, "|---:|---:|---|---:|---:|---:|---:|\n")
	for _, r := range results {
		if r.sc.outage() {
			continue
		}
		ok, per := successRate(r.ok), r.perCall()
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %.4f | %s |\n", pct(r.sc.faults), rate(r.sc.rate), r.system,
			r.sc.calls, pct(ok), per, opens(r.opens))
		if t, found := faultTargets[r.sc.faults]; found && r.system == "toolmw" {
			what := "faults " + strconv.FormatFloat(100*r.sc.faults, 'f', 0, 64) + "%: "
			targets = append(targets,
				target{what + "success", rate(r.sc.rate), pct(ok), "≥ " + pct(t.success), ok >= t.success},
				target{what + "attempts per call", rate(r.sc.rate), strconv.FormatFloat(per, 'f', 4, 64),
					"≤ " + strconv.FormatFloat(t.perCall, 'f', 2, 64), per <= t.perCall})
		}
	}

	failed := 0
	fmt.Fprintf(w, "\n### Targets (toolmw: retry with its budget, and breaker)\n\n")
	fmt.Fprintf(w, "toolmw_retry is the same retry layer and budget without the breaker: comparing its rows with toolmw's separates the breaker's effect from the budget's.\n\n")
	fmt.Fprintf(w, "| target | calls/s | toolmw | limit | met |\n|---|---:|---:|---:|---|\n")
	for _, t := range targets {
		met := "yes"
		if !t.met {
			met, failed = "**NO**", failed+1
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", t.what, t.rate, t.value, t.limit, met)
	}
	return failed
}
