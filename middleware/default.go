package middleware

import (
	"log/slog"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/classify"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/middleware/logging"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/middleware/recovery"
	"github.com/toolmw/toolmw/middleware/redact"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/timeout"
	"github.com/toolmw/toolmw/middleware/tracing"
)

// The names of the default layers, outermost first.
const (
	Tracing   = "tracing"
	Logging   = "logging"
	Events    = "events"
	Retry     = "retry"
	Breaker   = "breaker"
	RateLimit = "ratelimit"
	Timeout   = "timeout"
	Recovery  = "recovery"
	Redact    = "redact"
	Classify  = "classify"
)

// The names of the layers you insert yourself (see [Stack.InsertBefore]),
// by the package each comes from. Give a layer its package's name, so
// that a stack's String and its errors name it as the documentation does.
const (
	Approval = "approval"
	Bulkhead = "bulkhead"
	Cache    = "cache"
	// Chaos is the name of a chaos layer (package middleware/chaos, fault
	// injection), never in Default: a stack with a layer of this name
	// says so in its String. Insert it innermost, after Classify.
	Chaos     = "chaos"
	Dedupe    = "dedupe"
	Fallback  = "fallback"
	Guardrail = "guardrail"
	Hedge     = "hedge"
	Permit    = "permit"
	Policy    = "policy" // package policy: the layers a policy file gives each tool
	Result    = "result"
	RunLimit  = "runlimit"
	Spend     = "spend"
)

// DefaultTimeout is the default stack's per-attempt timeout.
const DefaultTimeout = 30 * time.Second

// Option configures Default.
type Option func(*config)

type config struct {
	tracing     []tracing.Option
	logger      func(...logging.Option) toolmw.Middleware // nil: no logs
	logging     []logging.Option
	sink        events.Sink
	events      []events.Option
	retry       []retry.Option
	breaker     []breaker.Option
	limit       rate.Limit
	burst       int
	ratelimit   []ratelimit.Option
	timeout     time.Duration
	timeoutOpts []timeout.Option
	recovery    []recovery.Option
	redact      []redact.Option
	classify    []classify.Option
}

// WithTracing configures the tracing layer (default: the otel global tracer
// and meter providers).
func WithTracing(opts ...tracing.Option) Option {
	return func(c *config) { c.tracing = opts }
}

// WithLogger logs each call to a zerolog logger (default: no logs); see
// logging.New. The last of WithLogger and [WithSlog] wins.
func WithLogger(l zerolog.Logger, opts ...logging.Option) Option {
	return func(c *config) {
		c.logger = func(o ...logging.Option) toolmw.Middleware { return logging.New(l, o...) }
		c.logging = opts
	}
}

// WithSlog logs each call to a log/slog logger (default: no logs), with the
// same lines, fields and levels as [WithLogger]; nil means slog.Default().
// See logging.NewSlog. The last of WithLogger and WithSlog wins.
func WithSlog(l *slog.Logger, opts ...logging.Option) Option {
	return func(c *config) {
		c.logger = func(o ...logging.Option) toolmw.Middleware { return logging.NewSlog(l, o...) }
		c.logging = opts
	}
}

// WithEvents sends a tool_error event per failed call to sink (default: no
// sink; the events layer is then off).
func WithEvents(sink events.Sink, opts ...events.Option) Option {
	return func(c *config) { c.sink, c.events = sink, opts }
}

// WithRetry configures the retry layer (default: 3 attempts, full-jitter
// backoff, a retry budget per tool).
func WithRetry(opts ...retry.Option) Option {
	return func(c *config) { c.retry = opts }
}

// WithBreaker configures the breaker layer (default: a breaker per tool that
// opens after 5 consecutive dependency faults).
func WithBreaker(opts ...breaker.Option) Option {
	return func(c *config) { c.breaker = opts }
}

// WithRateLimit limits each tool to limit calls a second in bursts of burst
// (default: no limit; the layer is then off).
func WithRateLimit(limit rate.Limit, burst int, opts ...ratelimit.Option) Option {
	return func(c *config) { c.limit, c.burst, c.ratelimit = limit, burst, opts }
}

// WithTimeout sets the per-attempt timeout (default DefaultTimeout; 0
// switches the layer off, as timeout.New(0) does, and a negative d is
// invalid).
func WithTimeout(d time.Duration, opts ...timeout.Option) Option {
	return func(c *config) { c.timeout, c.timeoutOpts = d, opts }
}

// WithRecovery configures the recovery layer, for example its debug hook.
func WithRecovery(opts ...recovery.Option) Option {
	return func(c *config) { c.recovery = opts }
}

// WithRedact configures the redact layer (default: the default scrubber on
// the messages of typed errors).
func WithRedact(opts ...redact.Option) Option {
	return func(c *config) { c.redact = opts }
}

// WithMapper sets the map the classify layer uses (default mapper.Default()).
func WithMapper(m *mapper.Map) Option {
	return func(c *config) { c.classify = []classify.Option{classify.WithMap(m)} }
}

// Default returns the default stack, outermost first:
//
//	tracing → logging → events → retry → breaker → ratelimit → timeout → recovery → redact → classify → tool
//
// Each layer sees what the layers inside it made of the call:
//
//   - classify is innermost, so every layer above sees typed errors: a
//     foreign error is translated (and its text scrubbed) before the breaker
//     decides whether it is a dependency fault and before retry decides
//     whether to try again.
//   - redact scrubs the messages tool authors put in their own typed errors,
//     which classify passes through untouched.
//   - recovery sits inside timeout, so a panic ends the attempt as
//     tool_panicked and the timeout's goroutine never dies with it.
//   - timeout is per attempt: it sits inside retry, so each attempt gets the
//     full duration and a timed-out idempotent attempt can be retried.
//   - ratelimit and breaker are inside retry, so every attempt asks them:
//     a retry is throttled like a first call, and every attempt that reaches
//     the dependency is counted by the breaker.
//   - retry sits inside the observers, so tracing, logging and events see
//     one call with its final outcome and the number of attempts.
//
// Reordering changes the meaning: timeout outside retry is one deadline for
// all attempts together; breaker outside retry makes one breaker decision
// per call (a call's retries then never meet an open circuit); ratelimit
// outside retry admits a call once, however many attempts it makes.
//
// Zero-config defaults are safe: no logs, the otel global
// providers, no events, no rate limit, a 30-second per-attempt timeout,
// 3 attempts with a retry budget per tool, a breaker per tool. Options
// configure each layer; Replace, Remove and Insert swap whole layers.
func Default(opts ...Option) Stack {
	c := config{limit: rate.Inf, timeout: DefaultTimeout}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	var ev toolmw.Middleware = off
	if c.sink != nil {
		ev = events.New(c.sink, c.events...)
	}
	var lg toolmw.Middleware = off
	if c.logger != nil {
		lg = c.logger(c.logging...)
	}
	s, err := NewStack(
		Layer{Tracing, tracing.New(c.tracing...)},
		Layer{Logging, lg},
		Layer{Events, ev},
		Layer{Retry, retry.New(c.retry...)},
		Layer{Breaker, breaker.New(c.breaker...)},
		Layer{RateLimit, ratelimit.New(c.limit, c.burst, c.ratelimit...)},
		Layer{Timeout, timeout.New(c.timeout, c.timeoutOpts...)},
		Layer{Recovery, recovery.New(c.recovery...)},
		Layer{Redact, redact.New(c.redact...)},
		Layer{Classify, classify.New(c.classify...)},
	)
	if err != nil {
		panic(err) // the names above are distinct and the layers non-nil
	}
	return s
}

// off is a switched-off layer: it returns the tool unchanged.
func off(next toolmw.Tool) toolmw.Tool { return next }

// Validate reports the first invalid option value of any of Default's
// layers, as a tool-definition-invalid/option_invalid error, or nil. Call it
// at start-up to fail fast on a bad configuration; Stack.Wrap reports the
// same error for the first tool it wraps, since each layer given a bad value
// is a toolmw.Reject.
func Validate(opts ...Option) error {
	c := config{limit: rate.Inf, timeout: DefaultTimeout}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	for _, err := range []error{
		tracing.Validate(c.tracing...),
		logging.Validate(c.logging...),
		events.Validate(c.events...),
		retry.Validate(c.retry...),
		breaker.Validate(c.breaker...),
		ratelimit.Validate(c.limit, c.burst, c.ratelimit...),
		timeout.Validate(c.timeout, c.timeoutOpts...),
		recovery.Validate(c.recovery...),
		redact.Validate(c.redact...),
		classify.Validate(c.classify...),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}
