package taxonomy

// Kind is the stable category of a tool error, a kebab-case string. Kinds are
// public API: they appear in Info records, problem documents, spans, logs and
// events, and a consumer may branch on them.
type Kind string

// The built-in kinds.
const (
	// KindFailed: the tool tried and could not finish.
	KindFailed Kind = "tool-failed"
	// KindRefused: the tool worked and declined. An answer, never retried.
	KindRefused Kind = "tool-refused"
	// KindTimeout: the call outran its deadline.
	KindTimeout Kind = "tool-timeout"
	// KindCancelled: the caller cancelled the call. Never retried.
	KindCancelled Kind = "tool-cancelled"
	// KindNotPermitted: a permission decision denied the call.
	KindNotPermitted Kind = "tool-not-permitted"
	// KindNotFound: no tool has the requested name.
	KindNotFound Kind = "tool-not-found"
	// KindArgsInvalid: the arguments did not match the tool's input; nothing ran.
	KindArgsInvalid Kind = "tool-args-invalid"
	// KindResultInvalid: what came back may not enter the run.
	KindResultInvalid Kind = "tool-result-invalid"
	// KindCircuitOpen: the circuit breaker in front of the dependency is open.
	KindCircuitOpen Kind = "circuit-open"
	// KindRateLimited: a rate limit refused the call for now.
	KindRateLimited Kind = "rate-limited"
	// KindRetryBudgetExhausted: the shared retry budget has no token left.
	KindRetryBudgetExhausted Kind = "retry-budget-exhausted"
	// KindRunLimitExceeded: the run's cap on attempts or calls for this
	// tool is used up.
	KindRunLimitExceeded Kind = "run-limit-exceeded"
	// KindApprovalPending: the call waits for a person's decision; nothing
	// ran. The loop pauses the call and asks again once a reviewer has
	// decided ([ApprovalInfo] names the request). Never retried.
	KindApprovalPending Kind = "approval-pending"
	// KindApprovalDenied: a reviewer said no; nothing ran. An answer shown
	// to the model once, never retried; unlike tool-not-permitted (a
	// policy's decision) and tool-refused (the tool's own answer).
	KindApprovalDenied Kind = "approval-denied"
	// KindBudgetExceeded: the call would take the run past its spend limit;
	// nothing ran ([SpendInfo] says what is left).
	KindBudgetExceeded Kind = "budget-exceeded"
	// KindGuardrailBlocked: a guardrail blocked the arguments (before the
	// call) or the result (after it); the error names the guardrail, never
	// the content.
	KindGuardrailBlocked Kind = "guardrail-blocked"
	// KindDefinitionInvalid: a tool or its spec cannot be used (start-up).
	KindDefinitionInvalid Kind = "tool-definition-invalid"
	// KindDuplicateTool: a tool of that name is already registered (start-up).
	KindDuplicateTool Kind = "duplicate-tool"
)

// kinds lists every built-in kind with its meaning, default retryability, the
// problem title and the HTTP status used by Info.Problem.
var kinds = []KindInfo{
	{KindFailed, "the tool tried and could not finish", false, "Tool failed", 502},
	{KindRefused, "the tool worked and declined; an answer, not a fault", false, "Tool refused", 422},
	{KindTimeout, "the call outran its deadline", false, "Tool timed out", 504},
	{KindCancelled, "the caller cancelled the call", false, "Tool call cancelled", 499},
	{KindNotPermitted, "a permission decision denied the call", false, "Tool call not permitted", 403},
	{KindNotFound, "no tool has the requested name", false, "Tool not found", 404},
	{KindArgsInvalid, "the arguments did not match the tool's input; nothing ran", false, "Tool arguments invalid", 400},
	{KindResultInvalid, "what the tool returned may not enter the run", false, "Tool result invalid", 502},
	{KindCircuitOpen, "the circuit breaker in front of the dependency is open", true, "Circuit open", 503},
	{KindRateLimited, "a rate limit refused the call for now", true, "Rate limited", 429},
	{KindRetryBudgetExhausted, "the shared retry budget has no token left", false, "Retry budget exhausted", 503},
	{KindRunLimitExceeded, "the run's cap on attempts or calls for this tool is used up", false, "Run limit exceeded", 429},
	{KindDefinitionInvalid, "a tool or its spec cannot be used", false, "Tool definition invalid", 500},
	{KindDuplicateTool, "a tool of that name is already registered", false, "Duplicate tool", 500},
	// 202: the request is accepted and not yet acted on, which is exactly
	// what a pending approval is; 409 would say the caller did something
	// wrong.
	{KindApprovalPending, "the call waits for a person's decision; nothing ran", false, "Approval pending", 202},
	{KindApprovalDenied, "a reviewer denied the call; an answer, never retried", false, "Approval denied", 403},
	// 402: the run has no money left for the call; 429 would invite a
	// client to wait and try again.
	{KindBudgetExceeded, "the call would exceed the run's spend limit; nothing ran", false, "Budget exceeded", 402},
	{KindGuardrailBlocked, "a guardrail blocked the arguments or the result", false, "Guardrail blocked", 422},
}

// KindInfo describes a built-in kind.
type KindInfo struct {
	Kind      Kind   // the kind
	Meaning   string // one line: what it means
	Retryable bool   // whether an error of this kind is retryable unless its maker says otherwise
	Title     string // the RFC 9457 problem title
	Status    int    // the HTTP status of the problem document
}

// Kinds returns every built-in kind with its meaning, in a stable order.
// The returned slice is a copy.
func Kinds() []KindInfo {
	return append([]KindInfo(nil), kinds...)
}

// lookupKind returns the description of k, and whether k is built in.
func lookupKind(k Kind) (KindInfo, bool) {
	for _, ki := range kinds {
		if ki.Kind == k {
			return ki, true
		}
	}
	return KindInfo{}, false
}

// ValidKind reports whether k is a well-formed kind: lower-case words of
// letters and digits joined by single hyphens, at most 64 bytes. Built-in kinds
// are valid; so is any other well-formed kind a package defines.
func ValidKind(k Kind) bool {
	return validName(string(k), '-')
}

// ValidCode reports whether code is a well-formed code: lower-case words of
// letters and digits joined by single underscores, starting with a letter, at
// most 64 bytes (for example "booking_not_cancellable"). A code names a
// reason; it is not data, so no word may be longer than 24 bytes or hold more
// than 4 digits: a token or an identifier that happens to be lower-case
// (a hex digest, sk_live_… in lower case) is not a code.
func ValidCode(code string) bool {
	if !validName(code, '_') {
		return false
	}
	word, digits := 0, 0
	for i := 0; i < len(code); i++ {
		switch c := code[i]; {
		case c == '_':
			word, digits = 0, 0
		case c >= '0' && c <= '9':
			word, digits = word+1, digits+1
		default:
			word++
		}
		if word > maxCodeWord || digits > maxCodeDigits {
			return false
		}
	}
	return true
}

// The bounds of one word of a code: longer words, or more digits, read as
// data rather than a reason.
const (
	maxCodeWord   = 24
	maxCodeDigits = 4
)

func validName(s string, sep byte) bool {
	if len(s) == 0 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' || s[len(s)-1] == sep {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == sep && s[i-1] != sep:
		default:
			return false
		}
	}
	return true
}
