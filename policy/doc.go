// Package policy configures the resilience layers of each tool from a
// document — JSON here, YAML through adapters/policyyaml — instead of Go
// code, with overrides from the environment and reloads that keep what
// the layers hold.
//
// A document gives defaults and per-tool entries; a tool's entry
// overrides the defaults field by field, and a tool the document does not
// name gets the defaults:
//
//	{
//	  "version": 1,
//	  "defaults": {
//	    "layers": ["retry", "breaker", "timeout"],
//	    "timeout": "10s",
//	    "retry": {"max_attempts": 3, "base_delay": "100ms", "max_delay": "2s"},
//	    "breaker": {"consecutive_failures": 5, "open_for": "30s"}
//	  },
//	  "tools": {
//	    "search_flights": {"timeout": "3s", "retry": {"max_attempts": 5}},
//	    "book_flight": {
//	      "layers": ["approval", "runlimit", "breaker", "ratelimit", "bulkhead", "timeout"],
//	      "max_calls_per_run": 1,
//	      "rate_limit": {"per_second": 5, "burst": 2, "max_wait": "1s"},
//	      "bulkhead": {"max_concurrent": 4, "max_queue": 8, "max_wait": "2s"}
//	    }
//	  }
//	}
//
// "layers" lists the layers, outermost first, from approval, runlimit,
// retry, breaker, ratelimit, bulkhead and timeout (default: retry,
// breaker, timeout). The settings are the layers' own options: retry
// (max_attempts, base_delay, max_delay, max_wait, budget_ratio,
// budget_reserve — the tool's retry budget), breaker (consecutive_failures
// or failure_ratio with min_requests, interval, open_for, probes),
// rate_limit (per_second, burst, max_wait, reject), bulkhead
// (max_concurrent, max_queue, max_wait), timeout (per attempt) and
// max_calls_per_run. Durations are Go durations ("500ms", "30s"). The
// approval layer asks the Desk given with [WithDesk].
//
// # Validation
//
// A document is checked whole before it is used: an unknown field, a
// value of the wrong type, a bad or negative duration, a count below its
// least, an unknown or repeated layer, a key given twice, settings for a
// layer the list leaves out (or a layer without the settings it needs),
// and what a layer's own Validate refuses. The first problem is an
// [*Error] naming the file, the line and the field —
// "policy.json:12: tools.search_flights.retry.max_attempts: 0 is below 1" —
// which unwraps to tool-definition-invalid/option_invalid. A document is
// at most [MaxFileSize] bytes, [MaxDepth] levels and [MaxNodes] values.
//
// # Environment
//
// With [WithEnv], variables such as
// TOOLMW_POLICY__TOOLS__SEARCH_FLIGHTS__TIMEOUT=5s override the document
// (see WithEnv); an override that names nothing, or holds a bad value, is
// an [*Error] naming the variable.
//
// # Reloads
//
// [Set.Reload] (or [Set.Update], or [Set.Watch], which reloads when the
// file changes) swaps the policies atomically for calls that start after
// it; calls under way finish under the policies they started with, so no
// call is lost or decided twice. An invalid document changes nothing.
// What the layers hold is kept per tool across reloads while that layer's
// own settings are unchanged: a breaker's state and counts, a retry
// budget's tokens, a bulkhead's slots and queue (its waiters are served),
// per-run call counts; a rate limiter's tokens are kept even when its rate
// or burst changes. A layer whose own settings changed starts afresh —
// a breaker given a new threshold starts closed.
//
// # Placing it
//
// [Set.Middleware] is one layer; [Set.Stack] puts it in a stack in place
// of the stack's retry, breaker, rate limit and timeout layers:
//
//	set, err := policy.Load("policy.json", policy.WithEnv("TOOLMW_POLICY"))
//	stack, err := set.Stack(middleware.Default())
//	// tracing → logging → events → policy → recovery → redact → classify → tool
//	go set.Watch(ctx, time.Second, func(err error) { log.Print(err) })
package policy
