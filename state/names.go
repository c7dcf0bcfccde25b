package state

import (
	"strconv"
	"sync/atomic"
)

// names are the instruments' short names, as the console shows them and
// as a test checks against the instrument list.
var names = [instruments]string{
	BreakerState:        "breaker_state",
	BreakerTransitions:  "breaker_transitions",
	BulkheadInFlight:    "bulkhead_in_flight",
	BulkheadQueued:      "bulkhead_queued",
	BulkheadLimit:       "bulkhead_limit",
	BulkheadRefusals:    "bulkhead_refusals",
	RateLimitWait:       "ratelimit_wait_seconds",
	RateLimitRefusals:   "ratelimit_refusals",
	RetryBudgetTokens:   "retry_budget_tokens",
	RetryBudgetRefusals: "retry_budget_refusals",
	RunBudgetUsed:       "run_budget_used",
	RunBudgetRefusals:   "run_budget_refusals",
	HedgesStarted:       "hedges_started",
	HedgesWon:           "hedges_won",
	StoreErrors:         "store_errors",
	StoreDegraded:       "store_degraded",
	SpendReserved:       "spend_reserved",
	SpendSettled:        "spend_settled",
	RunLimitRefusals:    "runlimit_refusals",
	ApprovalsPending:    "approvals_pending",
	ApprovalVerdicts:    "approval_verdicts",
	ApprovalWait:        "approval_wait_seconds",
	DedupeRepeats:       "dedupe_repeats",
	CacheHits:           "cache_hits",
	CacheMisses:         "cache_misses",
	FallbacksServed:     "fallbacks_served",
}

// String returns the instrument's short name in snake case
// ("breaker_state", "bulkhead_queued"), stable across releases, or
// "instrument(N)" for a value that is no instrument.
func (i Instrument) String() string {
	if i >= 1 && i < instruments && names[i] != "" {
		return names[i]
	}
	return "instrument(" + strconv.Itoa(int(i)) + ")"
}

// Name is the name a layer instance publishes under: the tool's, learnt
// from its first call, or one given when the instance is made. The zero
// Name is empty and ready to use; a Name is safe for concurrent use and
// must not be copied after first use.
type Name struct{ p atomic.Pointer[string] }

// Learn sets the name to s unless it is set already: what a per-tool
// instance calls on each call, at the cost of one atomic load once set.
func (n *Name) Learn(s string) {
	if n.p.Load() == nil {
		n.p.CompareAndSwap(nil, &s)
	}
}

// Set sets the name to s.
func (n *Name) Set(s string) { n.p.Store(&s) }

// String returns the name, or "" when none is set.
func (n *Name) String() string {
	if p := n.p.Load(); p != nil {
		return *p
	}
	return ""
}

// IsSet reports whether a name is set.
func (n *Name) IsSet() bool { return n.p.Load() != nil }
