package state

import "strconv"

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
