package state

import (
	"runtime"
	"sync"
	"unicode/utf8"
	"weak"

	"github.com/toolmw/toolmw/scrub"
)

// Instrument is one quantity the layers publish. Instruments are only
// ever appended to; middleware/tracing names each one for OpenTelemetry.
type Instrument uint8

// The instruments. Name is what a series is about (the tool's name, the
// key, the name of a shared instance, or the store port); Detail, when
// used, is said per instrument.
const (
	// BreakerState is a breaker's state: 0 closed, 1 half-open, 2 open.
	// Merged by the highest.
	BreakerState Instrument = iota + 1
	// BreakerTransitions counts a breaker's state changes; Detail is the
	// state entered ("closed", "half-open", "open").
	BreakerTransitions
	// BulkheadInFlight is how many calls hold a bulkhead's slot.
	BulkheadInFlight
	// BulkheadQueued is how many calls wait for a slot.
	BulkheadQueued
	// BulkheadLimit is how many calls may hold a slot at once (it moves
	// in an adaptive pool).
	BulkheadLimit
	// BulkheadRefusals counts calls refused for a full bulkhead.
	BulkheadRefusals
	// RateLimitWait is the time calls waited for a rate limiter, in
	// seconds.
	RateLimitWait
	// RateLimitRefusals counts calls a rate limiter refused.
	RateLimitRefusals
	// RetryBudgetTokens is a retry budget's balance, in tokens. Merged by
	// the lowest.
	RetryBudgetTokens
	// RetryBudgetRefusals counts retries the retry layer did not make for
	// an empty retry budget.
	RetryBudgetRefusals
	// RunBudgetUsed is how many attempts the live runs' budgets have given
	// the tool named.
	RunBudgetUsed
	// RunBudgetRefusals counts attempts refused for a used-up run budget.
	RunBudgetRefusals
	// HedgesStarted counts hedged attempts started.
	HedgesStarted
	// HedgesWon counts calls a hedged attempt decided.
	HedgesWon
	// StoreErrors counts store operations that failed (store.Error
	// reports); Name is the port (store.Error's Layer), Detail the
	// operation.
	StoreErrors
	// StoreDegraded counts calls a port decided without its store (fail
	// open); Name is the port.
	StoreDegraded
	// SpendReserved is the amount held now by calls of the tool named;
	// Detail is the currency the amount is in (the spend layer's
	// WithCurrency), or empty when none was given.
	SpendReserved
	// SpendSettled is the amount charged by calls of the tool named;
	// Detail is the currency, as for SpendReserved.
	SpendSettled
	// RunLimitRefusals counts calls refused by a per-run call limit.
	RunLimitRefusals
	// ApprovalsPending is how many approval requests for the tool named
	// wait for a reviewer's decision.
	ApprovalsPending
	// ApprovalVerdicts counts the approval requests of the tool named
	// that were decided or lapsed; Detail is the verdict: "approved" or
	// "denied" (a pending request decided), "revoked" (an approval denied
	// before it was used) or "expired" (an approval that lapsed unused,
	// found when its call came again).
	ApprovalVerdicts
	// ApprovalWait is the time pending approval requests of the tool
	// named waited for their decision, in seconds, summed; Detail is the
	// verdict, "approved" or "denied". Divided by the ApprovalVerdicts of
	// the same verdict it is the mean time to a decision.
	ApprovalWait
	// DedupeRepeats counts repeated calls of the tool named that were
	// given the outcome recorded for the call they repeat, and did not
	// run.
	DedupeRepeats
	// CacheHits counts calls of the tool named that a cache served a kept
	// result.
	CacheHits
	// CacheMisses counts calls of the tool named that a cache looked up
	// and did not find a result for, so the tool ran.
	CacheMisses
	// FallbacksServed counts failed calls of the tool named that a
	// fallback answered with a substitute; Detail is where it came from:
	// "last_good" or "function".
	FallbacksServed

	instruments // one past the last
)

// Instruments returns every instrument, in order.
func Instruments() []Instrument {
	all := make([]Instrument, 0, instruments-1)
	for i := BreakerState; i < instruments; i++ {
		all = append(all, i)
	}
	return all
}

// Merge is how the series of one name from several instances, and the
// series folded into [Other], make one value.
type Merge uint8

// The merges.
const (
	Sum Merge = iota // the values are added
	Highest
	Lowest
)

// Merge returns how i's series are merged.
func (i Instrument) Merge() Merge {
	switch i {
	case BreakerState:
		return Highest
	case RetryBudgetTokens:
		return Lowest
	}
	return Sum
}

// Bounds of names and series; see the package documentation.
const (
	// DefaultMaxSeries is how many distinct name–detail pairs one
	// instrument reports by default before it folds the rest into Other.
	DefaultMaxSeries = 200
	// MaxNameLen bounds a name or detail, in bytes.
	MaxNameLen = 64
	// Other is the name and detail of the series everything past the bound
	// is folded into; Unnamed names an instance that has no name (a
	// per-tool instance before its first call; a shared pool or limiter, a
	// rate-limit Store layer).
	Other   = "_OTHER"
	Unnamed = "_UNNAMED"
)

// Emit is how a reader reports one value: the instrument, the series'
// name and detail (empty when the instrument has none), and the value.
type Emit func(i Instrument, name, detail string, value float64)

// Series is one reported value.
type Series struct {
	Instrument   Instrument
	Name, Detail string
	Value        float64
}

// Registry holds the readers of live layer instances. The zero Registry is
// not usable: make one with [NewRegistry], or use [Default]. A Registry is
// safe for concurrent use; no lock of its own is held while readers run.
type Registry struct {
	max int

	mu      sync.Mutex
	readers map[uint64]func(Emit) bool // by id; false: the instance is gone
	ids     map[any]uint64             // weak pointer → id, so one instance registers once
	next    uint64

	collect  sync.Mutex // one collection at a time; guards admitted
	admitted [instruments]map[key]struct{}
}

type key struct{ name, detail string }

// Option configures [NewRegistry].
type Option func(*Registry)

// WithMaxSeries sets how many name–detail pairs each instrument reports
// before folding the rest into [Other]; n below 1 keeps the default.
func WithMaxSeries(n int) Option {
	return func(r *Registry) {
		if n >= 1 {
			r.max = n
		}
	}
}

// NewRegistry returns an empty registry.
func NewRegistry(opts ...Option) *Registry {
	r := &Registry{max: DefaultMaxSeries, readers: map[uint64]func(Emit) bool{}, ids: map[any]uint64{}}
	for _, o := range opts {
		if o != nil {
			o(r)
		}
	}
	return r
}

// Default is the registry the layers publish into.
var Default = NewRegistry()

// Register adds read, reading *p, to r (nil: Default) for as long as p is
// reachable: r holds p only by a weak pointer, and removes read once p is
// collected. read must not keep p, or anything that keeps p, reachable
// (it is given p at each collection), or p is never collected. An instance
// registered twice keeps its first reader.
func Register[T any](r *Registry, p *T, read func(p *T, emit Emit)) {
	if p == nil || read == nil {
		return
	}
	if r == nil {
		r = Default
	}
	wp := weak.Make(p)
	r.mu.Lock()
	if _, dup := r.ids[wp]; dup {
		r.mu.Unlock()
		return
	}
	r.next++
	id := r.next
	r.ids[wp] = id
	r.readers[id] = func(emit Emit) bool {
		v := wp.Value()
		if v == nil {
			return false
		}
		read(v, emit)
		return true
	}
	r.mu.Unlock()
	runtime.AddCleanup(p, r.remove, cleanup{id: id, wp: wp})
}

type cleanup struct {
	id uint64
	wp any
}

func (r *Registry) remove(c cleanup) {
	r.mu.Lock()
	delete(r.readers, c.id)
	delete(r.ids, c.wp)
	r.mu.Unlock()
}

// Len returns how many readers r holds.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.readers)
}

// Collect runs every reader and returns the series, bounded and folded
// (see the package documentation), in no particular order.
func (r *Registry) Collect() []Series {
	r.mu.Lock()
	readers := make([]func(Emit) bool, 0, len(r.readers))
	for _, read := range r.readers {
		readers = append(readers, read)
	}
	r.mu.Unlock()

	r.collect.Lock()
	defer r.collect.Unlock()
	type slot struct {
		i Instrument
		k key
	}
	values := map[slot]float64{}
	emit := func(i Instrument, name, detail string, v float64) {
		if i < 1 || i >= instruments || v != v { // unknown, or NaN
			return
		}
		k := r.admit(i, key{clean(name, Unnamed), clean(detail, "")})
		s := slot{i, k}
		old, seen := values[s]
		switch {
		case !seen:
			values[s] = v
		case i.Merge() == Highest:
			values[s] = max(old, v)
		case i.Merge() == Lowest:
			values[s] = min(old, v)
		default:
			values[s] = old + v
		}
	}
	for _, read := range readers {
		read(emit)
	}
	out := make([]Series, 0, len(values))
	for s, v := range values {
		out = append(out, Series{Instrument: s.i, Name: s.k.name, Detail: s.k.detail, Value: v})
	}
	return out
}

// admit returns k when i may report it, or the Other series. r.collect is
// held.
func (r *Registry) admit(i Instrument, k key) key {
	set := r.admitted[i]
	if _, ok := set[k]; ok {
		return k
	}
	if set == nil {
		set = map[key]struct{}{}
		r.admitted[i] = set
	}
	if len(set) >= r.max {
		return key{Other, Other}
	}
	set[k] = struct{}{}
	return k
}

// clean is Label, with empty for an empty s.
func clean(s, empty string) string {
	if s == "" {
		return empty
	}
	return Label(s)
}

// Label returns s as a series name or detail is shown: scrubbed (package
// scrub), then cut to MaxNameLen bytes of valid UTF-8, control characters
// replaced by '_' — in that order, so no secret cut in two slips past the
// scrubber. What shows a name a layer published (a page, a metric
// attribute) uses it too.
func Label(s string) string {
	if s == "" {
		return ""
	}
	s = scrub.String(s)
	ok := len(s) <= MaxNameLen && utf8.ValidString(s)
	for i := 0; ok && i < len(s); i++ {
		ok = s[i] >= 0x20 && s[i] != 0x7f
	}
	if ok {
		return s
	}
	b := make([]byte, 0, min(len(s), MaxNameLen))
	for _, c := range s {
		if c < 0x20 || c == 0x7f || c == utf8.RuneError {
			c = '_'
		}
		if len(b)+utf8.RuneLen(c) > MaxNameLen {
			break
		}
		b = utf8.AppendRune(b, c)
	}
	return string(b)
}
