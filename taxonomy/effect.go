package taxonomy

import (
	"context"
	"errors"
)

// Effect is what a call that ended in an error may have done, as far as
// the error can tell: the one rule every layer that counts executions (a
// per-run call limit, a spend limit) and everyone else who asks "did this
// call possibly run?" decides on. [EffectOf] classifies an error.
type Effect string

// The effects, from the least known to the best known.
const (
	// EffectPossible: the call may have run and acted. A success; a
	// permanent failure; a refusal (an answer: the tool ran); a result
	// that may not enter the run (the tool ran); any timeout (the
	// per-attempt timeout, the caller's deadline, a dependency's or the
	// network's timeout: the request may have gone out and landed, and an
	// abandoned execution may still be running); a connection reset or an
	// upstream error after the request may have gone out; a cancellation
	// (the tool may have acted before it saw it); a panic; an untyped
	// error; an error of a kind this package does not know. What is not
	// known to have had no effect has possibly had one.
	EffectPossible Effect = "possible"
	// EffectNone: the tool was started, and the error's maker vouches that
	// nothing landed: a typed error that is retryable ("the same call may
	// succeed", see [Transient]) and is not one of the outcomes above that
	// are unknown whatever their maker says (a timeout, a reset, a
	// cancellation); or a dependency that refused the request before
	// acting on it (HTTP 401, 403 and 429). A supplier may still bill such
	// a request.
	EffectNone Effect = "none"
	// EffectNotStarted: the call never started the tool: a breaker, a rate
	// limit or a full bulkhead, a budget, a call or spend limit, a
	// permission or approval decision, arguments that did not decode, no
	// such tool, a guardrail that blocked the arguments, the timeout
	// layer's bound on abandoned executions, a repeat the dedupe layer
	// answered without running the tool. An error made by the retry layer
	// after attempts that did run (retry_budget_exhausted,
	// run_attempts_exhausted, retry_wait_past_deadline,
	// retry_wait_too_long) is as its cause, the last attempt's error, is.
	EffectNotStarted Effect = "not_started"
)

// codeEffects fixes the effect of the built-in codes whose meaning decides
// it whatever the kind or retryability an error is made with. A built-in
// code not listed is classified by its kind and retryability, as a code of
// a tool author's is (see [EffectOf]); the table test over [Codes] makes
// every new built-in code say which.
var codeEffects = map[string]Effect{
	// Unknown outcomes: the request may have gone out and landed.
	CodeUnmappedFailure:  EffectPossible,
	CodeToolPanicked:     EffectPossible,
	CodeToolExited:       EffectPossible,
	CodeUpstreamError:    EffectPossible,
	CodeConnectionReset:  EffectPossible,
	CodeTimeout:          EffectPossible,
	CodeDeadlineExceeded: EffectPossible,
	CodeUpstreamTimeout:  EffectPossible,
	CodeCancelled:        EffectPossible,
	CodeGuardrailResult:  EffectPossible,

	// The dependency refused the request before acting on it (HTTP 401,
	// 403, 429).
	CodeUpstreamUnauthorized: EffectNone,
	CodeUpstreamForbidden:    EffectNone,
	CodeUpstreamRateLimited:  EffectNone,

	// Nothing was started.
	CodeTooManyAbandoned:      EffectNotStarted,
	CodeDuplicateInDoubt:      EffectNotStarted,
	CodeDuplicateDropped:      EffectNotStarted,
	CodeCallIDReused:          EffectNotStarted,
	CodeCallRecordUnavailable: EffectNotStarted,
	CodeCallRecordCorrupt:     EffectNotStarted,
	CodeNotPermitted:          EffectNotStarted,
	CodeToolNotFound:          EffectNotStarted,
	CodeArgsInvalid:           EffectNotStarted,
	CodeArgsTooLarge:          EffectNotStarted,
	CodeValidationBusy:        EffectNotStarted,
	CodeContextNil:            EffectNotStarted,
	CodeCircuitOpen:           EffectNotStarted,
	CodeCircuitHalfOpen:       EffectNotStarted,
	CodeRateLimited:           EffectNotStarted,
	CodeBulkheadFull:          EffectNotStarted,
	CodeRunCallLimit:          EffectNotStarted,
	CodeRunCallsCorrupt:       EffectNotStarted,
	CodeApprovalPending:       EffectNotStarted,
	CodeApprovalExpired:       EffectNotStarted,
	CodeApprovalDenied:        EffectNotStarted,
	CodeApprovalReplayed:      EffectNotStarted,
	CodeApprovalStoreCorrupt:  EffectNotStarted,
	CodeApprovalStoreFailed:   EffectNotStarted,
	CodeApprovalArgsChanged:   EffectNotStarted,
	CodeApprovalUnbound:       EffectNotStarted,
	CodeSpendLimit:            EffectNotStarted,
	CodeSpendCorrupt:          EffectNotStarted,
	CodeGuardrailArgs:         EffectNotStarted,
}

// codeKind is the kind each built-in code is made with ("" for any).
var codeKind = func() map[string]Kind {
	m := make(map[string]Kind, len(codes))
	for _, c := range codes {
		m[c.Code] = c.Kind
	}
	return m
}()

// causeEffects are the codes of errors a retry layer makes after the
// attempts it made: such an error has the effect of its cause, the last
// attempt's error, or none when it wraps nothing (no attempt was made).
var causeEffects = map[string]bool{
	CodeRetryBudgetExhausted: true,
	CodeRunAttemptsExhausted: true,
	CodeWaitPastDeadline:     true,
	CodeWaitTooLong:          true,
}

// notStartedKinds are the kinds that say the call never started the tool,
// for a code [EffectOf] has no rule for.
var notStartedKinds = map[Kind]bool{
	KindCircuitOpen:          true,
	KindRateLimited:          true,
	KindRetryBudgetExhausted: true,
	KindRunLimitExceeded:     true,
	KindNotPermitted:         true,
	KindArgsInvalid:          true,
	KindNotFound:             true,
	KindDefinitionInvalid:    true,
	KindDuplicateTool:        true,
	KindApprovalPending:      true,
	KindApprovalDenied:       true,
	KindBudgetExceeded:       true,
}

// EffectOf returns what a call that ended in err may have done (see
// [Effect]). nil — a success — is [EffectPossible]: the call ran. An
// untyped error, context.Canceled and context.DeadlineExceeded included,
// is EffectPossible. A typed error (the first in err's chain, see [From])
// is classified, in this order:
//
//  1. by its code, when it is a built-in code whose meaning decides (see
//     the constants): a timeout, a reset, an upstream error, a
//     cancellation, a panic, a result guardrail possibly ran, with any
//     kind; a code that says less — nothing landed, or nothing started —
//     counts only when the error has the kind the code is made with
//     ([Codes]), so a tool's own failure that borrows circuit_open's code
//     is classified as in 3;
//  2. the codes a retry layer makes after its attempts
//     (retry_budget_exhausted, run_attempts_exhausted,
//     retry_wait_past_deadline, retry_wait_too_long) have the effect of the
//     error they wrap, the last attempt's: a retry that stopped after a
//     timeout possibly ran; one that wraps nothing is as in 3;
//  3. any other code by its kind: tool-timeout, tool-cancelled,
//     tool-refused and tool-result-invalid possibly ran; the kinds that say
//     nothing ran (circuit-open, rate-limited, retry-budget-exhausted,
//     run-limit-exceeded, tool-not-permitted, tool-args-invalid,
//     tool-not-found, tool-definition-invalid, duplicate-tool,
//     approval-pending, approval-denied, budget-exceeded) did not start the
//     tool; any other kind (tool-failed, guardrail-blocked, a kind from
//     elsewhere) is EffectNone when the error is retryable — its maker
//     vouches that nothing landed — and wraps no context.Canceled, and
//     EffectPossible otherwise.
//
// EffectOf is one error's word: a layer outside a retry layer sees only
// the last attempt's error, and an earlier attempt may have timed out
// after acting; the layers that count executions (runlimit, spend) also
// look at how many attempts the call made. It is safe for concurrent use
// and does not allocate.
func EffectOf(err error) Effect {
	if err == nil {
		return EffectPossible
	}
	te, ok := From(err)
	if !ok {
		return EffectPossible
	}
	code := te.Code()
	if e, ok := codeEffects[code]; ok && (e == EffectPossible || te.Kind() == codeKind[code]) {
		// A code that says less than "possibly ran" counts only with the
		// kind it is made with: a failure a tool made with the code of a
		// refusal before the call (circuit_open, say) is the tool's own.
		if e == EffectNone && errors.Is(err, context.Canceled) {
			return EffectPossible
		}
		return e
	}
	if causeEffects[code] {
		if cause := te.Unwrap(); cause != nil {
			return EffectOf(cause)
		}
	}
	switch k := te.Kind(); {
	case k == KindTimeout, k == KindCancelled, k == KindRefused, k == KindResultInvalid:
		return EffectPossible
	case notStartedKinds[k]:
		return EffectNotStarted
	case te.Retryable() && !errors.Is(err, context.Canceled):
		return EffectNone
	}
	return EffectPossible
}

// NoEffect reports whether a call that ended in err is known to have had
// no effect: [EffectOf] says [EffectNone] or [EffectNotStarted]. A layer
// that admits a limited number of calls gives the slot of such a call
// back; every other call possibly ran and keeps it. NoEffect(nil) is
// false. It is safe for concurrent use and does not allocate.
func NoEffect(err error) bool { return EffectOf(err) != EffectPossible }
