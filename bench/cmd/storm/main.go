// Command storm simulates retry storms and compares how much load naive
// retries, the retry budgets of failsafe-go, gRPC and the AWS SDKs, and
// toolmw's retry and breaker layers put on a failing dependency, and how
// many calls succeed: through an outage, under independent transient
// faults, and through a metastable failure, where a short overload of a
// dependency with a capacity becomes a lasting one; and a fleet of three
// replicas through the outage, with shared breaker and budget state and
// with per-replica state (see fleet.go).
//
// The simulation is deterministic: a seeded random source and virtual time
// (see sim), so a run takes seconds and its figures depend only on -seed.
// It prints a markdown report and writes two SVG charts, the outage
// scenarios and the metastable one. With -check it exits with status 1
// when toolmw misses a target.
//
//	go run ./cmd/storm -check -svg storm.svg -metastable-svg storm-metastable.svg
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"
)

// scenario is one simulated workload.
type scenario struct {
	name     string
	rate     float64 // calls per second, evenly spaced
	calls    int
	down     [2]int    // the outage: the dependency is down while calls down[0]..down[1]-1 arrive
	faults   float64   // the probability that an attempt fails, independently
	overload *overload // nil: the dependency has no capacity limit
}

// overload describes a dependency with a capacity (see server).
type overload struct {
	workers  int           // requests served at once; capacity = workers / latency
	timeout  time.Duration // per attempt
	trigger  [2]time.Duration
	slowdown float64 // during the trigger, each request takes this many times as long
}

// capacity returns the requests per second the dependency serves, outside
// the trigger.
func (o *overload) capacity() float64 { return float64(o.workers) / latency.Seconds() }

func (sc scenario) outage() bool     { return sc.down[1] > sc.down[0] }
func (sc scenario) metastable() bool { return sc.overload != nil }

// arrival returns when call i arrives.
func (sc scenario) arrival(i int) time.Duration {
	return time.Duration(float64(i) / sc.rate * float64(time.Second))
}

// window is the number of calls over which load is reported.
const window = 100

var rates = []float64{0.5, 10, 100}

// The metastable scenario: 80 calls a second against a dependency serving
// 100 (5 workers, 50ms on average), 80% busy, each attempt timing out after
// 1s (20 times the usual latency). From 30s to 40s every request takes
// twice as long: the capacity is halved, the load is 160% of it. Then the
// dependency is as before, for two minutes.
var metastable = scenario{
	name:  "metastable",
	rate:  80,
	calls: 160 * 80,
	overload: &overload{
		workers:  5,
		timeout:  time.Second,
		trigger:  [2]time.Duration{30 * time.Second, 40 * time.Second},
		slowdown: 2,
	},
}

func scenarios(faultCalls int) []scenario {
	var out []scenario
	for _, r := range rates {
		out = append(out, scenario{name: "outage", rate: r, calls: 5000, down: [2]int{1000, 4000}})
	}
	for _, p := range []float64{0.05, 0.20} {
		for _, r := range rates {
			out = append(out, scenario{name: fmt.Sprintf("faults %.0f%%", p*100), rate: r, calls: faultCalls, faults: p})
		}
	}
	return append(out, metastable)
}

// epoch is the virtual time the simulations start at.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// result is one system's run of one scenario.
type result struct {
	sc       scenario
	system   string
	attempts []int  // attempts that reached the dependency, per call
	ok       []bool // whether the call succeeded, per call
	load     []int  // attempts reaching the dependency, per second
	opens    int    // breaker openings, -1 without a breaker
}

func simulate(sc scenario, sys system, seed uint64) result {
	s := newSim(epoch)
	dep := &dependency{s: s, faults: sc.faults, rand: newRand(seed)}
	if sc.outage() {
		dep.downFrom = epoch.Add(sc.arrival(sc.down[0]))
		dep.downTo = epoch.Add(sc.arrival(sc.down[1]))
	}
	if o := sc.overload; o != nil {
		dep.server = &server{
			free:     make([]time.Time, o.workers),
			timeout:  o.timeout,
			trigger:  [2]time.Time{epoch.Add(o.trigger[0]), epoch.Add(o.trigger[1])},
			slowdown: o.slowdown,
		}
	}
	tool, opens := sys.build(s, dep.call, newRand(seed+1))
	r := result{sc: sc, system: sys.name, attempts: make([]int, sc.calls), ok: make([]bool, sc.calls)}
	var arrive func(i int)
	arrive = func(i int) {
		if i+1 < sc.calls {
			s.Go(epoch.Add(sc.arrival(i+1)), func() { arrive(i + 1) })
		}
		n := 0
		ctx := context.WithValue(context.Background(), attemptsKey{}, &n)
		_, err := tool(ctx, nil)
		r.attempts[i], r.ok[i] = n, err == nil
	}
	s.Go(epoch, func() { arrive(0) })
	s.Run()
	r.opens, r.load = opens(), dep.load
	return r
}

// runAll simulates every scenario for every system, in parallel; the order
// of the results is fixed.
func runAll(scs []scenario, seed uint64) []result {
	results := make([]result, len(scs)*len(systems))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				results[i] = simulate(scs[i/len(systems)], systems[i%len(systems)], seed)
			}
		}()
	}
	for i := range results {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return results
}

func main() {
	check := flag.Bool("check", false, "exit with status 1 when toolmw misses a target")
	svgPath := flag.String("svg", "storm.svg", "where to write the chart of the outage scenarios (empty: none)")
	metaPath := flag.String("metastable-svg", "storm-metastable.svg", "where to write the chart of the metastable scenario (empty: none)")
	seed := flag.Uint64("seed", 1, "the random seed")
	faultCalls := flag.Int("fault-calls", 100000, "calls in each transient-fault scenario")
	flag.Parse()

	scs := scenarios(*faultCalls)
	results := runAll(scs, *seed)
	failed := report(os.Stdout, results, runFleet(scs, *seed), *seed)
	for path, draw := range map[string]func(io.Writer, []result) error{*svgPath: chart, *metaPath: metastableChart} {
		if path == "" {
			continue
		}
		if err := writeFile(path, func(w io.Writer) error { return draw(w, results) }); err != nil {
			fmt.Fprintln(os.Stderr, "storm:", err)
			os.Exit(2)
		}
	}
	if *check && failed > 0 {
		fmt.Fprintf(os.Stderr, "storm: toolmw missed %d target(s)\n", failed)
		os.Exit(1)
	}
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
