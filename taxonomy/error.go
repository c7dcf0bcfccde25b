package taxonomy

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/toolmw/toolmw/internal/errchain"
)

// Error is implemented by every error toolmw and its layers produce. Error()
// and the accessors never print the underlying cause: a cause is reachable
// through Unwrap for errors.Is and errors.As in code, but its text, which may
// hold secrets, is not part of the typed error's message.
//
// Implementations must be immutable and safe for concurrent use, as *ToolError is.
type Error interface {
	error
	// Unwrap returns the cause, or nil.
	Unwrap() error
	// Kind is the stable category.
	Kind() Kind
	// Code is the snake_case reason.
	Code() string
	// Tool is the name of the tool the error came from, or "".
	Tool() string
	// Retryable reports whether the same call may succeed if made again.
	Retryable() bool
	// RetryAfter is how long to wait before trying again, or 0 for no hint.
	RetryAfter() time.Duration
}

// ToolError is the concrete typed error made by this package's constructors.
// A *ToolError is immutable: the With methods return a modified copy, so a
// value may be shared and used from many goroutines.
type ToolError struct {
	kind       Kind
	code       string
	tool       string
	message    string
	retryable  bool
	retryAfter time.Duration
	fields     []FieldError
	cause      error
	final      bool
	approval   *ApprovalInfo // never shared with a caller: accessors copy
	spend      *SpendInfo
	guardrail  string
}

var _ Error = (*ToolError)(nil)

// New returns an error of the given kind with a code and a message. It is
// retryable when the kind is retryable by default (circuit-open,
// rate-limited); use WithRetryable to say otherwise. An empty or malformed
// code becomes [CodeInvalidCode]; a kind that is not one of the built-in
// kinds becomes [KindFailed].
func New(kind Kind, code, message string) *ToolError {
	ki, ok := lookupKind(kind)
	if !ok {
		kind = KindFailed
		ki, _ = lookupKind(kind)
	}
	if !ValidCode(code) {
		code = CodeInvalidCode
	}
	return &ToolError{kind: kind, code: code, message: message, retryable: ki.Retryable}
}

// Failure returns a permanent failure: the tool tried and could not finish,
// and repeating the call is not known to be safe. Say [Transient] when it is.
func Failure(code, message string) *ToolError {
	return New(KindFailed, code, message)
}

// Transient returns a transient failure: the author vouches that nothing
// landed and the same call may succeed, so it is retryable.
func Transient(code, message string) *ToolError {
	e := New(KindFailed, code, message)
	e.retryable = true
	return e
}

// Refusal returns a refusal: the tool worked and declined. The message is
// shown to the model as data. A refusal is never retryable.
func Refusal(code, message string) *ToolError {
	return New(KindRefused, code, message)
}

// NotPermitted returns a permission denial.
func NotPermitted(code, message string) *ToolError {
	return New(KindNotPermitted, code, message)
}

// Timeout returns a timeout. It matches context.DeadlineExceeded. It is
// retryable only when idempotent is true: a call that timed out may have had
// its side effect.
func Timeout(code, message string, idempotent bool) *ToolError {
	e := New(KindTimeout, code, message)
	e.retryable = idempotent
	return e
}

// ArgsInvalid returns a tool-args-invalid error carrying field errors.
func ArgsInvalid(fields ...FieldError) *ToolError {
	e := New(KindArgsInvalid, CodeArgsInvalid, "arguments do not match the tool's input")
	e.fields = fields
	return e
}

// ResultInvalid returns a tool-result-invalid error.
func ResultInvalid(code, message string) *ToolError {
	return New(KindResultInvalid, code, message)
}

func (e *ToolError) clone() *ToolError {
	c := *e
	return &c
}

// WithTool returns a copy of e naming the tool it came from.
func (e *ToolError) WithTool(name string) *ToolError {
	c := e.clone()
	c.tool = name
	return c
}

// WithRetryAfter returns a copy of e with a retry-after hint, clamped to
// [0, MaxRetryAfter].
func (e *ToolError) WithRetryAfter(d time.Duration) *ToolError {
	c := e.clone()
	c.retryAfter = ClampRetryAfter(d)
	return c
}

// MaxRetryAfter is the longest retry-after hint an error carries: a longer
// one, from a server's Retry-After or an error made elsewhere, is clamped to
// it, so that every hint survives arithmetic and a JSON round trip. No
// retry layer waits anywhere near this long (retry's own cap is 30 s).
const MaxRetryAfter = 24 * time.Hour

// ClampRetryAfter returns d held to [0, MaxRetryAfter].
func ClampRetryAfter(d time.Duration) time.Duration {
	return min(max(d, 0), MaxRetryAfter)
}

// WithRetryable returns a copy of e that is retryable or not. A refusal and a
// cancellation stay not retryable whatever is asked.
func (e *ToolError) WithRetryable(retryable bool) *ToolError {
	c := e.clone()
	c.retryable = retryable && c.mayRetry()
	return c
}

// WithCause returns a copy of e wrapping cause, reachable through Unwrap. The
// cause's text never appears in e's message. When cause is or wraps
// context.Canceled, the copy is not retryable.
func (e *ToolError) WithCause(cause error) *ToolError {
	c := e.clone()
	c.cause = cause
	c.retryable = c.retryable && c.mayRetry()
	return c
}

// WithMessage returns a copy of e with another message; layers use it to
// scrub a message.
func (e *ToolError) WithMessage(message string) *ToolError {
	c := e.clone()
	c.message = message
	return c
}

// WithFields returns a copy of e carrying field errors.
func (e *ToolError) WithFields(fields ...FieldError) *ToolError {
	c := e.clone()
	c.fields = append([]FieldError(nil), fields...)
	return c
}

// WithFinal returns a copy of e marked final: a retry layer has already
// retried the call, or chose not to, so [ShouldRetry] says no whatever
// [ToolError.Retryable] reports. Retryable keeps the underlying answer (would
// the same call succeed if made again?) for dashboards and records.
func (e *ToolError) WithFinal() *ToolError {
	c := e.clone()
	c.final = true
	return c
}

// WithApproval returns a copy of e naming the approval request the call
// waits for or was decided by: its id and a summary a reviewer can read.
// The id must be a safe token, 1 to [MaxApprovalIDLen] bytes of ASCII
// letters, digits and "_-.:"; with any other id the copy carries no
// approval record. The summary is shown to people and sinks as it is, so its
// maker scrubs it first (the approval layer does, with package scrub); it is
// made valid UTF-8 and held to [MaxApprovalSummary] bytes, a longer one cut
// at a character boundary and ended with "…".
func (e *ToolError) WithApproval(id, summary string) *ToolError {
	c := e.clone()
	c.approval = newApproval(id, summary)
	return c
}

// WithSpend returns a copy of e saying how much the run may spend (limit)
// and has spent; what is left is limit-spent, never below 0. A negative,
// NaN or infinite amount counts as 0, so the record always encodes as JSON.
func (e *ToolError) WithSpend(limit, spent float64) *ToolError {
	c := e.clone()
	c.spend = newSpend(limit, spent)
	return c
}

// WithGuardrail returns a copy of e naming the guardrail that blocked the
// call. The name follows the rule for codes ([ValidCode]): it names a check,
// it never quotes content; a malformed name becomes "invalid_name".
func (e *ToolError) WithGuardrail(name string) *ToolError {
	c := e.clone()
	c.guardrail = guardrailName(name)
	return c
}

func (e *ToolError) mayRetry() bool {
	switch e.kind {
	case KindApprovalPending, KindApprovalDenied:
		// Asking again before a person decides, or after one said no,
		// cannot change the answer.
		return false
	}
	if e.kind == KindRefused || e.kind == KindCancelled {
		return false
	}
	return e.cause == nil || !errors.Is(e.cause, context.Canceled)
}

// Kind returns the error's kind.
func (e *ToolError) Kind() Kind { return e.kind }

// Code returns the error's code.
func (e *ToolError) Code() string { return e.code }

// Tool returns the tool's name, or "".
func (e *ToolError) Tool() string { return e.tool }

// Message returns the message the maker gave, without the cause.
func (e *ToolError) Message() string { return e.message }

// Retryable reports whether the same call may succeed if made again.
func (e *ToolError) Retryable() bool { return e.retryable }

// Final reports whether a retry layer has already decided about the call
// that ended in e (see [ToolError.WithFinal]).
func (e *ToolError) Final() bool { return e.final }

// RetryAfter returns the retry-after hint, or 0.
func (e *ToolError) RetryAfter() time.Duration { return e.retryAfter }

// Fields returns the field errors of a tool-args-invalid error. The caller
// must not modify the returned slice.
func (e *ToolError) Fields() []FieldError { return e.fields }

// Unwrap returns the cause, or nil.
func (e *ToolError) Unwrap() error { return e.cause }

// Approval returns a copy of the approval record (see
// [ToolError.WithApproval]), or nil.
func (e *ToolError) Approval() *ApprovalInfo {
	if e.approval == nil {
		return nil
	}
	a := *e.approval
	return &a
}

// Spend returns a copy of the spend record (see [ToolError.WithSpend]), or
// nil.
func (e *ToolError) Spend() *SpendInfo {
	if e.spend == nil {
		return nil
	}
	s := *e.spend
	return &s
}

// Guardrail returns the name of the guardrail that blocked the call, or "".
func (e *ToolError) Guardrail() string { return e.guardrail }

// Error renders "tool: kind code: message". It never includes the cause.
func (e *ToolError) Error() string {
	var b strings.Builder
	b.Grow(len(e.tool) + len(e.kind) + len(e.code) + len(e.message) + 8)
	if e.tool != "" {
		b.WriteString(e.tool)
		b.WriteString(": ")
	}
	b.WriteString(string(e.kind))
	b.WriteByte(' ')
	b.WriteString(e.code)
	if e.message != "" {
		b.WriteString(": ")
		b.WriteString(e.message)
	}
	return b.String()
}

// Is reports whether target is the sentinel of e's kind, or
// context.DeadlineExceeded for a timeout, or context.Canceled for a
// cancellation.
func (e *ToolError) Is(target error) bool {
	switch target {
	case context.DeadlineExceeded:
		return e.kind == KindTimeout
	case context.Canceled:
		return e.kind == KindCancelled
	}
	if s, ok := target.(*sentinel); ok {
		return s.kind == e.kind
	}
	return false
}

// sentinel is the type of the Err* values.
type sentinel struct{ kind Kind }

func (s *sentinel) Error() string { return "toolmw: " + string(s.kind) }

// Sentinels, one per kind, for errors.Is.
var (
	ErrFailed               error = &sentinel{KindFailed}
	ErrRefused              error = &sentinel{KindRefused}
	ErrTimeout              error = &sentinel{KindTimeout}
	ErrCancelled            error = &sentinel{KindCancelled}
	ErrNotPermitted         error = &sentinel{KindNotPermitted}
	ErrNotFound             error = &sentinel{KindNotFound}
	ErrArgsInvalid          error = &sentinel{KindArgsInvalid}
	ErrResultInvalid        error = &sentinel{KindResultInvalid}
	ErrCircuitOpen          error = &sentinel{KindCircuitOpen}
	ErrRateLimited          error = &sentinel{KindRateLimited}
	ErrRetryBudgetExhausted error = &sentinel{KindRetryBudgetExhausted}
	ErrRunLimitExceeded     error = &sentinel{KindRunLimitExceeded}
	ErrDefinitionInvalid    error = &sentinel{KindDefinitionInvalid}
	ErrDuplicateTool        error = &sentinel{KindDuplicateTool}
	ErrApprovalPending      error = &sentinel{KindApprovalPending}
	ErrApprovalDenied       error = &sentinel{KindApprovalDenied}
	ErrBudgetExceeded       error = &sentinel{KindBudgetExceeded}
	ErrGuardrailBlocked     error = &sentinel{KindGuardrailBlocked}
)

// From returns the first typed error in err's chain, walking Unwrap() error
// and Unwrap() []error depth first, without allocating.
func From(err error) (Error, bool) {
	return errchain.Find(err, asError)
}

func asError(err error) (Error, bool) {
	te, ok := err.(Error)
	return te, ok
}

// ShouldRetry is the retry rule: whether a call that ended in err may be made
// again, and the least wait before it. Cancellation is never retried; a final
// error (one a retry layer has already decided about, see [Final]) is not; a
// typed error is retried when it says so; a bare context.DeadlineExceeded is
// not (the caller's time is up); any other untyped error only when the caller
// says the tool is idempotent.
func ShouldRetry(err error, idempotent bool) (retryable bool, after time.Duration) {
	if err == nil || errors.Is(err, context.Canceled) {
		return false, 0
	}
	if te, ok := From(err); ok {
		if !te.Retryable() || isFinal(te) {
			return false, 0
		}
		return true, te.RetryAfter()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return false, 0
	}
	return idempotent, 0
}

// Final returns err marked final, for a retry layer handing its last word to
// the loop: [ShouldRetry] then says no, while [InfoOf] still reports the
// underlying kind, code, retryability and RetryAfter. An error ShouldRetry
// already refuses, nil and a cancellation are returned as they are. A
// *ToolError that is err itself is copied with [ToolError.WithFinal]; any
// other error comes back as a *ToolError with the record [InfoOf] gives it
// (for an untyped error: tool-failed/unmapped_failure, retryable as
// idempotent says), wrapping err, so errors.Is and errors.As still see err's
// chain.
func Final(err error, idempotent bool) error {
	if ok, _ := ShouldRetry(err, idempotent); !ok {
		return err
	}
	if te, ok := err.(*ToolError); ok {
		return te.WithFinal()
	}
	e := InfoOf(err).Err()
	if _, typed := From(err); !typed {
		e.retryable = idempotent
	}
	e.cause = err
	e.final = true
	return e
}

// IsFinal reports whether the first typed error in err's chain is final (see
// [Final]).
func IsFinal(err error) bool {
	te, ok := From(err)
	return ok && isFinal(te)
}

func isFinal(te Error) bool {
	f, ok := te.(interface{ Final() bool })
	return ok && f.Final()
}

// Outcome is how a call ended, as telemetry reports it.
type Outcome string

// The outcomes.
const (
	OutcomeOK           Outcome = "ok"            // the tool returned a result
	OutcomeFailed       Outcome = "failed"        // any failure not listed below
	OutcomeRefused      Outcome = "refused"       // tool-refused: the tool said no, an answer
	OutcomeNotPermitted Outcome = "not_permitted" // tool-not-permitted: a permission decision denied the call
	OutcomeTimedOut     Outcome = "timed_out"     // a timeout or the deadline
	OutcomeCancelled    Outcome = "cancelled"     // the caller cancelled
	OutcomePending      Outcome = "pending"       // approval-pending: the call waits for a person's decision
	OutcomeDenied       Outcome = "denied"        // approval-denied: a reviewer said no, an answer
	OutcomeBlocked      Outcome = "blocked"       // guardrail-blocked: a guardrail stopped the arguments or the result
)

// OutcomeOf classifies how a call that returned err ended.
func OutcomeOf(err error) Outcome {
	if err == nil {
		return OutcomeOK
	}
	if te, ok := From(err); ok {
		switch te.Kind() {
		case KindRefused:
			return OutcomeRefused
		case KindNotPermitted:
			return OutcomeNotPermitted
		case KindTimeout:
			return OutcomeTimedOut
		case KindCancelled:
			return OutcomeCancelled
		case KindApprovalPending:
			return OutcomePending
		case KindApprovalDenied:
			return OutcomeDenied
		case KindGuardrailBlocked:
			return OutcomeBlocked
		}
		if errors.Is(err, context.Canceled) {
			return OutcomeCancelled
		}
		return OutcomeFailed
	}
	switch {
	case errors.Is(err, context.Canceled):
		return OutcomeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimedOut
	}
	return OutcomeFailed
}
