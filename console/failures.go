package console

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/taxonomy"
)

// The bounds of a [Failures].
const (
	// DefaultRecentFailures is how many failures a Failures keeps by
	// default; MaxRecentFailures is the most it keeps.
	DefaultRecentFailures = 50
	MaxRecentFailures     = 1000
	// MaxFailureCounts is how many (tool, kind, code) triples a Failures
	// counts apart; the rest are counted under one triple of
	// state.Other.
	MaxFailureCounts = 200
)

// Failures keeps the recent failed calls of a deployment, and counts them
// by tool, kind and code, for the console's state view ([WithFailures]).
// It is an events.Sink: give it to an events.Emitter in each stack whose
// failures the page should show.
//
//	failures := console.NewFailures(0)
//	stack := middleware.Default(..., events.New(failures))
//
// It keeps only what is safe to show: the time, the tool's name (scrubbed,
// and cut to 64 bytes), the outcome, the kind and code (as the taxonomy
// reads them: one of another shape is shown as tool-failed and
// invalid_code), whether it is retryable, the attempts and the degraded
// layer. Never the model's call
// id, the error's text or what the model was told. A Failures is safe for
// concurrent use; the zero value is not usable.
type Failures struct {
	mu     sync.Mutex
	recent []Failure // a ring of cap entries
	next   int       // where the next one goes
	full   bool
	counts map[failureKey]int64
	total  int64
}

// Failure is one failed call as a [Failures] keeps it.
type Failure struct {
	Time      time.Time        `json:"time"`
	Tool      string           `json:"tool"`
	Outcome   taxonomy.Outcome `json:"outcome"`
	Kind      taxonomy.Kind    `json:"kind"`
	Code      string           `json:"code"`
	Retryable bool             `json:"retryable"`
	Attempts  int              `json:"attempts"`
	Degraded  string           `json:"degraded,omitempty"`
}

// FailureCount is how many failures of one tool had one kind and code.
type FailureCount struct {
	Tool  string        `json:"tool"`
	Kind  taxonomy.Kind `json:"kind"`
	Code  string        `json:"code"`
	Count int64         `json:"count"`
}

type failureKey struct {
	tool string
	kind taxonomy.Kind
	code string
}

// NewFailures returns a Failures that keeps the last n failures: 0 means
// [DefaultRecentFailures]; n is held between 1 and [MaxRecentFailures].
func NewFailures(n int) *Failures {
	if n == 0 {
		n = DefaultRecentFailures
	}
	n = min(max(n, 1), MaxRecentFailures)
	return &Failures{recent: make([]Failure, n), counts: map[failureKey]int64{}}
}

// Emit records ev. It implements events.Sink.
func (f *Failures) Emit(ev events.Event) {
	fl := Failure{
		Time:      ev.Time.UTC(),
		Tool:      state.Label(ev.Tool),
		Outcome:   taxonomy.Outcome(state.Label(string(ev.Outcome))),
		Kind:      ev.Kind,
		Code:      ev.Code,
		Retryable: ev.Retryable,
		Attempts:  max(ev.Attempts, 0),
		Degraded:  state.Label(ev.Degraded),
	}
	// A kind or code an Event made by hand may carry anything: only the
	// taxonomy's own shapes are shown.
	if !taxonomy.ValidKind(fl.Kind) {
		fl.Kind = taxonomy.KindFailed
	}
	if !taxonomy.ValidCode(fl.Code) {
		fl.Code = taxonomy.CodeInvalidCode
	}
	k := failureKey{fl.Tool, fl.Kind, fl.Code}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recent[f.next] = fl
	f.next = (f.next + 1) % len(f.recent)
	f.full = f.full || f.next == 0
	if _, ok := f.counts[k]; !ok && len(f.counts) >= MaxFailureCounts {
		k = failureKey{state.Other, state.Other, state.Other}
	}
	f.counts[k]++
	f.total++
}

// Recent returns the failures kept, the latest first.
func (f *Failures) Recent() []Failure {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.next
	if f.full {
		n = len(f.recent)
	}
	out := make([]Failure, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, f.recent[(f.next-i+len(f.recent))%len(f.recent)])
	}
	return out
}

// Counts returns the failures counted by tool, kind and code, the most
// frequent first, and how many failures were counted in all.
func (f *Failures) Counts() (counts []FailureCount, total int64) {
	f.mu.Lock()
	out := make([]FailureCount, 0, len(f.counts))
	for k, n := range f.counts {
		out = append(out, FailureCount{Tool: k.tool, Kind: k.kind, Code: k.code, Count: n})
	}
	total = f.total
	f.mu.Unlock()
	slices.SortFunc(out, func(a, b FailureCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Tool, b.Tool),
			cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Code, b.Code))
	})
	return out, total
}
