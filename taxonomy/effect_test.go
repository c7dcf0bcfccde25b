package taxonomy_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/toolmw/toolmw/taxonomy"
)

// builtinEffects is what a call that ended in each built-in code may have
// done. Every code of taxonomy.Codes() must have a row: a new code fails
// TestEffectOfEveryCode until someone decides whether it possibly ran.
var builtinEffects = map[string]taxonomy.Effect{
	taxonomy.CodeInvalidCode:              "", // as made: by kind and retryability (see the kind rows)
	taxonomy.CodeUnmappedFailure:          taxonomy.EffectPossible,
	taxonomy.CodeToolPanicked:             taxonomy.EffectPossible,
	taxonomy.CodeToolExited:               taxonomy.EffectPossible,
	taxonomy.CodeSessionUnsupported:       taxonomy.EffectPossible,
	taxonomy.CodeResultPartInvalid:        taxonomy.EffectPossible,
	taxonomy.CodeTooManyAbandoned:         taxonomy.EffectNotStarted,
	taxonomy.CodeDuplicateInDoubt:         taxonomy.EffectNotStarted,
	taxonomy.CodeDuplicateDropped:         taxonomy.EffectNotStarted,
	taxonomy.CodeCallIDReused:             taxonomy.EffectNotStarted,
	taxonomy.CodeCallRecordUnavailable:    taxonomy.EffectNotStarted,
	taxonomy.CodeCallRecordCorrupt:        taxonomy.EffectNotStarted,
	taxonomy.CodeUpstreamUnavailable:      taxonomy.EffectNone, // transient as the map makes it; see retryability below
	taxonomy.CodeUpstreamError:            taxonomy.EffectPossible,
	taxonomy.CodeConnectionReset:          taxonomy.EffectPossible,
	taxonomy.CodeUpstreamBadRequest:       taxonomy.EffectPossible,
	taxonomy.CodeUpstreamTLS:              taxonomy.EffectPossible,
	taxonomy.CodeUpstreamNotFound:         taxonomy.EffectPossible,
	taxonomy.CodeUpstreamConflict:         taxonomy.EffectPossible,
	taxonomy.CodeUpstreamUnprocessable:    taxonomy.EffectPossible,
	taxonomy.CodeTimeout:                  taxonomy.EffectPossible,
	taxonomy.CodeDeadlineExceeded:         taxonomy.EffectPossible,
	taxonomy.CodeUpstreamTimeout:          taxonomy.EffectPossible,
	taxonomy.CodeCancelled:                taxonomy.EffectPossible,
	taxonomy.CodeNotPermitted:             taxonomy.EffectNotStarted,
	taxonomy.CodeUpstreamUnauthorized:     taxonomy.EffectNone,
	taxonomy.CodeUpstreamForbidden:        taxonomy.EffectNone,
	taxonomy.CodeToolNotFound:             taxonomy.EffectNotStarted,
	taxonomy.CodeArgsInvalid:              taxonomy.EffectNotStarted,
	taxonomy.CodeArgsTooLarge:             taxonomy.EffectNotStarted,
	taxonomy.CodeArgsTooCostly:            taxonomy.EffectNotStarted,
	taxonomy.CodeValidationBusy:           taxonomy.EffectNotStarted,
	taxonomy.CodeContextNil:               taxonomy.EffectNotStarted,
	taxonomy.CodeResultTooLarge:           taxonomy.EffectPossible,
	taxonomy.CodeResultNotUTF8:            taxonomy.EffectPossible,
	taxonomy.CodeResultNotJSON:            taxonomy.EffectPossible,
	taxonomy.CodeResultEncoding:           taxonomy.EffectPossible,
	taxonomy.CodeResultSchemaMismatch:     taxonomy.EffectPossible,
	taxonomy.CodeCircuitOpen:              taxonomy.EffectNotStarted,
	taxonomy.CodeCircuitHalfOpen:          taxonomy.EffectNotStarted,
	taxonomy.CodeRateLimited:              taxonomy.EffectNotStarted,
	taxonomy.CodeBulkheadFull:             taxonomy.EffectNotStarted,
	taxonomy.CodeUpstreamRateLimited:      taxonomy.EffectNone,
	taxonomy.CodeWaitPastDeadline:         "", // as its cause (see TestEffectOfRetryErrors)
	taxonomy.CodeWaitTooLong:              "",
	taxonomy.CodeRetryBudgetExhausted:     taxonomy.EffectNotStarted, // without a cause; else as its cause
	taxonomy.CodeRunAttemptsExhausted:     taxonomy.EffectNotStarted,
	taxonomy.CodeRunCallLimit:             taxonomy.EffectNotStarted,
	taxonomy.CodeRunCallsCorrupt:          taxonomy.EffectNotStarted,
	taxonomy.CodeApprovalPending:          taxonomy.EffectNotStarted,
	taxonomy.CodeApprovalExpired:          taxonomy.EffectNotStarted,
	taxonomy.CodeApprovalDenied:           taxonomy.EffectNotStarted,
	taxonomy.CodeApprovalReplayed:         taxonomy.EffectNotStarted,
	taxonomy.CodeApprovalStoreCorrupt:     taxonomy.EffectNotStarted,
	taxonomy.CodeApprovalStoreFailed:      taxonomy.EffectNotStarted,
	taxonomy.CodeApprovalArgsChanged:      taxonomy.EffectNotStarted,
	taxonomy.CodeApprovalUnbound:          taxonomy.EffectNotStarted,
	taxonomy.CodeSpendLimit:               taxonomy.EffectNotStarted,
	taxonomy.CodeSpendCorrupt:             taxonomy.EffectNotStarted,
	taxonomy.CodeGuardrailArgs:            taxonomy.EffectNotStarted,
	taxonomy.CodeGuardrailResult:          taxonomy.EffectPossible,
	taxonomy.CodeNameInvalid:              taxonomy.EffectNotStarted,
	taxonomy.CodeToolNil:                  taxonomy.EffectNotStarted,
	taxonomy.CodeMiddlewareNil:            taxonomy.EffectNotStarted,
	taxonomy.CodeOptionInvalid:            taxonomy.EffectNotStarted,
	taxonomy.CodeSchemaInvalid:            taxonomy.EffectNotStarted,
	taxonomy.CodeSchemaNotObject:          taxonomy.EffectNotStarted,
	taxonomy.CodeSchemaTypeMismatch:       taxonomy.EffectNotStarted,
	taxonomy.CodeSchemaTagInvalid:         taxonomy.EffectNotStarted,
	taxonomy.CodeSchemaRefUnsupported:     taxonomy.EffectNotStarted,
	taxonomy.CodeSchemaKeywordUnsupported: taxonomy.EffectNotStarted,
	taxonomy.CodeSchemaFormatUnsupported:  taxonomy.EffectNotStarted,
	taxonomy.CodeSchemaNotStrict:          taxonomy.EffectNotStarted,
	taxonomy.CodeSchemaTooComplex:         taxonomy.EffectNotStarted,
	taxonomy.CodeSchemaTooCostly:          taxonomy.EffectNotStarted,
	taxonomy.CodeSchemaNameUnsupported:    taxonomy.EffectNotStarted,
	taxonomy.CodeDuplicateTool:            taxonomy.EffectNotStarted,
}

// TestEffectOfEveryCode: every built-in code, made with its kind and with
// each retryability its catalogue entry allows, is classified as its row
// in builtinEffects says, and every code has a row. An in-doubt code stays
// possibly-ran however retryable its maker made it; a code that says
// nothing started stays so.
func TestEffectOfEveryCode(t *testing.T) {
	for _, c := range taxonomy.Codes() {
		want, ok := builtinEffects[c.Code]
		if !ok {
			t.Errorf("code %s has no effect row: decide whether a call that ended in it possibly ran", c.Code)
			continue
		}
		if want == "" {
			continue // classified as its kind or its cause: the rows below
		}
		kind := c.Kind
		if kind == "" {
			kind = taxonomy.KindFailed
		}
		var retryables []bool
		switch c.Retryable {
		case "yes":
			retryables = []bool{true}
		case "no":
			retryables = []bool{false}
		default: // "if idempotent", "as made"
			retryables = []bool{false, true}
		}
		for _, r := range retryables {
			err := taxonomy.New(kind, c.Code, "m").WithRetryable(r)
			if got := taxonomy.EffectOf(err); got != want {
				t.Errorf("EffectOf(%s/%s, retryable %t) = %s, want %s", kind, c.Code, r, got, want)
			}
			if got := taxonomy.EffectOf(fmt.Errorf("wrapped: %w", err)); got != want {
				t.Errorf("EffectOf(wrapped %s) = %s, want %s", c.Code, got, want)
			}
			if taxonomy.NoEffect(err) != (want != taxonomy.EffectPossible) {
				t.Errorf("NoEffect(%s) = %t, EffectOf %s", c.Code, taxonomy.NoEffect(err), want)
			}
		}
	}
	for code := range builtinEffects {
		found := false
		for _, c := range taxonomy.Codes() {
			found = found || c.Code == code
		}
		if !found {
			t.Errorf("row for %s, which is not a built-in code", code)
		}
	}
}

// TestEffectOfByKind: a code of a tool author's is classified by its kind
// and retryability; untyped errors, nil and cancellations possibly ran.
func TestEffectOfByKind(t *testing.T) {
	transient := taxonomy.Transient("supplier_busy", "busy")
	cases := []struct {
		name string
		err  error
		want taxonomy.Effect
	}{
		{"success", nil, taxonomy.EffectPossible},
		{"untyped", errors.New("boom"), taxonomy.EffectPossible},
		{"cancelled", context.Canceled, taxonomy.EffectPossible},
		{"deadline", context.DeadlineExceeded, taxonomy.EffectPossible},
		{"transient", transient, taxonomy.EffectNone},
		{"transient, final", transient.WithFinal(), taxonomy.EffectNone},
		{"transient wrapping a cancel", transient.WithCause(context.Canceled), taxonomy.EffectPossible},
		{"permanent", taxonomy.Failure("ledger_rejected", "no"), taxonomy.EffectPossible},
		{"refusal", taxonomy.Refusal("booking_not_cancellable", "no"), taxonomy.EffectPossible},
		{"timeout, retryable", taxonomy.Timeout("supplier_slow", "slow", true), taxonomy.EffectPossible},
		{"own timeout code", taxonomy.Timeout(taxonomy.CodeTimeout, "slow", true), taxonomy.EffectPossible},
		{"result invalid, retryable", taxonomy.ResultInvalid("odd_result", "odd").WithRetryable(true), taxonomy.EffectPossible},
		{"own rate limit", taxonomy.New(taxonomy.KindRateLimited, "supplier_throttled", "slow down"), taxonomy.EffectNotStarted},
		{"own permission", taxonomy.NotPermitted("policy_denied", "no"), taxonomy.EffectNotStarted},
		{"invalid code, transient", taxonomy.Transient("Not A Code", "m"), taxonomy.EffectNone},
		{"invalid code, permanent", taxonomy.Failure("Not A Code", "m"), taxonomy.EffectPossible},
		// A built-in code that says "nothing started" counts only with its
		// own kind: the tool's own failure with it may have acted.
		{"a failure with circuit_open's code", taxonomy.Failure(taxonomy.CodeCircuitOpen, "m"), taxonomy.EffectPossible},
		{"a transient with circuit_open's code", taxonomy.Transient(taxonomy.CodeCircuitOpen, "m"), taxonomy.EffectNone},
		{"a refusal with not_permitted's code", taxonomy.Refusal(taxonomy.CodeNotPermitted, "m"), taxonomy.EffectPossible},
		// An in-doubt code is in doubt with any kind.
		{"a transient reset", taxonomy.Transient(taxonomy.CodeConnectionReset, "m"), taxonomy.EffectPossible},
		{"joined, outermost first", errors.Join(transient, context.Canceled), taxonomy.EffectPossible},
	}
	for _, c := range cases {
		if got := taxonomy.EffectOf(c.err); got != c.want {
			t.Errorf("%s: EffectOf = %s, want %s", c.name, got, c.want)
		}
	}
}

// TestEffectOfRetryErrors: an error the retry layer made after its
// attempts is as its cause, the last attempt's error: a retry that
// stopped after a timeout possibly ran; one refused before any attempt
// did not start the tool.
func TestEffectOfRetryErrors(t *testing.T) {
	timeout := taxonomy.Timeout(taxonomy.CodeTimeout, "slow", true)
	transient := taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down")
	for _, code := range []string{taxonomy.CodeRetryBudgetExhausted, taxonomy.CodeRunAttemptsExhausted,
		taxonomy.CodeWaitPastDeadline, taxonomy.CodeWaitTooLong} {
		kind := taxonomy.KindRetryBudgetExhausted
		if code == taxonomy.CodeRunAttemptsExhausted {
			kind = taxonomy.KindRunLimitExceeded
		}
		stopped := func(cause error) error {
			k := kind
			if code == taxonomy.CodeWaitPastDeadline || code == taxonomy.CodeWaitTooLong {
				k = taxonomy.InfoOf(cause).Kind
			}
			return taxonomy.New(k, code, "stopped").WithCause(cause).WithRetryable(false)
		}
		if got := taxonomy.EffectOf(stopped(timeout)); got != taxonomy.EffectPossible {
			t.Errorf("%s after a timeout: %s, want possible", code, got)
		}
		if got := taxonomy.EffectOf(stopped(errors.New("untyped"))); got != taxonomy.EffectPossible {
			t.Errorf("%s after an untyped error: %s, want possible", code, got)
		}
		if got := taxonomy.EffectOf(stopped(transient)); got != taxonomy.EffectNone {
			t.Errorf("%s after a transient failure: %s, want none", code, got)
		}
	}
	for _, err := range []error{
		taxonomy.New(taxonomy.KindRetryBudgetExhausted, taxonomy.CodeRetryBudgetExhausted, "empty"),
		taxonomy.New(taxonomy.KindRunLimitExceeded, taxonomy.CodeRunAttemptsExhausted, "used up"),
	} {
		if got := taxonomy.EffectOf(err); got != taxonomy.EffectNotStarted {
			t.Errorf("%v without a cause: %s, want not_started", err, got)
		}
	}
}

// BenchmarkEffectOf: the classification allocates nothing.
func BenchmarkEffectOf(b *testing.B) {
	err := fmt.Errorf("w: %w", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down"))
	b.ReportAllocs()
	for b.Loop() {
		_ = taxonomy.EffectOf(err)
	}
}
