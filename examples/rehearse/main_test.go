package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/chaos"
	"github.com/toolmw/toolmw/policy"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/turn"
)

// rig is the example's box over policy.json, rehearsing faults, with a
// recorder of every attempt and a count of the faults injected.
type rig struct {
	box      *toolmw.Toolbox
	set      *policy.Set
	rec      *toolmwtest.Recorder
	injected atomic.Int64
}

func newRig(t *testing.T, path string, faults ...chaos.Option) *rig {
	t.Helper()
	r := &rig{rec: toolmwtest.NewRecorder(nil)}
	var err error
	if r.set, err = policy.Load(path); err != nil {
		t.Fatal(err)
	}
	o := Options{Observe: []toolmw.Middleware{r.rec.Attempts()}}
	if faults != nil {
		o.Faults = append(faults, chaos.WithOnInject(func(chaos.Injection) { r.injected.Add(1) }))
	}
	if r.box, err = NewBox(r.set, o); err != nil {
		t.Fatal(err)
	}
	return r
}

// outcome is how one run ended.
type outcome struct {
	answer   string
	err      error
	attempts map[string]int // attempts that reached the tools (or the faults standing in for them), by tool
	used     map[string]int // attempts the run budget gave, by tool
	took     time.Duration
}

// loop runs one rehearsing run.
func (r *rig) loop(t *testing.T, id string) outcome {
	t.Helper()
	ctx := budget.WithRun(context.Background(), budget.WithID(id), budget.WithMaxAttempts(RunAttempts))
	run, _ := budget.RunFrom(ctx)
	start := time.Now()
	answer, err := Loop(chaos.Enable(ctx), r.box, NewTripModel())
	o := outcome{answer: answer, err: err, took: time.Since(start), attempts: map[string]int{}, used: map[string]int{}}
	for _, a := range r.rec.AttemptRecords() {
		if a.Run == id {
			o.attempts[a.Tool]++
		}
	}
	for _, tool := range []string{"search_flights", "book_flight"} {
		o.used[tool] = run.Used(tool)
	}
	return o
}

// withinBudget fails t unless the run ended with an answer or a typed
// stop, with no more attempts of a tool than its budget allows, and, for
// a tool whose policy retries (the retry layer takes attempts from the
// budget), no more than the budget gave.
func withinBudget(t *testing.T, id string, o outcome) {
	t.Helper()
	var stop *turn.Stop
	if o.err != nil && !errors.As(o.err, &stop) {
		t.Errorf("%s ended with %v, want an answer or a *turn.Stop", id, o.err)
	}
	for tool, n := range o.attempts {
		if n > RunAttempts || tool == "search_flights" && n > o.used[tool] {
			t.Errorf("%s: %d attempts of %s reached it, the budget gave %d of %d", id, n, tool, o.used[tool], RunAttempts)
		}
	}
}

// TestRehearse429sAndTimeouts: with half the search's attempts failing on
// purpose — 429s with a Retry-After and timeouts — every run ends within
// its run budget, and most still book.
func TestRehearse429sAndTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, "policy.json", append(Rehearsal(0.5), chaos.WithSeed(7))...)
		booked := 0
		for i := range 20 {
			id := fmt.Sprintf("run-%d", i)
			o := r.loop(t, id)
			withinBudget(t, id, o)
			if strings.HasPrefix(o.answer, "booked") {
				booked++
				if o.attempts["book_flight"] != 1 {
					t.Errorf("%s booked with %d attempts of book_flight, want 1", id, o.attempts["book_flight"])
				}
			}
			// Each search attempt waits at most its 1 s timeout, each
			// retry at most max_wait: a run of 10 turns stays far below.
			if o.took > 5*time.Minute {
				t.Errorf("%s took %v", id, o.took)
			}
		}
		if r.injected.Load() == 0 || booked < 15 {
			t.Errorf("%d faults injected, %d of 20 runs booked; want faults and most runs booked", r.injected.Load(), booked)
		}
		t.Logf("%d faults injected; %d of 20 runs booked", r.injected.Load(), booked)
	})
}

// TestRehearseOpenBreaker: the supplier fails every attempt; the breaker
// opens after its five failures in a row, the loop stops with circuit-open
// at once, nothing is booked, and the budget holds.
func TestRehearseOpenBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		down := taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the supplier is down")
		r := newRig(t, "policy.json", chaos.WithFault(chaos.Failure(down), 1, "search_flights"))
		o := r.loop(t, "run-down")
		withinBudget(t, "run-down", o)
		if !errors.Is(o.err, taxonomy.ErrCircuitOpen) {
			t.Fatalf("the run ended with %q, %v; want a circuit-open stop", o.answer, o.err)
		}
		if o.attempts["search_flights"] != 5 || o.attempts["book_flight"] != 0 {
			t.Errorf("attempts %v; want the breaker's 5, and no booking", o.attempts)
		}
		// The next run meets the open breaker at once.
		o = r.loop(t, "run-next")
		if !errors.Is(o.err, taxonomy.ErrCircuitOpen) || o.attempts["search_flights"] != 0 {
			t.Errorf("the next run: %v, %v attempts; want circuit-open without an attempt", o.err, o.attempts)
		}
	})
}

// TestReloadWhileRunning: the same loop, configured from a copy of
// policy.json, runs in 16 goroutines while the file is rewritten with new
// timeouts and retries — and once with an invalid layer — and reloaded.
// Every run books exactly once; the invalid file changes nothing.
func TestReloadWhileRunning(t *testing.T) {
	orig, err := os.ReadFile("policy.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, path)
	versions := []string{
		strings.Replace(string(orig), `"timeout": "1s"`, `"timeout": "3s"`, 1),
		strings.Replace(string(orig), `"max_attempts": 3`, `"max_attempts": 2`, 1),
		strings.Replace(string(orig), `"ratelimit"`, `"ratelimt"`, 1), // invalid
		string(orig),
	}
	const runners, runs = 16, 10
	var wg sync.WaitGroup
	var booked, ended atomic.Int64
	for g := range runners {
		wg.Go(func() {
			for i := range runs {
				id := fmt.Sprintf("run-%d-%d", g, i)
				o := r.loop(t, id)
				ended.Add(1)
				withinBudget(t, id, o)
				if strings.HasPrefix(o.answer, "booked") && o.attempts["book_flight"] == 1 {
					booked.Add(1)
				} else {
					t.Errorf("%s: %q, %v, %v", id, o.answer, o.err, o.attempts)
				}
			}
		})
	}
	refused := 0
	for _, v := range versions {
		for seen := ended.Load(); ended.Load() == seen && ended.Load() < runners*runs; {
			time.Sleep(time.Millisecond) // let runs happen between reloads
		}
		if err := os.WriteFile(path, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := r.set.Reload(); err != nil {
			var pe *policy.Error
			if !errors.As(err, &pe) || pe.File != path || pe.Line == 0 {
				t.Errorf("the invalid file was refused as %v, want its file and line", err)
			}
			refused++
			if got := r.set.Policy("search_flights").Retry.MaxAttempts; got != 2 {
				t.Errorf("after the invalid file, search_flights retries %d times, want the 2 of the last valid file", got)
			}
		}
	}
	wg.Wait()
	if booked.Load() != runners*runs || refused != 1 {
		t.Errorf("%d of %d runs booked, %d files refused; want all booked, 1 refused", booked.Load(), runners*runs, refused)
	}
}
