package state_test

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolmw/toolmw/state"
)

// gauge is an instance that publishes one value.
type gauge struct {
	name string
	v    atomic.Int64
}

func read(i state.Instrument) func(*gauge, state.Emit) {
	return func(g *gauge, emit state.Emit) { emit(i, g.name, "", float64(g.v.Load())) }
}

// values returns the series of i by name.
func values(r *state.Registry, i state.Instrument) map[string]float64 {
	m := map[string]float64{}
	for _, s := range r.Collect() {
		if s.Instrument == i {
			m[s.Name+"|"+s.Detail] = s.Value
		}
	}
	return m
}

func TestReadAtCollection(t *testing.T) {
	r := state.NewRegistry()
	g := &gauge{name: "search"}
	state.Register(r, g, read(state.BulkheadInFlight))
	g.v.Store(3)
	if got := values(r, state.BulkheadInFlight)["search|"]; got != 3 {
		t.Fatalf("in flight = %v, want 3", got)
	}
	g.v.Store(1)
	if got := values(r, state.BulkheadInFlight)["search|"]; got != 1 {
		t.Fatalf("in flight = %v, want 1 (read at collection)", got)
	}
	state.Register(r, g, read(state.BulkheadInFlight)) // twice: once
	if r.Len() != 1 {
		t.Fatalf("Len = %d after registering one instance twice", r.Len())
	}
	runtime.KeepAlive(g)
}

func TestMerges(t *testing.T) {
	r := state.NewRegistry()
	var keep []*gauge
	for _, v := range []int64{0, 2, 1} {
		for _, i := range []state.Instrument{state.BreakerState, state.RetryBudgetTokens, state.BulkheadQueued} {
			g := &gauge{name: "same"}
			g.v.Store(v)
			state.Register(r, g, read(i))
			keep = append(keep, g)
		}
	}
	for i, want := range map[state.Instrument]float64{state.BreakerState: 2, state.RetryBudgetTokens: 0, state.BulkheadQueued: 3} {
		if got := values(r, i)["same|"]; got != want {
			t.Errorf("%v folded to %v, want %v", i, got, want)
		}
	}
	runtime.KeepAlive(keep)
}

// TestCollectedInstancesLeave: an instance no longer reachable is
// collected, and its reader leaves the registry (tools made per request
// do not accumulate).
func TestCollectedInstancesLeave(t *testing.T) {
	r := state.NewRegistry()
	for i := range 100 {
		state.Register(r, &gauge{name: strconv.Itoa(i)}, read(state.HedgesStarted))
	}
	kept := &gauge{name: "kept"}
	state.Register(r, kept, read(state.HedgesStarted))
	deadline := time.Now().Add(10 * time.Second)
	for r.Len() > 1 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := r.Len(); n != 1 {
		t.Fatalf("Len = %d after the instances were dropped, want 1", n)
	}
	if _, ok := values(r, state.HedgesStarted)["kept|"]; !ok {
		t.Fatal("the live instance is not reported")
	}
	runtime.KeepAlive(kept)
}

// TestHostileNamesBounded: 1,000 distinct hostile names (and details)
// make at most MaxSeries+1 series per instrument; every name reported is
// bounded valid UTF-8.
func TestHostileNamesBounded(t *testing.T) {
	const max = 50
	r := state.NewRegistry(state.WithMaxSeries(max))
	var keep []*gauge
	for i := range 1000 {
		g := &gauge{name: strings.Repeat("\xff\x00k", 40) + strconv.Itoa(i)}
		g.v.Store(1)
		state.Register(r, g, func(g *gauge, emit state.Emit) {
			emit(state.StoreErrors, g.name, g.name, 1)
			emit(state.BreakerState, g.name, "", 1)
		})
		keep = append(keep, g)
	}
	for range 2 { // admission is stable across collections
		series := r.Collect()
		per := map[state.Instrument]int{}
		total := 0.0
		for _, s := range series {
			per[s.Instrument]++
			if s.Instrument == state.StoreErrors {
				total += s.Value
			}
			for _, v := range []string{s.Name, s.Detail} {
				if len(v) > state.MaxNameLen || !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
					t.Fatalf("unbounded name %q", v)
				}
			}
		}
		for i, n := range per {
			if n > max+1 {
				t.Errorf("%v: %d series, bound %d", i, n, max+1)
			}
		}
		if total != 1000 {
			t.Errorf("store errors sum to %v, want 1000: folding lost values", total)
		}
	}
	runtime.KeepAlive(keep)
}

func TestConcurrentRegisterCollect(t *testing.T) {
	r := state.NewRegistry()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				g := &gauge{name: strconv.Itoa(w*1000 + i)}
				state.Register(r, g, read(state.BulkheadLimit))
				if i%20 == 0 {
					r.Collect()
					runtime.GC()
				}
			}
		})
	}
	wg.Wait()
	r.Collect()
}

func TestInstrumentsMerges(t *testing.T) {
	all := state.Instruments()
	if len(all) == 0 || all[0] != state.BreakerState {
		t.Fatalf("Instruments() = %v", all)
	}
	if state.BreakerState.Merge() != state.Highest || state.RetryBudgetTokens.Merge() != state.Lowest || state.StoreErrors.Merge() != state.Sum {
		t.Fatal("merges")
	}
}

// TestInstrumentsAppendOnly: an instrument's number never changes (new
// ones come after the last).
func TestInstrumentsAppendOnly(t *testing.T) {
	for want, i := range map[state.Instrument]state.Instrument{
		1: state.BreakerState, 15: state.StoreErrors, 17: state.SpendReserved, 19: state.RunLimitRefusals,
		20: state.ApprovalsPending, 21: state.ApprovalVerdicts, 22: state.ApprovalWait, 23: state.DedupeRepeats,
		24: state.CacheHits, 25: state.CacheMisses, 26: state.FallbacksServed,
	} {
		if i != want {
			t.Errorf("%v is %d, was %d", i, i, want)
		}
	}
}

func TestInstrumentNames(t *testing.T) {
	seen := map[string]bool{}
	for _, i := range state.Instruments() {
		n := i.String()
		if strings.HasPrefix(n, "instrument(") || seen[n] {
			t.Errorf("instrument %d: name %q missing or repeated", i, n)
		}
		seen[n] = true
	}
	if got := state.Instrument(0).String(); got != "instrument(0)" {
		t.Errorf("Instrument(0).String() = %q", got)
	}
}
