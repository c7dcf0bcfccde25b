package middleware_test

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/bulkhead"
	"github.com/toolmw/toolmw/middleware/cache"
	"github.com/toolmw/toolmw/middleware/chaos"
	"github.com/toolmw/toolmw/middleware/classify"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/middleware/fallback"
	"github.com/toolmw/toolmw/middleware/guardrail"
	"github.com/toolmw/toolmw/middleware/hedge"
	"github.com/toolmw/toolmw/middleware/logging"
	"github.com/toolmw/toolmw/middleware/permit"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/middleware/recovery"
	"github.com/toolmw/toolmw/middleware/result"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/middleware/timeout"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// badOption is one exported option of a layer package given a value it
// cannot use, as the layer's Validate, the layer's New through toolmw.Wrap
// and, for a layer of the default stack, middleware.Validate and
// Stack.Wrap see it.
type badOption struct {
	name     string                   // package.WithX
	validate func() error             // the package's Validate with the bad value
	layer    func() toolmw.Middleware // the package's New with the bad value
	stack    middleware.Option        // the same through Default's options; nil when not a Default layer
	none     string                   // when the option has no invalid value: why
}

func badOptions() []badOption {
	type o = badOption
	return []o{
		{name: "approval.WithSealKey", validate: func() error { return approval.Validate(approval.WithSealKey(make([]byte, 16))) },
			layer: func() toolmw.Middleware { return approval.New(nil, approval.WithSealKey(make([]byte, 16))) }},
		{name: "approval.WithStore", validate: func() error { return approval.Validate(approval.WithStore(approval.NewMemoryStore())) },
			layer: func() toolmw.Middleware { return approval.New(nil, approval.WithStore(approval.NewMemoryStore())) }},
		{name: "approval.WithStore", validate: func() error {
			return approval.Validate(approval.WithStore(approval.NewMemoryStore(), store.WithTimeout(-time.Second)), approval.WithSealKey(make([]byte, 32)))
		}, layer: func() toolmw.Middleware {
			return approval.New(nil, approval.WithStore(approval.NewMemoryStore(), store.WithTimeout(-time.Second)), approval.WithSealKey(make([]byte, 32)))
		}},
		{name: "approval.WithClock", none: "nil means the system clock"},
		{name: "approval.WithScrubber", none: "nil means the default scrubber"},
		{name: "approval.WithRunOptional", none: "it takes no value"},
		{name: "approval.WithElicit", validate: func() error { return approval.Validate(approval.WithElicit(-time.Second)) },
			layer: func() toolmw.Middleware { return approval.New(nil, approval.WithElicit(-time.Second)) }},
		{name: "approval.WithOnVerdict", none: "nil means no callback"},

		{name: "breaker.WithConsecutiveFailures", validate: func() error { return breaker.Validate(breaker.WithConsecutiveFailures(-1)) },
			layer: func() toolmw.Middleware { return breaker.New(breaker.WithConsecutiveFailures(-1)) }, stack: middleware.WithBreaker(breaker.WithConsecutiveFailures(-1))},
		{name: "breaker.WithFailureRatio", validate: func() error { return breaker.Validate(breaker.WithFailureRatio(1.5, 10)) },
			layer: func() toolmw.Middleware { return breaker.New(breaker.WithFailureRatio(1.5, 10)) }, stack: middleware.WithBreaker(breaker.WithFailureRatio(1.5, 10))},
		{name: "breaker.WithInterval", validate: func() error { return breaker.Validate(breaker.WithInterval(-time.Second)) },
			layer: func() toolmw.Middleware { return breaker.New(breaker.WithInterval(-time.Second)) }, stack: middleware.WithBreaker(breaker.WithInterval(-time.Second))},
		{name: "breaker.WithOpenFor", validate: func() error { return breaker.Validate(breaker.WithOpenFor(-time.Second)) },
			layer: func() toolmw.Middleware { return breaker.New(breaker.WithOpenFor(-time.Second)) }, stack: middleware.WithBreaker(breaker.WithOpenFor(-time.Second))},
		{name: "breaker.WithProbes", validate: func() error { return breaker.Validate(breaker.WithProbes(-1)) },
			layer: func() toolmw.Middleware { return breaker.New(breaker.WithProbes(-1)) }, stack: middleware.WithBreaker(breaker.WithProbes(-1))},
		{name: "breaker.WithMaxKeys", validate: func() error { return breaker.Validate(breaker.WithMaxKeys(-1)) },
			layer: func() toolmw.Middleware { return breaker.New(breaker.WithMaxKeys(-1)) }, stack: middleware.WithBreaker(breaker.WithMaxKeys(-1))},
		{name: "breaker.WithShared", validate: func() error {
			return breaker.Validate(breaker.WithShared(breaker.NewBreaker("b", breaker.WithProbes(-1))))
		},
			layer: func() toolmw.Middleware {
				return breaker.New(breaker.WithShared(breaker.NewBreaker("b", breaker.WithProbes(-1))))
			}},
		{name: "breaker.WithClock", none: "nil means the system clock"},
		{name: "breaker.WithOnStateChange", none: "nil means no callback"},
		{name: "breaker.WithIsFailure", none: "nil means breaker.IsFailure"},
		{name: "breaker.WithKey", none: "nil means one breaker per tool"},
		{name: "breaker.WithCachePeriod", validate: func() error { return breaker.Validate(breaker.WithCachePeriod(-time.Second)) },
			layer: func() toolmw.Middleware { return breaker.New(breaker.WithCachePeriod(-time.Second)) }, stack: middleware.WithBreaker(breaker.WithCachePeriod(-time.Second))},
		{name: "breaker.WithStore", validate: func() error { return breaker.Validate(breaker.WithStore(nil, store.WithTimeout(-time.Second))) },
			layer: func() toolmw.Middleware { return breaker.New(breaker.WithStore(nil, store.WithTimeout(-time.Second))) },
			stack: middleware.WithBreaker(breaker.WithStore(nil, store.WithTimeout(-time.Second)))},

		{name: "bulkhead.New n", validate: func() error { return bulkhead.Validate(-1) },
			layer: func() toolmw.Middleware { return bulkhead.New(-1) }},
		{name: "bulkhead.WithMaxWait", validate: func() error { return bulkhead.Validate(1, bulkhead.WithMaxWait(-time.Second)) },
			layer: func() toolmw.Middleware { return bulkhead.New(1, bulkhead.WithMaxWait(-time.Second)) }},
		{name: "bulkhead.WithMaxQueue", validate: func() error { return bulkhead.Validate(1, bulkhead.WithMaxQueue(-1)) },
			layer: func() toolmw.Middleware { return bulkhead.New(1, bulkhead.WithMaxQueue(-1)) }},
		{name: "bulkhead.WithShared", none: "nil means a pool per tool (bulkhead.ValidatePool reports a pool's bad size)"},
		{name: "bulkhead.WithAdaptive", validate: func() error {
			return bulkhead.Validate(1, bulkhead.WithAdaptive(bulkhead.Adaptive{Min: 4, Max: 2, Target: time.Second}))
		}, layer: func() toolmw.Middleware {
			return bulkhead.New(1, bulkhead.WithAdaptive(bulkhead.Adaptive{Min: 4, Max: 2, Target: time.Second}))
		}},
		{name: "bulkhead.WithClock", none: "nil means clock.System"},

		{name: "cache.New ttl", validate: func() error { return cache.Validate(-time.Second, cache.WithSharedResults()) },
			layer: func() toolmw.Middleware { return cache.New(-time.Second, cache.WithSharedResults()) }},
		{name: "cache.WithPartition", validate: func() error { return cache.Validate(time.Second, cache.WithPartition(nil)) },
			layer: func() toolmw.Middleware { return cache.New(time.Second, cache.WithPartition(nil)) }},
		{name: "cache.WithSharedResults", validate: func() error {
			return cache.Validate(time.Second, cache.WithSharedResults(), cache.WithPartition(func(context.Context, toolmw.Call) string { return "" }))
		}, layer: func() toolmw.Middleware {
			return cache.New(time.Second, cache.WithSharedResults(), cache.WithPartition(func(context.Context, toolmw.Call) string { return "" }))
		}},
		{name: "cache.WithMaxEntries", validate: func() error { return cache.Validate(time.Second, cache.WithSharedResults(), cache.WithMaxEntries(-1)) },
			layer: func() toolmw.Middleware {
				return cache.New(time.Second, cache.WithSharedResults(), cache.WithMaxEntries(-1))
			}},
		{name: "cache.WithMaxBytes", validate: func() error { return cache.Validate(time.Second, cache.WithSharedResults(), cache.WithMaxBytes(-1)) },
			layer: func() toolmw.Middleware {
				return cache.New(time.Second, cache.WithSharedResults(), cache.WithMaxBytes(-1))
			}},
		{name: "cache.WithStore", validate: func() error {
			return cache.Validate(time.Second, cache.WithSharedResults(), cache.WithStore(nil, store.WithTimeout(-time.Second)))
		}, layer: func() toolmw.Middleware {
			return cache.New(time.Second, cache.WithSharedResults(), cache.WithStore(nil, store.WithTimeout(-time.Second)))
		}},
		{name: "cache.WithClock", none: "nil means the system clock"},
		{name: "cache.WithOnLookup", none: "nil means no callback"},

		{name: "chaos.WithFault", validate: func() error { return chaos.Validate(chaos.WithFault(chaos.Panic(), 1.5)) },
			layer: func() toolmw.Middleware { return chaos.New(chaos.WithFault(chaos.Panic(), 1.5)) }},
		{name: "chaos.WithFault", validate: func() error {
			return chaos.Validate(chaos.WithFault(chaos.Panic(), 0.6), chaos.WithFault(chaos.Latency(-time.Second), 0.1))
		}, layer: func() toolmw.Middleware {
			return chaos.New(chaos.WithFault(chaos.Panic(), 0.6), chaos.WithFault(chaos.Latency(-time.Second), 0.1))
		}},
		{name: "chaos.WithStoreFault", validate: func() error { return chaos.Validate(chaos.WithStoreFault(chaos.Panic(), 0.1)) },
			layer: func() toolmw.Middleware { return chaos.New(chaos.WithStoreFault(chaos.Panic(), 0.1)) }},
		{name: "chaos.WithSeed", none: "every seed is one"},
		{name: "chaos.WithEnabled", none: "false means the default, off unless a context or the predicate enables it"},
		{name: "chaos.WithEnabledWhen", none: "nil means no predicate"},
		{name: "chaos.WithOnInject", none: "nil means no callback"},
		{name: "chaos.WithClock", none: "nil means the system clock"},

		{name: "classify.WithMap", none: "nil means mapper.Default()"},

		{name: "dedupe.WithArguments", validate: func() error { return dedupe.Validate(dedupe.WithArguments("not a tool")) },
			layer: func() toolmw.Middleware { return dedupe.New(dedupe.WithArguments("not a tool")) }},
		{name: "dedupe.WithMaxRecords", validate: func() error { return dedupe.Validate(dedupe.WithMaxRecords(-1)) },
			layer: func() toolmw.Middleware { return dedupe.New(dedupe.WithMaxRecords(-1)) }},
		{name: "dedupe.WithMaxBytes", validate: func() error { return dedupe.Validate(dedupe.WithMaxBytes(-1)) },
			layer: func() toolmw.Middleware { return dedupe.New(dedupe.WithMaxBytes(-1)) }},
		{name: "dedupe.WithStore", validate: func() error { return dedupe.Validate(dedupe.WithStore(nil, store.WithTimeout(-1))) },
			layer: func() toolmw.Middleware { return dedupe.New(dedupe.WithStore(nil, store.WithTimeout(-1))) }},
		{name: "dedupe.WithLease", validate: func() error { return dedupe.Validate(dedupe.WithLease(time.Millisecond)) },
			layer: func() toolmw.Middleware { return dedupe.New(dedupe.WithLease(time.Millisecond)) }},
		{name: "dedupe.WithWindow", validate: func() error { return dedupe.Validate(dedupe.WithWindow(-time.Second)) },
			layer: func() toolmw.Middleware { return dedupe.New(dedupe.WithWindow(-time.Second)) }},
		{name: "dedupe.WithClock", none: "nil means the system clock"},
		{name: "dedupe.WithSealKey", validate: func() error { return dedupe.Validate(dedupe.WithSealKey([]byte("short"))) },
			layer: func() toolmw.Middleware { return dedupe.New(dedupe.WithSealKey([]byte("short"))) }},

		{name: "events.WithQueueSize", validate: func() error { return events.Validate(events.WithQueueSize(-1)) },
			layer: func() toolmw.Middleware {
				return events.New(events.SinkFunc(func(events.Event) {}), events.WithQueueSize(-1))
			},
			stack: middleware.WithEvents(events.SinkFunc(func(events.Event) {}), events.WithQueueSize(-1))},
		{name: "events.WithQueueBytes", validate: func() error { return events.Validate(events.WithQueueBytes(-1)) },
			layer: func() toolmw.Middleware {
				return events.New(events.SinkFunc(func(events.Event) {}), events.WithQueueBytes(-1))
			},
			stack: middleware.WithEvents(events.SinkFunc(func(events.Event) {}), events.WithQueueBytes(-1))},
		{name: "events.WithMaxTold", validate: func() error { return events.Validate(events.WithMaxTold(-1)) },
			layer: func() toolmw.Middleware {
				return events.New(events.SinkFunc(func(events.Event) {}), events.WithMaxTold(-1))
			},
			stack: middleware.WithEvents(events.SinkFunc(func(events.Event) {}), events.WithMaxTold(-1))},
		{name: "events.WithClock", none: "nil means the system clock"},

		{name: "fallback.WithKinds", validate: func() error { return fallback.Validate(fallback.WithKinds(taxonomy.KindRefused)) },
			layer: func() toolmw.Middleware { return fallback.New(fallback.WithKinds(taxonomy.KindRefused)) }},
		{name: "fallback.WithLastGood", validate: func() error { return fallback.Validate(fallback.WithLastGood(-time.Second)) },
			layer: func() toolmw.Middleware { return fallback.New(fallback.WithLastGood(-time.Second)) }},
		{name: "fallback.WithMaxEntries", validate: func() error { return fallback.Validate(fallback.WithMaxEntries(-1)) },
			layer: func() toolmw.Middleware { return fallback.New(fallback.WithMaxEntries(-1)) }},
		{name: "fallback.WithMaxBytes", validate: func() error { return fallback.Validate(fallback.WithMaxBytes(-1)) },
			layer: func() toolmw.Middleware { return fallback.New(fallback.WithMaxBytes(-1)) }},
		{name: "fallback.WithFunc", none: "nil means no function"},
		{name: "fallback.WithPartition", validate: func() error { return fallback.Validate(fallback.WithLastGood(0), fallback.WithPartition(nil)) },
			layer: func() toolmw.Middleware { return fallback.New(fallback.WithLastGood(0), fallback.WithPartition(nil)) }},
		{name: "fallback.WithSharedResults", validate: func() error {
			return fallback.Validate(fallback.WithSharedResults(), fallback.WithPartition(func(context.Context, toolmw.Call) string { return "" }))
		}, layer: func() toolmw.Middleware {
			return fallback.New(fallback.WithSharedResults(), fallback.WithPartition(func(context.Context, toolmw.Call) string { return "" }))
		}},
		{name: "fallback.WithClock", none: "nil means the system clock"},
		{name: "fallback.WithStore", validate: func() error {
			return fallback.Validate(fallback.WithLastGood(0), fallback.WithSharedResults(), fallback.WithStore(nil, store.WithTimeout(-time.Second)))
		}, layer: func() toolmw.Middleware {
			return fallback.New(fallback.WithLastGood(0), fallback.WithSharedResults(), fallback.WithStore(nil, store.WithTimeout(-time.Second)))
		}},
		{name: "fallback.WithOnServe", none: "nil means no callback"},

		{name: "guardrail.Args", validate: func() error { return guardrail.Validate(guardrail.Args("No PII", nil)) },
			layer: func() toolmw.Middleware { return guardrail.New(guardrail.Args("No PII", nil)) }},
		{name: "guardrail.Result", validate: func() error { return guardrail.Validate(guardrail.Result("no_pii", nil)) },
			layer: func() toolmw.Middleware { return guardrail.New(guardrail.Result("no_pii", nil)) }},
		{name: "guardrail.WithOnBlock", none: "nil means no hook"},

		{name: "hedge.WithDelay", validate: func() error { return hedge.Validate(hedge.WithDelay(-time.Second)) },
			layer: func() toolmw.Middleware { return hedge.New(hedge.WithDelay(-time.Second)) }},
		{name: "hedge.WithPercentile", validate: func() error { return hedge.Validate(hedge.WithPercentile(1)) },
			layer: func() toolmw.Middleware { return hedge.New(hedge.WithPercentile(1)) }},
		{name: "hedge.WithMaxLosers", validate: func() error { return hedge.Validate(hedge.WithMaxLosers(-1)) },
			layer: func() toolmw.Middleware { return hedge.New(hedge.WithMaxLosers(-1)) }},
		{name: "hedge.WithBudget", none: "nil means a budget per tool"},
		{name: "hedge.WithOnLate", none: "nil means losers are discarded"},
		{name: "hedge.WithClock", none: "nil means the system clock"},

		{name: "logging.WithSuccessLevel", validate: func() error { return logging.Validate(logging.WithSuccessLevel(slog.LevelWarn)) },
			layer: func() toolmw.Middleware {
				return logging.New(zerolog.New(nil), logging.WithSuccessLevel(slog.LevelWarn))
			},
			stack: middleware.WithLogger(zerolog.New(nil), logging.WithSuccessLevel(slog.LevelWarn))},
		{name: "logging.WithLevel", validate: func() error { return logging.Validate(logging.WithLevel(taxonomy.KindFailed, slog.LevelError+4)) },
			layer: func() toolmw.Middleware {
				return logging.NewSlog(slog.New(slog.NewJSONHandler(nil, nil)), logging.WithLevel(taxonomy.KindFailed, slog.LevelError+4))
			},
			stack: middleware.WithSlog(slog.New(slog.NewJSONHandler(nil, nil)), logging.WithLevel(taxonomy.KindFailed, slog.LevelError+4))},
		{name: "logging.WithClock", none: "nil means the system clock"},
		{name: "logging.WithScrubber", none: "nil means scrub.Default()"},

		{name: "ratelimit.WithMaxWait", validate: func() error { return ratelimit.Validate(1, 1, ratelimit.WithMaxWait(-time.Second)) },
			layer: func() toolmw.Middleware { return ratelimit.New(1, 1, ratelimit.WithMaxWait(-time.Second)) },
			stack: middleware.WithRateLimit(1, 1, ratelimit.WithMaxWait(-time.Second))},
		{name: "ratelimit.WithMaxKeys", validate: func() error { return ratelimit.Validate(1, 1, ratelimit.WithMaxKeys(-1)) },
			layer: func() toolmw.Middleware { return ratelimit.New(1, 1, ratelimit.WithMaxKeys(-1)) },
			stack: middleware.WithRateLimit(1, 1, ratelimit.WithMaxKeys(-1))},
		{name: "ratelimit.New limit", validate: func() error { return ratelimit.Validate(-1, 1) },
			layer: func() toolmw.Middleware { return ratelimit.New(-1, 1) }, stack: middleware.WithRateLimit(-1, 1)},
		{name: "ratelimit.WithReject", none: "takes no value"},
		{name: "ratelimit.WithClock", none: "nil means the system clock"},
		{name: "ratelimit.WithShared", none: "nil means one limiter per tool"},
		{name: "ratelimit.WithKey", none: "nil means one limiter per tool"},
		{name: "ratelimit.WithStore", validate: func() error {
			return ratelimit.Validate(1, 1, ratelimit.WithStore(nil, store.WithTimeout(-time.Second)))
		},
			layer: func() toolmw.Middleware {
				return ratelimit.New(1, 1, ratelimit.WithStore(nil, store.WithTimeout(-time.Second)))
			},
			stack: middleware.WithRateLimit(1, 1, ratelimit.WithStore(nil, store.WithTimeout(-time.Second)))},
		{name: "ratelimit.WithFailClosed", none: "takes no value"},

		{name: "recovery.WithOnPanic", none: "nil means no report"},
		{name: "recovery.WithGoexit", none: "takes no value"},
		{name: "recovery.WithClock", none: "nil means the system clock"},

		{name: "redact.WithScrubber", none: "nil means scrub.Default()"},
		{name: "redact.WithKeyedHash", none: "an empty key means a random key per process"},
		{name: "redact.WithResults", none: "takes no value"},

		{name: "result.WithMaxBytes", validate: func() error { return result.Validate(result.WithMaxBytes(-1)) },
			layer: func() toolmw.Middleware { return result.New(result.WithMaxBytes(-1)) }},
		{name: "result.WithMaxPartBytes", validate: func() error { return result.Validate(result.WithMaxPartBytes(-1)) },
			layer: func() toolmw.Middleware { return result.New(result.WithMaxPartBytes(-1)) }},
		{name: "result.WithMIMETypes", validate: func() error { return result.Validate(result.WithMIMETypes("image")) },
			layer: func() toolmw.Middleware { return result.New(result.WithMIMETypes("image")) }},

		{name: "retry.WithMaxAttempts", validate: func() error { return retry.Validate(retry.WithMaxAttempts(-1)) },
			layer: func() toolmw.Middleware { return retry.New(retry.WithMaxAttempts(-1)) }, stack: middleware.WithRetry(retry.WithMaxAttempts(-1))},
		{name: "retry.WithBackoff", validate: func() error { return retry.Validate(retry.WithBackoff(time.Second, time.Millisecond)) },
			layer: func() toolmw.Middleware { return retry.New(retry.WithBackoff(time.Second, time.Millisecond)) },
			stack: middleware.WithRetry(retry.WithBackoff(time.Second, time.Millisecond))},
		{name: "retry.WithMaxWait", validate: func() error { return retry.Validate(retry.WithMaxWait(-time.Second)) },
			layer: func() toolmw.Middleware { return retry.New(retry.WithMaxWait(-time.Second)) }, stack: middleware.WithRetry(retry.WithMaxWait(-time.Second))},
		{name: "retry.WithClock", none: "nil means the system clock"},
		{name: "retry.WithRand", none: "nil means math/rand/v2"},
		{name: "retry.WithBudget", none: "nil means a budget per tool"},
		{name: "retry.WithoutBudget", none: "takes no value"},

		{name: "runlimit.Max", validate: func() error { return runlimit.Validate(runlimit.Max("search", 0)) },
			layer: func() toolmw.Middleware { return runlimit.New(runlimit.Max("search", 0)) }},
		{name: "runlimit.Once", validate: func() error { return runlimit.Validate(runlimit.Once("not a tool")) },
			layer: func() toolmw.Middleware { return runlimit.New(runlimit.Once("not a tool")) }},
		{name: "runlimit.WithStore", validate: func() error { return runlimit.Validate(runlimit.WithStore(nil, store.WithTimeout(-time.Second))) },
			layer: func() toolmw.Middleware {
				return runlimit.New(runlimit.WithStore(nil, store.WithTimeout(-time.Second)))
			}},
		{name: "runlimit.WithFailClosed", none: "takes no value"},

		{name: "spend.Fixed", validate: func() error { return spend.Validate(spend.Fixed("search", -1)) },
			layer: func() toolmw.Middleware { return spend.New(spend.Fixed("search", -1)) }},
		{name: "spend.Metered", validate: func() error { return spend.Validate(spend.Metered("search", 1, nil)) },
			layer: func() toolmw.Middleware { return spend.New(spend.Metered("search", 1, nil)) }},
		{name: "spend.WithOnBadCost", none: "nil means no report"},
		{name: "spend.WithStore", validate: func() error { return spend.Validate(spend.WithStore(nil, store.WithTimeout(-time.Second))) },
			layer: func() toolmw.Middleware { return spend.New(spend.WithStore(nil, store.WithTimeout(-time.Second))) }},
		{name: "spend.WithFailClosed", none: "takes no value"},
		{name: "spend.WithCurrency", validate: func() error { return spend.Validate(spend.WithCurrency("US$ dollars")) },
			layer: func() toolmw.Middleware { return spend.New(spend.WithCurrency("US$ dollars")) }},
		{name: "spend.ContextWithLimit", none: "a context setter, not an option: a limit that is not an amount fails closed at run time, and spend.ValidateLimit reports it"},

		{name: "timeout.New d", validate: func() error { return timeout.Validate(-time.Second) },
			layer: func() toolmw.Middleware { return timeout.New(-time.Second) }, stack: middleware.WithTimeout(-time.Second)},
		{name: "timeout.WithAbandon", validate: func() error { return timeout.Validate(time.Second, timeout.WithAbandon()) },
			layer: func() toolmw.Middleware { return timeout.New(time.Second, timeout.WithAbandon()) },
			stack: middleware.WithTimeout(time.Second, timeout.WithAbandon())},
		{name: "timeout.WithOnLate", none: "nil means none; WithAbandon without it is invalid (the row above)"},
		{name: "timeout.WithMaxAbandoned", validate: func() error { return timeout.Validate(time.Second, timeout.WithMaxAbandoned(-1)) },
			layer: func() toolmw.Middleware { return timeout.New(time.Second, timeout.WithMaxAbandoned(-1)) },
			stack: middleware.WithTimeout(time.Second, timeout.WithMaxAbandoned(-1))},
		{name: "timeout.WithClock", none: "nil means the system clock"},

		{name: "tracing.WithCodes", validate: func() error { return tracing.Validate(tracing.WithCodes("Not A Code")) },
			layer: func() toolmw.Middleware { return tracing.New(tracing.WithCodes("Not A Code")) }, stack: middleware.WithTracing(tracing.WithCodes("Not A Code"))},
		{name: "tracing.WithTracerProvider", none: "nil means the global provider"},
		{name: "tracing.WithMeterProvider", none: "nil means the global provider"},
		{name: "tracing.WithClock", none: "nil means the system clock"},
		{name: "tracing.WithContent", validate: func() error { return tracing.Validate(tracing.WithContent(-1)) },
			layer: func() toolmw.Middleware { return tracing.New(tracing.WithContent(-1)) }, stack: middleware.WithTracing(tracing.WithContent(-1))},
		{name: "tracing.WithContent", validate: func() error { return tracing.Validate(tracing.WithContent(tracing.MaxContentBytes + 1)) },
			layer: func() toolmw.Middleware { return tracing.New(tracing.WithContent(tracing.MaxContentBytes + 1)) }, stack: middleware.WithTracing(tracing.WithContent(tracing.MaxContentBytes + 1))},
		{name: "tracing.WithScrubber", none: "nil means scrub.Default()"},
		{name: "tracing.WithoutDescription", none: "takes no value"},
		{name: "tracing.WithAgentName", validate: func() error { return tracing.Validate(tracing.WithAgentName("agent\nname")) },
			layer: func() toolmw.Middleware { return tracing.New(tracing.WithAgentName("agent\nname")) }, stack: middleware.WithTracing(tracing.WithAgentName("agent\nname"))},
		{name: "tracing.WithToolName", validate: func() error { return tracing.Validate(tracing.WithToolName("no spaces")) },
			layer: func() toolmw.Middleware { return tracing.New(tracing.WithToolName("no spaces")) }, stack: middleware.WithTracing(tracing.WithToolName("no spaces"))},
	}
}

// TestEveryBadOptionIsTyped walks every exported With… of every layer
// package (the list is checked against the source below) and asserts that a
// bad value is a tool-definition-invalid/option_invalid error through the
// package's Validate, through toolmw.Wrap, and for the layers of the
// default stack through middleware.Validate and Stack.Wrap — never a panic,
// never silence.
func TestEveryBadOptionIsTyped(t *testing.T) {
	tool := func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("ok"), nil }
	spec := toolmw.Spec{Name: "search"}
	typed := func(t *testing.T, how string, err error) {
		t.Helper()
		if info := taxonomy.InfoOf(err); err == nil || info.Kind != taxonomy.KindDefinitionInvalid || info.Code != taxonomy.CodeOptionInvalid {
			t.Errorf("%s: %v, want tool-definition-invalid/option_invalid", how, err)
		}
	}
	for _, c := range badOptions() {
		t.Run(c.name, func(t *testing.T) {
			if c.none != "" {
				return
			}
			typed(t, "Validate", c.validate())
			_, err := toolmw.Wrap(spec, tool, c.layer())
			typed(t, "toolmw.Wrap", err)
			if c.stack == nil {
				return
			}
			typed(t, "middleware.Validate", middleware.Validate(c.stack))
			_, err = middleware.Default(c.stack).Wrap(spec, tool)
			typed(t, "Stack.Wrap", err)
		})
	}
	if err := middleware.Validate(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	// permit's only value, a policy, has no invalid value either.
	if err := permit.Validate(nil); err != nil {
		t.Fatalf("permit: %v", err)
	}
	_ = classify.Validate()
	_ = recovery.Validate()
}

// TestBadOptionListIsComplete fails when a layer package exports a With…
// that badOptions does not list, so a new option cannot skip the rule.
func TestBadOptionListIsComplete(t *testing.T) {
	listed := map[string]bool{}
	for _, c := range badOptions() {
		listed[c.name] = true
	}
	files, err := filepath.Glob("*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() || !strings.HasPrefix(fn.Name.Name, "With") {
				continue
			}
			if name := f.Name.Name + "." + fn.Name.Name; !listed[name] {
				t.Errorf("%s (%s) is not in badOptions: add its bad value, or why it has none", name, path)
			}
		}
	}
}
