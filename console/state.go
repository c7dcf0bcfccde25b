package console

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw/state"
)

// The state view's bounds.
const (
	// DefaultRefresh is how often the live page looks for a change of
	// state, unless [WithRefresh] says otherwise.
	DefaultRefresh = 500 * time.Millisecond
	// MinRefresh and MaxRefresh bound [WithRefresh].
	MinRefresh = 50 * time.Millisecond
	MaxRefresh = time.Minute
	// MaxStreams is how many live pages (event streams) one console
	// serves at once; more are answered 503 and retry.
	MaxStreams = 64
	// streamLifetime ends an event stream; the browser opens a new one
	// (EventSource reconnects), so no connection lives for ever.
	streamLifetime = 5 * time.Minute
	// keepAlive is how often an idle stream sends a comment, so proxies
	// keep it open.
	keepAlive = 15 * time.Second
	// writeTimeout bounds one write to a stream.
	writeTimeout = 10 * time.Second
)

// StateOption configures the state view ([WithState]).
type StateOption func(*stateConfig)

type stateConfig struct {
	registry *state.Registry
	failures *Failures
	refresh  time.Duration

	streams atomic.Int64 // event streams open

	mu    sync.Mutex // guards the cached view
	view  stateView
	taken time.Time
}

// WithState adds the state view: a page ("state"), its JSON ("state.json")
// and a stream of server-sent events ("state/events") that show every
// tool's layers as they are now — breaker states, bulkhead queues, rate
// limiter waits, retry and run budgets, spend, store failures and
// degraded decisions, as the layers publish them into package state — and,
// with [WithFailures], the recent failures by kind and code. The page
// updates itself from the stream within [WithRefresh] of a change (by
// default [DefaultRefresh]); without script it reloads every few seconds.
//
// The view only reads; it has no authorisation hook of its own. Mount the
// console behind the application's authentication, as one mounts
// net/http/pprof: it shows tool names, codes and counts (scrubbed), never
// arguments, error text or call ids.
func WithState(opts ...StateOption) Option {
	return func(c *config) {
		s := &stateConfig{registry: state.Default, refresh: DefaultRefresh}
		for _, o := range opts {
			if o != nil {
				o(s)
			}
		}
		if s.refresh < MinRefresh || s.refresh > MaxRefresh {
			c.reject("WithRefresh(%v): it must be between %v and %v", s.refresh, MinRefresh, MaxRefresh)
		}
		c.state = s
	}
}

// WithRegistry sets the registry the view reads; nil means state.Default,
// where the layers publish.
func WithRegistry(r *state.Registry) StateOption {
	return func(s *stateConfig) {
		if r != nil {
			s.registry = r
		}
	}
}

// WithFailures adds the recent failures f keeps to the view.
func WithFailures(f *Failures) StateOption {
	return func(s *stateConfig) { s.failures = f }
}

// WithRefresh sets how often the live page looks for a change: between
// [MinRefresh] and [MaxRefresh]; 0 means [DefaultRefresh].
func WithRefresh(d time.Duration) StateOption {
	return func(s *stateConfig) {
		if d != 0 {
			s.refresh = d
		}
	}
}

// stateView is what the page, its JSON and its events show.
type stateView struct {
	At       time.Time     `json:"at"`
	Tools    []toolView    `json:"tools"`
	Stores   []storeView   `json:"stores"`
	Failures *failuresView `json:"failures,omitempty"`
}

// toolView is every series published under one name: a tool's, a key's
// or a shared instance's.
type toolView struct {
	Name string `json:"name"`
	// Breaker is the breaker's state ("closed", "half-open", "open"),
	// or "" when no breaker publishes under the name.
	Breaker string       `json:"breaker,omitempty"`
	Series  []seriesView `json:"series"`
}

type seriesView struct {
	Instrument string  `json:"instrument"` // state.Instrument's String
	Label      string  `json:"label"`      // for a person
	Detail     string  `json:"detail,omitempty"`
	Value      float64 `json:"value"`
	Text       string  `json:"text"` // the value for a person
}

// storeView is one store port's failures.
type storeView struct {
	Port        string          `json:"port"`
	Errors      float64         `json:"errors"`
	Degraded    float64         `json:"degraded"`
	ByOperation []operationView `json:"by_operation"`
}

type operationView struct {
	Operation string  `json:"operation"`
	Errors    float64 `json:"errors"`
}

type failuresView struct {
	Total  int64          `json:"total"`
	Counts []FailureCount `json:"counts"`
	Recent []Failure      `json:"recent"`
}

// labels are the instruments as a person reads them; an instrument
// missing here shows its short name.
var labels = map[state.Instrument]string{
	state.BreakerState:        "Breaker",
	state.BreakerTransitions:  "Breaker transitions",
	state.BulkheadInFlight:    "Bulkhead: in flight",
	state.BulkheadQueued:      "Bulkhead: queued",
	state.BulkheadLimit:       "Bulkhead: limit",
	state.BulkheadRefusals:    "Bulkhead: refused",
	state.RateLimitWait:       "Rate limit: time waited (s)",
	state.RateLimitRefusals:   "Rate limit: refused",
	state.RetryBudgetTokens:   "Retry budget: tokens",
	state.RetryBudgetRefusals: "Retry budget: retries refused",
	state.RunBudgetUsed:       "Run budgets: attempts used",
	state.RunBudgetRefusals:   "Run budgets: attempts refused",
	state.HedgesStarted:       "Hedges started",
	state.HedgesWon:           "Hedges won",
	state.SpendReserved:       "Spend: reserved",
	state.SpendSettled:        "Spend: settled",
	state.RunLimitRefusals:    "Run call limit: refused",
	state.ApprovalsPending:    "Approvals: pending",
	state.ApprovalVerdicts:    "Approvals: decided",
	state.ApprovalWait:        "Approvals: time to decision (s, summed)",
	state.DedupeRepeats:       "Dedupe: repeats served",
	state.CacheHits:           "Cache: hits",
	state.CacheMisses:         "Cache: misses",
	state.FallbacksServed:     "Fallbacks served",
}

// breakerStates names BreakerState's values.
var breakerStates = [...]string{"closed", "half-open", "open"}

func breakerText(v float64) string {
	if i := int(v); v == float64(i) && i >= 0 && i < len(breakerStates) {
		return breakerStates[i]
	}
	return "unknown"
}

func number(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func (h *console) addState() {
	h.views = append(h.views, view{Path: "state", Title: "State",
		About: "every tool's layers as they are now, live"})
	h.mux.HandleFunc("GET /state", h.statePage)
	h.mux.HandleFunc("GET /state.json", h.stateJSON)
	h.mux.HandleFunc("GET /state/events", h.stateEvents)
}

// snapshot returns the view as it is now; views taken within half the
// refresh interval are shared between requests, so many open pages cost
// one collection.
func (s *stateConfig) snapshot() stateView {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.taken.IsZero() && now.Sub(s.taken) >= 0 && now.Sub(s.taken) < s.refresh/2 {
		return s.view
	}
	s.view, s.taken = s.collect(now.UTC()), now
	return s.view
}

// collect reads the registry and the failures into a view.
func (s *stateConfig) collect(at time.Time) stateView {
	v := stateView{At: at.Truncate(time.Millisecond), Tools: []toolView{}, Stores: []storeView{}}
	tools := map[string]*toolView{}
	stores := map[string]*storeView{}
	for _, se := range s.registry.Collect() {
		if math.IsInf(se.Value, 0) { // JSON has no infinity
			continue
		}
		name := se.Name // the registry gives names as state.Label makes them
		switch se.Instrument {
		case state.StoreErrors, state.StoreDegraded:
			st := stores[name]
			if st == nil {
				st = &storeView{Port: name, ByOperation: []operationView{}}
				stores[name] = st
			}
			if se.Instrument == state.StoreDegraded {
				st.Degraded += se.Value
				continue
			}
			st.Errors += se.Value
			st.ByOperation = append(st.ByOperation, operationView{Operation: se.Detail, Errors: se.Value})
			continue
		}
		tv := tools[name]
		if tv == nil {
			tv = &toolView{Name: name, Series: []seriesView{}}
			tools[name] = tv
		}
		sv := seriesView{Instrument: se.Instrument.String(), Label: cmp.Or(labels[se.Instrument], se.Instrument.String()),
			Detail: se.Detail, Value: se.Value, Text: number(se.Value)}
		if se.Instrument == state.BreakerState {
			sv.Text = breakerText(se.Value)
			tv.Breaker = sv.Text
		}
		tv.Series = append(tv.Series, sv)
	}
	order := map[string]int{}
	for _, i := range state.Instruments() {
		order[i.String()] = int(i)
	}
	for _, tv := range tools {
		slices.SortFunc(tv.Series, func(a, b seriesView) int {
			return cmp.Or(cmp.Compare(order[a.Instrument], order[b.Instrument]), cmp.Compare(a.Detail, b.Detail))
		})
		v.Tools = append(v.Tools, *tv)
	}
	slices.SortFunc(v.Tools, func(a, b toolView) int { return cmp.Compare(a.Name, b.Name) })
	for _, st := range stores {
		slices.SortFunc(st.ByOperation, func(a, b operationView) int { return cmp.Compare(a.Operation, b.Operation) })
		v.Stores = append(v.Stores, *st)
	}
	slices.SortFunc(v.Stores, func(a, b storeView) int { return cmp.Compare(a.Port, b.Port) })
	if s.failures != nil {
		counts, total := s.failures.Counts()
		v.Failures = &failuresView{Total: total, Counts: counts, Recent: s.failures.Recent()}
	}
	return v
}

func (h *console) statePage(w http.ResponseWriter, _ *http.Request) {
	render(w, http.StatusOK, "state.html", struct {
		stateView
		Reload int // seconds between reloads without script
	}{h.state.snapshot(), max(int(h.state.refresh/time.Second)*4, 5)})
}

func (h *console) stateJSON(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(h.state.snapshot())
}

// stateEvents streams the view as server-sent events: one "state" event
// at once, then one each time the view changes (looked at every refresh
// interval), a comment when idle, until the client leaves or the stream's
// lifetime ends.
func (h *console) stateEvents(w http.ResponseWriter, r *http.Request) {
	s := h.state
	if s.streams.Add(1) > MaxStreams {
		s.streams.Add(-1)
		w.Header().Set("Retry-After", "5")
		http.Error(w, "too many live pages", http.StatusServiceUnavailable)
		return
	}
	defer s.streams.Add(-1)
	rc := http.NewResponseController(w)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout)) // not every writer has deadlines
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write([]byte("retry: 2000\n\n")) {
		return
	}
	tick := time.NewTicker(s.refresh)
	defer tick.Stop()
	end := time.NewTimer(streamLifetime)
	defer end.Stop()
	var last []byte
	idle := time.Now()
	for {
		v := s.snapshot()
		at := v.At
		v.At = time.Time{}
		same, _ := json.Marshal(v) // the view without its time: what changes
		if !bytes.Equal(same, last) {
			last = same
			v.At = at
			body, _ := json.Marshal(v)
			if !write(append(append([]byte("event: state\ndata: "), body...), "\n\n"...)) {
				return
			}
			idle = time.Now()
		} else if time.Since(idle) >= keepAlive {
			if !write([]byte(": idle\n\n")) {
				return
			}
			idle = time.Now()
		}
		select {
		case <-r.Context().Done():
			return
		case <-end.C:
			return
		case <-tick.C:
		}
	}
}
