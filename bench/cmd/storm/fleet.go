package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/breaker/breakertest"
	"github.com/toolmw/toolmw/middleware/retry"
)

// The fleet scenario: the outage scenarios again, their calls spread over
// three replicas of the toolmw system (round robin), each with its own
// stack, in front of one dependency. With per-replica state each replica
// has its own retry budget and its own breaker, and rediscovers the outage
// on its own; with shared state the replicas draw on one retry budget and
// share one breaker through a breaker.Store, as they would on Redis
// (adapters/redisstate). The simulation stands an in-memory Store in for Redis
// (breakertest.MemStore, on the virtual clock: answers take no time, so
// the figures are those of a Store that never fails), and one budget.Retry
// object shared by the replicas' retry layers for the shared bucket (a
// shared bucket whose deposits arrive at once; adapters/redisstate batches them
// every 10 ms).

// replicas is the fleet's size.
const replicas = 3

// cachePeriod is how long a replica trusts the shared breaker state it
// read: the breaker's default.
const cachePeriod = breaker.DefaultCachePeriod

// fleetSystem is a system of several replicas; ops reports the Store's
// operations (Redis's round trips), or -1 without one.
type fleetSystem struct {
	name  string
	about string
	build func(s *sim, dep toolmw.Tool, jitter *lockedRand) (tool toolmw.Tool, opens func() int, ops func() int64)
}

var fleetSystems = []fleetSystem{
	{"fleet_local", "3 replicas, each the toolmw system (adaptive budget and breaker) with its own state.", buildFleet(false)},
	{"fleet_shared", "3 replicas, each the toolmw system, sharing one retry budget and one breaker (a breaker.Store, " +
		"cache period 1 s; one probe lease across the fleet).", buildFleet(true)},
}

// buildFleet builds replicas stacks and spreads the calls over them, round
// robin; the simulation runs one call at a time, so the order is fixed.
func buildFleet(shared bool) func(*sim, toolmw.Tool, *lockedRand) (toolmw.Tool, func() int, func() int64) {
	return func(s *sim, dep toolmw.Tool, jitter *lockedRand) (toolmw.Tool, func() int, func() int64) {
		var stacks []toolmw.Tool
		var counts []func() int
		ops := func() int64 { return -1 }
		if !shared {
			for range replicas {
				tool, opens := buildToolmw(true, nil)(s, dep, jitter)
				stacks, counts = append(stacks, tool), append(counts, opens)
			}
		} else {
			store := breakertest.NewMemStore(s)
			bucket := budget.NewAdaptive()
			ops = store.Ops
			for range replicas {
				stacks = append(stacks, toolmw.MustWrap(toolmw.Spec{Name: "dependency", Idempotent: true}, dep,
					retry.New(retry.WithMaxAttempts(maxAttempts), retry.WithClock(s), retry.WithRand(jitter.Float64),
						retry.WithBudget(bucket)),
					breaker.New(breaker.WithStore(store), breaker.WithClock(s), breaker.WithCachePeriod(cachePeriod))))
			}
			counts = append(counts, func() int { return int(store.Opens()) })
		}
		var next atomic.Uint64
		tool := func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			return stacks[(next.Add(1)-1)%replicas](ctx, args)
		}
		opens := func() int {
			total := 0
			for _, c := range counts {
				total += c()
			}
			return total
		}
		return tool, opens, ops
	}
}

// fleetResult is a fleet system's run of an outage scenario.
type fleetResult struct {
	result
	ops int64 // the Store's operations, -1 without one
}

func simulateFleet(sc scenario, fs fleetSystem, seed uint64) fleetResult {
	var ops func() int64
	sys := system{name: fs.name, about: fs.about, build: func(s *sim, dep toolmw.Tool, jitter *lockedRand) (toolmw.Tool, func() int) {
		tool, opens, o := fs.build(s, dep, jitter)
		ops = o
		return tool, opens
	}}
	r := simulate(sc, sys, seed)
	return fleetResult{result: r, ops: ops()}
}

// runFleet simulates the outage scenarios of scs for every fleet system, in
// parallel; the order of the results is fixed.
func runFleet(scs []scenario, seed uint64) []fleetResult {
	var outages []scenario
	for _, sc := range scs {
		if sc.outage() {
			outages = append(outages, sc)
		}
	}
	out := make([]fleetResult, len(outages)*len(fleetSystems))
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() { out[i] = simulateFleet(outages[i/len(fleetSystems)], fleetSystems[i%len(fleetSystems)], seed) })
	}
	wg.Wait()
	return out
}

// fleetSection writes the fleet scenario's table and checks its targets:
// with shared state, the fleet's attempts during the outage stay within
// the single-process bound, and within those of per-replica state.
func fleetSection(w io.Writer, results []fleetResult, add func(target)) {
	if len(results) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### Fleet: %d replicas, shared state vs per-replica state\n\n", replicas)
	fmt.Fprintf(w, "The outage scenarios again, their calls spread round robin over %d replicas of the toolmw system in front of one dependency. ", replicas)
	fmt.Fprintf(w, "Per-replica state: each replica has its own retry budget and breaker. Shared state: one retry budget and one breaker "+
		"for the fleet, the breaker through a breaker.Store with a cache period of %v. The simulation stands an in-memory Store "+
		"(breakertest.MemStore, on the virtual clock) in for Redis, and one budget.Retry shared by the replicas' retry layers "+
		"for Redis's shared bucket; store ops are the Store's operations, Redis's round trips.\n\n", cachePeriod)
	fmt.Fprintf(w, "With shared state the first replica to see five failures opens the breaker for all: the others learn it "+
		"from their next fault's report or within one cache period, and one probe per open period serves the fleet. "+
		"The price is at the recovery: the replicas that did not probe trust the half-open state they read for a cache "+
		"period, so they refuse calls for up to %v after the probe has closed the breaker (the success after recovery "+
		"column at 100 calls/s). At 0.5 calls/s a replica calls every 6 s, longer than the cache period, so every call "+
		"reads the Store.\n\n", cachePeriod)
	for _, sys := range fleetSystems {
		fmt.Fprintf(w, "- %s: %s\n", sys.name, sys.about)
	}
	fmt.Fprintf(w, "\n| calls/s (fleet) | system | attempts during outage (3000 calls) | per call | most attempts per %d calls after warm-up | success during outage | success after recovery | breaker opens (the fleet's, or all replicas') | store ops |\n", window)
	fmt.Fprintf(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
	local := map[float64]int{} // attempts during the outage with per-replica state, by rate
	for _, r := range results {
		if r.system == "fleet_local" {
			local[r.sc.rate] = r.outage().attempts
		}
	}
	for _, r := range results {
		st := r.outage()
		ops := "–"
		if r.ops >= 0 {
			ops = strconv.FormatInt(r.ops, 10)
		}
		fmt.Fprintf(w, "| %s | %s | %d | %.3f | %d | %s | %s | %s | %s |\n", rate(r.sc.rate), r.system, st.attempts,
			float64(st.attempts)/float64(st.calls), st.maxWindow, pct(st.okDuring), pct(st.okAfter), opens(r.opens), ops)
		if r.system == "fleet_shared" {
			limit := outageRatio*float64(st.calls) + outageReserve
			add(target{"fleet, shared state: attempts ≤ 1.10 × calls + 10", rate(r.sc.rate), r.system, strconv.Itoa(st.attempts),
				strconv.FormatFloat(limit, 'f', 0, 64), float64(st.attempts) <= limit})
			if n, ok := local[r.sc.rate]; ok {
				add(target{"fleet: attempts with shared state ≤ with per-replica state", rate(r.sc.rate), r.system,
					strconv.Itoa(st.attempts), strconv.Itoa(n), st.attempts <= n})
			}
		}
	}
}
