package taxonomy

// The built-in codes. Each is made by toolmw itself (a layer, the mapper's
// default map, the root package); tool authors pick their own codes.
// Removing a code or changing what it means is a breaking change: the golden
// file testdata/codes.golden pins them.
const (
	// CodeInvalidCode replaces an empty or malformed code given to a
	// constructor; the kind and retryability are kept.
	CodeInvalidCode = "invalid_code"

	// CodeUnmappedFailure: a foreign error no rule matched; permanent unless
	// the tool is idempotent.
	CodeUnmappedFailure = "unmapped_failure"
	// CodeToolPanicked: the tool panicked; permanent.
	CodeToolPanicked = "tool_panicked"
	// CodeToolExited: the tool called runtime.Goexit; permanent.
	CodeToolExited = "tool_exited"
	// CodeSessionUnsupported: the tool asked the client something (a
	// question to the user, a sampling completion) that the transport
	// carrying the call cannot ask; permanent.
	CodeSessionUnsupported = "session_unsupported"
	// CodeResultPartInvalid: a part of the result is of no known kind, or
	// its MIME type is not allowed.
	CodeResultPartInvalid = "result_part_invalid"
	// CodeTooManyAbandoned: the tool already has as many abandoned
	// (timed-out, still running) executions as the timeout layer allows, so
	// the call was not started; transient.
	CodeTooManyAbandoned = "too_many_abandoned"
	// CodeDuplicateInDoubt: the call repeats one already made in this run
	// (same call id, or same arguments for a tool deduplicated by them),
	// whose outcome is unknown (it timed out, its caller's deadline passed,
	// or it was cancelled while the tool ran, so it may have had its
	// effect); the tool is not run again; permanent.
	CodeDuplicateInDoubt = "duplicate_in_doubt"
	// CodeDuplicateDropped: the call repeats one already made in this run,
	// whose result the dedupe layer no longer holds (its per-run memory
	// bound); the tool is not run again; permanent.
	CodeDuplicateDropped = "duplicate_result_dropped"
	// CodeCallIDReused: the call carries a call id already used in this
	// run for a call of the same tool with other arguments (the dedupe
	// layer compares their canonical JSON); it is not a repeat of that
	// call, and nothing ran. Make the call under a new call id.
	CodeCallIDReused = "call_id_reused"
	// CodeCallRecordUnavailable: the dedupe layer's shared store of call
	// records failed or did not answer in time, so the call could not be
	// claimed; a call that is not idempotent fails closed rather than risk
	// running twice. Nothing ran; transient.
	CodeCallRecordUnavailable = "call_record_unavailable"
	// CodeCallRecordCorrupt: the call's record in the dedupe layer's
	// shared store does not parse; the call may have run before, so the
	// tool is not run; permanent.
	CodeCallRecordCorrupt = "call_record_corrupt"
	// CodeUpstreamUnavailable: the dependency could not be reached or said it
	// did not process the request; transient.
	CodeUpstreamUnavailable = "upstream_unavailable"
	// CodeUpstreamError: the dependency failed while handling the request; it
	// may have acted, so transient only for an idempotent tool.
	CodeUpstreamError = "upstream_error"
	// CodeConnectionReset: the connection broke after the request may have
	// gone out; transient only for an idempotent tool.
	CodeConnectionReset = "connection_reset"
	// CodeUpstreamBadRequest: the dependency rejected the request as malformed
	// (HTTP 400 and other unclassified 4xx); permanent.
	CodeUpstreamBadRequest = "upstream_bad_request"

	// CodeUpstreamTLS: the secure connection could not be established (a
	// certificate or handshake failure); permanent.
	CodeUpstreamTLS = "upstream_tls_failed"

	// CodeUpstreamNotFound: the dependency has no such resource (HTTP 404); a refusal.
	CodeUpstreamNotFound = "upstream_not_found"
	// CodeUpstreamConflict: the request conflicts with the resource's state (HTTP 409); a refusal.
	CodeUpstreamConflict = "upstream_conflict"
	// CodeUpstreamUnprocessable: the dependency understood and rejected the
	// content (HTTP 422); a refusal.
	CodeUpstreamUnprocessable = "upstream_unprocessable"

	// CodeTimeout: the per-attempt timeout fired.
	CodeTimeout = "timeout"
	// CodeDeadlineExceeded: the caller's deadline passed.
	CodeDeadlineExceeded = "deadline_exceeded"
	// CodeUpstreamTimeout: the dependency or the network reported a timeout
	// (HTTP 408, 504, a net.Error timeout).
	CodeUpstreamTimeout = "upstream_timeout"

	// CodeCancelled: the caller cancelled the call.
	CodeCancelled = "cancelled"

	// CodeNotPermitted: a permission policy denied the call.
	CodeNotPermitted = "not_permitted"
	// CodeUpstreamUnauthorized: the dependency did not accept the credentials (HTTP 401).
	CodeUpstreamUnauthorized = "upstream_unauthorized"
	// CodeUpstreamForbidden: the dependency denied the request (HTTP 403).
	CodeUpstreamForbidden = "upstream_forbidden"

	// CodeToolNotFound: no tool has the requested name.
	CodeToolNotFound = "tool_not_found"

	// CodeArgsInvalid: the arguments failed strict decoding or the tool's
	// input schema; see the field errors.
	CodeArgsInvalid = "args_invalid"
	// CodeArgsTooLarge: the arguments exceed the size cap (1 MiB unless the
	// spec says otherwise); they were not read.
	CodeArgsTooLarge = "args_too_large"
	// CodeArgsTooCostly: validating the arguments against the tool's input
	// schema would take more than its step budget (schema.MaxValidationSteps
	// and schema.ValidationStepsPerByte); nothing ran.
	CodeArgsTooCostly = "args_too_costly"
	// CodeValidationBusy: the process already runs as many large
	// validations of arguments on goroutines of their own as it may
	// (schema.MaxConcurrentValidations), most of them for callers that
	// stopped waiting; the call was not validated and nothing ran;
	// transient.
	CodeValidationBusy = "validation_busy"
	// CodeContextNil: the tool was called with a nil context.
	CodeContextNil = "context_nil"

	// CodeResultTooLarge: the result exceeds the size cap.
	CodeResultTooLarge = "result_too_large"
	// CodeResultNotUTF8: the result is not valid UTF-8.
	CodeResultNotUTF8 = "result_not_utf8"
	// CodeResultNotJSON: the spec declares a JSON result and it is not valid JSON.
	CodeResultNotJSON = "result_not_json"
	// CodeResultEncoding: the tool's output could not be encoded as JSON.
	CodeResultEncoding = "result_encoding_failed"
	// CodeResultSchemaMismatch: the tool declares an output schema and its
	// result does not match it (no JSON document, or one the schema
	// refuses), or checking it would exceed its step budget.
	CodeResultSchemaMismatch = "result_schema_mismatch"

	// CodeCircuitOpen: the breaker is open; retry after the open period.
	CodeCircuitOpen = "circuit_open"
	// CodeCircuitHalfOpen: the breaker is half-open and its probes are taken.
	CodeCircuitHalfOpen = "circuit_half_open"

	// CodeRateLimited: a local rate limiter refused the call.
	CodeRateLimited = "rate_limited"
	// CodeBulkheadFull: the tool's concurrency limit (bulkhead) had no free
	// slot within the wait allowed, or its queue was full; nothing ran.
	CodeBulkheadFull = "bulkhead_full"
	// CodeUpstreamRateLimited: the dependency said too many requests (HTTP 429).
	CodeUpstreamRateLimited = "upstream_rate_limited"

	// CodeWaitPastDeadline: retrying stopped because the next wait would end
	// past the deadline. The error keeps the kind of the last failure (a
	// circuit-open stays circuit-open), is not retryable, and wraps it.
	CodeWaitPastDeadline = "retry_wait_past_deadline"
	// CodeWaitTooLong: retrying stopped because the dependency asked for a
	// wait longer than the cap on one wait; otherwise as CodeWaitPastDeadline.
	CodeWaitTooLong = "retry_wait_too_long"

	// CodeRetryBudgetExhausted: the retry token budget is empty.
	CodeRetryBudgetExhausted = "retry_budget_exhausted"
	// CodeRunAttemptsExhausted: the run's attempt cap for this tool is used up.
	CodeRunAttemptsExhausted = "run_attempts_exhausted"

	// CodeRunCallLimit: the tool may be called only so many times in one
	// run (once, or at most N calls; calls, not attempts) and the run has
	// used them; nothing ran.
	CodeRunCallLimit = "run_call_limit"
	// CodeRunCallsCorrupt: the run's call count in the shared store does
	// not parse (garbage, a negative or out-of-range number, a key of
	// another type), so the call fails closed; nothing ran.
	CodeRunCallsCorrupt = "run_calls_corrupt"

	// CodeApprovalPending: the call needs a person's approval and has none
	// yet; nothing ran. The error's ApprovalInfo names the request.
	CodeApprovalPending = "approval_pending"
	// CodeApprovalExpired: the approval given for the call expired before
	// it was used; nothing ran, and the call waits for a new decision.
	CodeApprovalExpired = "approval_expired"
	// CodeApprovalDenied: a reviewer denied the call; nothing ran; final.
	CodeApprovalDenied = "approval_denied"
	// CodeApprovalReplayed: the approval was already used by the one
	// execution it allows (another replica, or a replayed row); nothing
	// ran.
	CodeApprovalReplayed = "approval_replayed"
	// CodeApprovalStoreCorrupt: the stored decision is corrupt, forged (its
	// seal was made with another key) or belongs to another request; the
	// call fails closed and nothing ran.
	CodeApprovalStoreCorrupt = "approval_store_corrupt"
	// CodeApprovalStoreFailed: the approval store could not be reached or
	// failed; the call fails closed, nothing ran, and the same call may
	// succeed later.
	CodeApprovalStoreFailed = "approval_store_failed"
	// CodeApprovalArgsChanged: the call's id already has an approval
	// request, or a decision, for other arguments; nothing ran, and the
	// request stands as it was (a request is never replaced by other
	// arguments, so a denial is not forgotten and two callers sharing one
	// call id cannot displace each other's request). Make the call under
	// a new call id.
	CodeApprovalArgsChanged = "approval_args_changed"
	// CodeApprovalUnbound: the call needs approval but cannot be bound to
	// a run and a call: it has no run (budget.WithRun) and its Desk was not
	// told that calls without one may share the process's requests, or it
	// was not made through toolmw.Wrap; nothing ran.
	CodeApprovalUnbound = "approval_unbound"

	// CodeSpendLimit: the call's cost would take the run past its spend
	// limit; nothing ran. The error's SpendInfo says what is left.
	CodeSpendLimit = "spend_limit"
	// CodeSpendCorrupt: the run's spend in the shared store does not parse
	// (garbage, a negative or out-of-range amount, a key of another type),
	// so the call fails closed; nothing ran.
	CodeSpendCorrupt = "spend_store_corrupt"

	// CodeGuardrailArgs: a guardrail blocked the arguments; nothing ran.
	CodeGuardrailArgs = "guardrail_args"
	// CodeGuardrailResult: a guardrail blocked the result; the tool ran
	// and what it returned does not enter the run.
	CodeGuardrailResult = "guardrail_result"

	// CodeNameInvalid: a tool name does not match ^[a-zA-Z0-9_-]{1,64}$.
	CodeNameInvalid = "name_invalid"
	// CodeToolNil: a nil tool function.
	CodeToolNil = "tool_nil"
	// CodeMiddlewareNil: a nil middleware.
	CodeMiddlewareNil = "middleware_nil"
	// CodeOptionInvalid: a layer was configured with a value it cannot use.
	CodeOptionInvalid = "option_invalid"

	// CodeSchemaInvalid: the tool's input schema is not a valid JSON Schema
	// (2020-12), or cannot be compiled.
	CodeSchemaInvalid = "schema_invalid"
	// CodeSchemaNotObject: the tool's input schema does not describe a JSON
	// object, as tool arguments are.
	CodeSchemaNotObject = "schema_not_object"
	// CodeSchemaTypeMismatch: a spec's explicit input schema disagrees with
	// the Typed tool's input type (a property that is no field, a required
	// field that is not required).
	CodeSchemaTypeMismatch = "schema_type_mismatch"
	// CodeSchemaTagInvalid: a struct tag of a Typed tool's input type cannot
	// be used (an enum value that does not fit its field).
	CodeSchemaTagInvalid = "schema_tag_invalid"
	// CodeSchemaRefUnsupported: the schema uses $ref or $defs and the
	// profile's API accepts no references (Gemini).
	CodeSchemaRefUnsupported = "schema_ref_unsupported"
	// CodeSchemaKeywordUnsupported: the schema uses a keyword (or a type
	// list) the profile's API does not accept.
	CodeSchemaKeywordUnsupported = "schema_keyword_unsupported"
	// CodeSchemaFormatUnsupported: the schema uses a string format the
	// profile's API does not accept.
	CodeSchemaFormatUnsupported = "schema_format_unsupported"
	// CodeSchemaNotStrict: the schema breaks a rule of OpenAI's strict mode
	// (an object open to other members, a property not listed as
	// required, a value of any type).
	CodeSchemaNotStrict = "schema_not_strict"
	// CodeSchemaTooComplex: the schema exceeds a size limit of the
	// profile's API (nesting depth, number of properties or enum values).
	CodeSchemaTooComplex = "schema_too_complex"
	// CodeSchemaTooCostly: the input schema is past one of toolmw's own
	// bounds on the work a schema may cause (size, nesting, nodes, regular
	// expressions, numbers, or how many schemas one value is checked
	// against at one place); it is refused before it is compiled.
	CodeSchemaTooCostly = "schema_too_costly"
	// CodeSchemaNameUnsupported: a parameter (property) name the profile's
	// API does not accept (Gemini: a letter or underscore first, then
	// letters, digits and underscores, at most 64).
	CodeSchemaNameUnsupported = "schema_name_unsupported"

	// CodeDuplicateTool: a tool of that name is already registered.
	CodeDuplicateTool = "duplicate_tool"
)

// CodeInfo describes a built-in code.
type CodeInfo struct {
	Kind      Kind   // the kind the code is made with; "" when any kind may carry it
	Code      string // the code
	Retryable string // "yes", "no", or "if idempotent"
	Meaning   string // one line: what it means
	RaisedBy  string // which part of toolmw makes it
}

var codes = []CodeInfo{
	{"", CodeInvalidCode, "as made", "the maker gave an empty or malformed code", "taxonomy constructors"},
	{KindFailed, CodeUnmappedFailure, "if idempotent", "a foreign error no mapper rule matched", "mapper (classify layer), InfoOf"},
	{KindFailed, CodeToolPanicked, "no", "the tool panicked", "recovery layer"},
	{KindFailed, CodeToolExited, "no", "the tool called runtime.Goexit", "recovery layer"},
	{KindFailed, CodeSessionUnsupported, "no", "the tool asked the client something the transport carrying the call cannot ask (a question to the user, a sampling completion)", "toolmw.Elicit, toolmw.Sample"},
	{KindResultInvalid, CodeResultPartInvalid, "no", "a part of the result is of no known kind, or of a MIME type the result layer does not allow", "result layer"},
	{KindFailed, CodeTooManyAbandoned, "yes", "too many abandoned executions of the tool are still running; the call was not started", "timeout layer (WithAbandon)"},
	{KindFailed, CodeDuplicateInDoubt, "no", "the call repeats one already made in this run whose outcome is unknown; the tool was not run again", "dedupe layer"},
	{KindFailed, CodeDuplicateDropped, "no", "the call repeats one already made in this run whose result is no longer held; the tool was not run again", "dedupe layer"},
	{KindFailed, CodeCallRecordUnavailable, "yes", "the shared store of call records could not be asked; the call was not claimed and did not run", "dedupe layer (WithStore)"},
	{KindFailed, CodeCallRecordCorrupt, "no", "the call's record in the shared store does not parse; the call may have run before, and the tool was not run", "dedupe layer (WithStore)"},
	{KindNotPermitted, CodeCallIDReused, "no", "the call id was already used in this run for a call of this tool with other arguments; nothing ran", "dedupe layer"},
	{KindFailed, CodeUpstreamUnavailable, "yes", "the dependency could not be reached or did not process the request", "mapper default map"},
	{KindFailed, CodeUpstreamError, "if idempotent", "the dependency failed while handling the request and may have acted", "mapper default map"},
	{KindFailed, CodeConnectionReset, "if idempotent", "the connection broke after the request may have gone out", "mapper default map"},
	{KindFailed, CodeUpstreamBadRequest, "no", "the dependency rejected the request as malformed", "mapper default map"},
	{KindFailed, CodeUpstreamTLS, "no", "the secure connection could not be established (certificate or handshake)", "mapper default map"},
	{KindRefused, CodeUpstreamNotFound, "no", "the dependency has no such resource (HTTP 404)", "mapper default map"},
	{KindRefused, CodeUpstreamConflict, "no", "the request conflicts with the resource's state (HTTP 409)", "mapper default map"},
	{KindRefused, CodeUpstreamUnprocessable, "no", "the dependency rejected the content (HTTP 422)", "mapper default map"},
	{KindTimeout, CodeTimeout, "if idempotent", "the per-attempt timeout fired", "timeout layer"},
	{KindTimeout, CodeDeadlineExceeded, "no", "the caller's deadline passed", "timeout layer, mapper, InfoOf"},
	{KindTimeout, CodeUpstreamTimeout, "if idempotent; yes for HTTP 408", "the dependency or the network reported a timeout", "mapper default map"},
	{KindCancelled, CodeCancelled, "no", "the caller cancelled the call", "InfoOf (cancellation itself passes through unchanged)"},
	{KindNotPermitted, CodeNotPermitted, "no", "a permission policy denied the call", "permit layer"},
	{KindNotPermitted, CodeUpstreamUnauthorized, "no", "the dependency did not accept the credentials (HTTP 401)", "mapper default map"},
	{KindNotPermitted, CodeUpstreamForbidden, "no", "the dependency denied the request (HTTP 403)", "mapper default map"},
	{KindNotFound, CodeToolNotFound, "no", "no tool has the requested name", "Toolbox.Call"},
	{KindArgsInvalid, CodeArgsInvalid, "no", "the arguments failed strict decoding or the tool's input schema", "Typed, Wrap (input schema)"},
	{KindArgsInvalid, CodeArgsTooLarge, "no", "the arguments exceed the size cap; they were not read", "Typed, Wrap"},
	{KindArgsInvalid, CodeArgsTooCostly, "no", "validating the arguments against the input schema would exceed its step budget; nothing ran", "Wrap (input schema), schema"},
	{KindRateLimited, CodeValidationBusy, "yes", "the process runs as many large validations of arguments as it may; nothing ran", "Wrap (input schema), schema"},
	{KindFailed, CodeContextNil, "no", "the tool was called with a nil context", "Typed, Wrap"},
	{KindResultInvalid, CodeResultTooLarge, "no", "the result exceeds the size cap", "result layer"},
	{KindResultInvalid, CodeResultNotUTF8, "no", "the result is not valid UTF-8", "result layer"},
	{KindResultInvalid, CodeResultNotJSON, "no", "the spec declares a JSON result and it is not valid JSON", "result layer, Typed"},
	{KindResultInvalid, CodeResultEncoding, "no", "the tool's output could not be encoded as JSON", "Typed, JSON"},
	{KindResultInvalid, CodeResultSchemaMismatch, "no", "the result does not match the tool's output schema, or checking it would exceed its step budget", "result layer"},
	{KindCircuitOpen, CodeCircuitOpen, "yes", "the breaker is open; retry after the open period", "breaker layer"},
	{KindCircuitOpen, CodeCircuitHalfOpen, "yes", "the breaker is half-open and its probes are taken", "breaker layer"},
	{KindRateLimited, CodeRateLimited, "yes", "a local rate limiter refused the call", "ratelimit layer"},
	{KindRateLimited, CodeBulkheadFull, "yes", "the tool's concurrency limit had no free slot in time, or its queue was full; nothing ran", "bulkhead layer"},
	{KindRateLimited, CodeUpstreamRateLimited, "yes", "the dependency said too many requests (HTTP 429)", "mapper default map"},
	{"", CodeWaitPastDeadline, "no", "retrying stopped: the next wait would end past the deadline (kind of the last failure)", "retry layer"},
	{"", CodeWaitTooLong, "no", "retrying stopped: the dependency asked for a wait longer than the cap (kind of the last failure)", "retry layer"},
	{KindRetryBudgetExhausted, CodeRetryBudgetExhausted, "no", "the retry token budget is empty", "retry layer"},
	{KindRunLimitExceeded, CodeRunAttemptsExhausted, "no", "the run's attempt cap for this tool is used up", "retry layer"},
	{KindRunLimitExceeded, CodeRunCallLimit, "no", "the run has made as many calls of this tool as it may; nothing ran", "runlimit layer"},
	{KindRunLimitExceeded, CodeRunCallsCorrupt, "no", "the run's call count in the shared store does not parse; fails closed, nothing ran", "runlimit layer"},
	{KindApprovalPending, CodeApprovalPending, "no", "the call needs a person's approval and has none yet; nothing ran", "approval layer"},
	{KindApprovalPending, CodeApprovalExpired, "no", "the approval expired before it was used; nothing ran; the call waits for a new decision", "approval layer"},
	{KindApprovalDenied, CodeApprovalDenied, "no", "a reviewer denied the call; nothing ran", "approval layer"},
	{KindNotPermitted, CodeApprovalReplayed, "no", "the approval was already used by the one execution it allows; nothing ran", "approval layer"},
	{KindNotPermitted, CodeApprovalStoreCorrupt, "no", "the stored decision is corrupt, forged or belongs to another request; fails closed, nothing ran", "approval layer"},
	{KindFailed, CodeApprovalStoreFailed, "yes", "the approval store failed or could not be reached; fails closed, nothing ran", "approval layer"},
	{KindNotPermitted, CodeApprovalArgsChanged, "no", "the call's id already has an approval request or decision for other arguments; nothing ran; the request stands", "approval layer"},
	{KindNotPermitted, CodeApprovalUnbound, "no", "the call needs approval but has no run (or no call record) to bind it to, and no-run calls were not allowed; nothing ran", "approval layer"},
	{KindBudgetExceeded, CodeSpendLimit, "no", "the call's cost would take the run past its spend limit; nothing ran", "spend layer"},
	{KindBudgetExceeded, CodeSpendCorrupt, "no", "the run's spend in the shared store does not parse; fails closed, nothing ran", "spend layer"},
	{KindGuardrailBlocked, CodeGuardrailArgs, "no", "a guardrail blocked the arguments; nothing ran", "guardrail layer"},
	{KindGuardrailBlocked, CodeGuardrailResult, "no", "a guardrail blocked the result; the tool ran", "guardrail layer"},
	{KindDefinitionInvalid, CodeNameInvalid, "no", "a tool name does not match ^[a-zA-Z0-9_-]{1,64}$", "Wrap, Toolbox.Register"},
	{KindDefinitionInvalid, CodeToolNil, "no", "a nil tool function", "Wrap, Toolbox.Register"},
	{KindDefinitionInvalid, CodeMiddlewareNil, "no", "a nil middleware", "Wrap, Toolbox.Register"},
	{KindDefinitionInvalid, CodeOptionInvalid, "no", "a layer was configured with a value it cannot use", "layer constructors"},
	{KindDefinitionInvalid, CodeSchemaInvalid, "no", "the input schema is not a valid JSON Schema (2020-12)", "Wrap, schema"},
	{KindDefinitionInvalid, CodeSchemaNotObject, "no", "the input schema does not describe a JSON object", "Wrap, schema"},
	{KindDefinitionInvalid, CodeSchemaTypeMismatch, "no", "an explicit input schema disagrees with the Typed tool's input type", "Wrap"},
	{KindDefinitionInvalid, CodeSchemaTagInvalid, "no", "a struct tag of a Typed tool's input type cannot be used", "Wrap, schema"},
	{KindDefinitionInvalid, CodeSchemaRefUnsupported, "no", "the schema uses $ref or $defs and the profile's API accepts no references", "Wrap, Toolbox.Definitions, schema"},
	{KindDefinitionInvalid, CodeSchemaKeywordUnsupported, "no", "the schema uses a keyword or a type list the profile's API does not accept", "Wrap, Toolbox.Definitions, schema"},
	{KindDefinitionInvalid, CodeSchemaFormatUnsupported, "no", "the schema uses a string format the profile's API does not accept", "Wrap, Toolbox.Definitions, schema"},
	{KindDefinitionInvalid, CodeSchemaNotStrict, "no", "the schema breaks a rule of OpenAI's strict mode", "Wrap, Toolbox.Definitions, schema"},
	{KindDefinitionInvalid, CodeSchemaTooComplex, "no", "the schema exceeds a size limit of the profile's API", "Wrap, Toolbox.Definitions, schema"},
	{KindDefinitionInvalid, CodeSchemaTooCostly, "no", "the input schema is past a bound on the work a schema may cause; refused before compiling", "Wrap, Toolbox.Definitions, schema"},
	{KindDefinitionInvalid, CodeSchemaNameUnsupported, "no", "the schema has a parameter name the profile's API does not accept", "Wrap, Toolbox.Definitions, schema"},
	{KindDuplicateTool, CodeDuplicateTool, "no", "a tool of that name is already registered", "Toolbox.Register"},
}

// Codes returns every built-in code with its kind and meaning, in a stable
// order. The returned slice is a copy.
func Codes() []CodeInfo {
	return append([]CodeInfo(nil), codes...)
}
