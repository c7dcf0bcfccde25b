package mapper

import (
	"time"

	"github.com/toolmw/toolmw/taxonomy"
)

// Retry says when an error made from a [Verdict] is retryable.
type Retry uint8

// The retry modes.
const (
	// RetryNever: the error is never retryable.
	RetryNever Retry = iota
	// RetryAlways: nothing landed; the same call may succeed.
	RetryAlways
	// RetryIfIdempotent: the request may have been processed, so the error
	// is retryable only for a tool declared idempotent.
	RetryIfIdempotent
)

// Verdict is what a matched foreign error becomes: a kind, a code, a
// message, when it is retryable and a default retry-after hint. A Verdict
// is a small immutable value; its With methods return modified copies.
//
// The zero Verdict is a permanent tool-failed error with code
// [taxonomy.CodeInvalidCode], like any error made with an empty code.
type Verdict struct {
	kind       taxonomy.Kind
	code       string
	message    string
	retry      Retry
	retryAfter time.Duration
}

// NewVerdict returns a verdict of any kind. The constructors below cover
// the usual cases; use NewVerdict for the others, such as a timeout that is
// never retried. Each declares its code (taxonomy.Declare), so that layers
// writing codes into a bounded vocabulary, such as tracing, know it.
func NewVerdict(kind taxonomy.Kind, code string, retry Retry) Verdict {
	return Verdict{kind: kind, code: taxonomy.Declare(code), retry: retry}
}

// Transient returns a retryable tool-failed verdict: the dependency did not
// process the request, so the same call may succeed. A Retry-After carried by
// the error is used as the hint.
func Transient(code string) Verdict {
	return NewVerdict(taxonomy.KindFailed, code, RetryAlways)
}

// TransientIfIdempotent returns a tool-failed verdict that is retryable only
// for an idempotent tool: the request went out and may have landed (a reset
// connection, a 502).
func TransientIfIdempotent(code string) Verdict {
	return NewVerdict(taxonomy.KindFailed, code, RetryIfIdempotent)
}

// Permanent returns a tool-failed verdict that is never retried.
func Permanent(code string) Verdict {
	return NewVerdict(taxonomy.KindFailed, code, RetryNever)
}

// Refusal returns a tool-refused verdict: the dependency answered no. The
// message is shown to the model; a refusal is never retried.
func Refusal(code, message string) Verdict {
	return NewVerdict(taxonomy.KindRefused, code, RetryNever).WithMessage(message)
}

// Timeout returns a tool-timeout verdict, retryable only for an idempotent
// tool: a request that timed out may have had its side effect.
func Timeout(code string) Verdict {
	return NewVerdict(taxonomy.KindTimeout, code, RetryIfIdempotent)
}

// NotPermitted returns a tool-not-permitted verdict, never retried.
func NotPermitted(code string) Verdict {
	return NewVerdict(taxonomy.KindNotPermitted, code, RetryNever)
}

// RateLimited returns a retryable rate-limited verdict: the dependency said
// too many requests and did not process this one. A Retry-After carried by
// the error is used as the hint.
func RateLimited(code string) Verdict {
	return NewVerdict(taxonomy.KindRateLimited, code, RetryAlways)
}

// WithMessage returns a copy of o with a message, the text of the typed
// error. It passes through the map's scrubber like every message the map
// makes.
func (o Verdict) WithMessage(message string) Verdict {
	o.message = message
	return o
}

// WithRetryAfter returns a copy of o with a default retry-after hint, used
// when the verdict is retryable and the error carries no Retry-After of its
// own. A negative d is treated as 0.
func (o Verdict) WithRetryAfter(d time.Duration) Verdict {
	o.retryAfter = max(d, 0)
	return o
}

// retryable reports whether an error made from o is retryable for a tool
// that is idempotent or not.
func (o Verdict) retryable(idempotent bool) bool {
	return o.retry == RetryAlways || (o.retry == RetryIfIdempotent && idempotent)
}
