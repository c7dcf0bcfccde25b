// Package mapper translates foreign errors into the typed errors of package
// taxonomy, declaratively.
//
// Tools return their libraries' errors: a *net.OpError, a *url.Error, an SDK
// error with a status code. A hand-written switch over them eventually calls
// a bug retryable; a [Map] of rules does not guess. What no rule matches
// becomes a tool-failed/unmapped_failure: permanent, or retryable when
// the caller says the tool is idempotent (ClassifyFor), which is the retry
// rule for an error nobody classified.
//
//	m := mapper.Default().With(
//		mapper.Is(supplier.ErrSoldOut, mapper.Refusal("fare_sold_out", "the fare is sold out")),
//		mapper.TypeFunc(func(e *supplier.Error) (mapper.Verdict, bool) {
//			return mapper.Transient("supplier_busy"), e.Busy
//		}),
//	)
//	err = m.ClassifyFor("book_flight", false, err)
//
// # Rules
//
//   - [Is]: a sentinel, matched as errors.Is does at one link.
//   - [Type], [TypeFunc]: a concrete type such as *net.OpError, matched as
//     errors.As does at one link (an As method counts); TypeFunc looks at the
//     value and may decline.
//   - [Interface], [InterfaceFunc]: a family sharing an interface, such as
//     net.Error or interface{ Timeout() bool }.
//   - [Status], [StatusRange]: an HTTP status, read from a link with a method
//     StatusCode() int, HTTPStatusCode() int or HTTPResponse() *http.Response,
//     or an exported field Response *http.Response (as go-github's errors
//     have). The first of these shapes a link has is the one read.
//   - [GRPCCode]: a gRPC status code, read from a link with a method
//     GRPCStatus() S where S has a method Code() C and C is an unsigned
//     integer type, as grpc's status errors have. The package does not
//     import grpc; it calls the two methods by reflection, only for the
//     links it reaches at the status step.
//
// Each rule gives a [Verdict]: [Transient], [TransientIfIdempotent],
// [Permanent], [Refusal], [Timeout], [NotPermitted], [RateLimited], or any
// kind with [NewVerdict]. [Map.Classify] does not know whether the tool is
// idempotent and assumes it is not; [Map.ClassifyFor] is told, and the
// classify middleware tells it from the tool's Spec.
//
// # Precedence
//
// [Map.ClassifyFor] and [Map.ClassifyContext] decide in this order:
//
//  1. nil stays nil.
//  2. An error with a typed error (taxonomy.From) anywhere in its chain is
//     returned untouched: the author's word stands. So is a cancellation
//     (errors.Is(err, context.Canceled)): a run being torn down is not a
//     fault to classify. With ClassifyContext, when the call's own deadline
//     has passed, a timeout of any sort in the chain is the caller's:
//     tool-timeout/deadline_exceeded, never retried, whatever the rules say.
//  3. The chain is walked outermost first, depth first through errors.Join,
//     as errors.Is walks it. At each link the sentinel and concrete type
//     rules are tried, then the interface rules; the first match decides.
//  4. Only when no rule of step 3 matched at any link is the chain walked
//     again for an HTTP status or a gRPC code, outermost first; the first
//     status a rule covers decides.
//  5. A deadline error no rule claimed (errors.Is(err,
//     context.DeadlineExceeded)) depends on whose deadline it was: with
//     ClassifyContext and the call's context still running, a dependency's
//     (Go's http.Client and Transport timeouts report themselves so, as
//     does a context the tool made for its own upstream call):
//     tool-timeout/upstream_timeout, retryable for an idempotent tool;
//     without a context (Classify, ClassifyFor), the caller's:
//     tool-timeout/deadline_exceeded, never retried.
//  6. Otherwise the error is unmapped: tool-failed/unmapped_failure,
//     permanent unless the tool is idempotent.
//
// Within a level, rules added later win: [Map.With] appends, so a user's
// rule overrides a default rule of the same level. It does not lift a status
// rule above a type rule: to override how the defaults treat a type, add a
// type rule.
//
// A worked example. A tool returns
//
//	err := fmt.Errorf("quote: %w", &APIError{Status: 503, Err: &net.OpError{Op: "read", Err: syscall.ECONNRESET}})
//
// where APIError has StatusCode() int and Unwrap. The default map walks
// four links: the fmt wrapper matches nothing; APIError matches no type or
// interface rule; the *net.OpError matches neither its type rule (which
// takes only Op "dial") nor the net.Error timeout rule (Timeout() is false);
// syscall.ECONNRESET matches a sentinel rule. The result is
// tool-failed/connection_reset, retryable only for an idempotent tool: the
// request may have landed. The 503 is never read, because a type rule
// matched; without the ECONNRESET link, step 4 would find the 503 and make
// tool-failed/upstream_unavailable. Adding Type[*APIError](…) to the map
// would decide at the second link, before the walk reaches the reset.
//
// # The result
//
// A translated error is a *taxonomy.ToolError wrapping the foreign error:
// errors.Is and errors.As still reach it in code, but its Error(), its
// taxonomy.InfoOf record and what toolmw.ForModel shows never hold the
// foreign text. Its message is the rule's own (scrubbed once when the map is
// built; a message built by a TypeFunc is scrubbed when made). [WithMessages]
// adds the foreign error's text, scrubbed with the map's scrubber
// ([WithScrubber], scrub.Default() by default).
//
// A retryable result takes its retry-after hint from the chain's first link
// that carries one: a RetryAfter() time.Duration method (positive), or a
// Retry-After header, from a Header() http.Header method or the
// *http.Response read as above. The header is a number of seconds or an
// HTTP-date, read against the map's clock ([WithClock]); a date in the past
// means 0, an empty, negative or malformed value is ignored, and a wait
// longer than taxonomy.MaxRetryAfter (24 h) saturates at it. Without one,
// the verdict's [Verdict.WithRetryAfter] default applies.
//
// # The default map
//
// [Default] holds [DefaultRules]:
//
//	foreign error                             kind / code                               retryable
//	the call's deadline passed (any timeout)  tool-timeout / deadline_exceeded          no
//	context.DeadlineExceeded, the call's      tool-timeout / upstream_timeout           if idempotent
//	  context still running (ClassifyContext)
//	context.DeadlineExceeded without context  tool-timeout / deadline_exceeded          no
//	os.ErrDeadlineExceeded                    tool-timeout / upstream_timeout           if idempotent
//	io.EOF, io.ErrUnexpectedEOF               tool-failed / connection_reset            if idempotent
//	syscall.ECONNRESET, EPIPE, ECONNABORTED   tool-failed / connection_reset            if idempotent
//	syscall.ECONNREFUSED, EHOSTUNREACH,       tool-failed / upstream_unavailable        yes
//	  ENETUNREACH
//	*net.DNSError                             tool-failed / upstream_unavailable        yes
//	*net.OpError with Op "dial", timed out    tool-timeout / upstream_timeout           yes
//	*net.OpError with Op "dial", otherwise    tool-failed / upstream_unavailable        yes
//	x509 and tls certificate, handshake       tool-failed / upstream_tls_failed         no
//	  and record errors
//	net.Error with Timeout() true             tool-timeout / upstream_timeout           if idempotent
//	  (a *url.Error is looked through; Go's
//	  http.Client and Transport timeouts)
//	HTTP 400 and 4xx not listed               tool-failed / upstream_bad_request        no
//	HTTP 401                                  tool-not-permitted / upstream_unauthorized no
//	HTTP 403                                  tool-not-permitted / upstream_forbidden   no
//	HTTP 404, 410                             tool-refused / upstream_not_found         no
//	HTTP 408                                  tool-timeout / upstream_timeout           yes
//	HTTP 409                                  tool-refused / upstream_conflict          no
//	HTTP 422                                  tool-refused / upstream_unprocessable     no
//	HTTP 425                                  tool-failed / upstream_unavailable        yes
//	HTTP 429                                  rate-limited / upstream_rate_limited      yes, with Retry-After
//	HTTP 500, 502 and 5xx not listed          tool-failed / upstream_error              if idempotent
//	HTTP 503                                  tool-failed / upstream_unavailable        yes, with Retry-After
//	HTTP 504                                  tool-timeout / upstream_timeout           if idempotent
//	gRPC Unknown, Internal, Aborted           tool-failed / upstream_error              if idempotent
//	gRPC InvalidArgument, OutOfRange,         tool-failed / upstream_bad_request        no
//	  Unimplemented
//	gRPC DeadlineExceeded                     tool-timeout / upstream_timeout           if idempotent
//	gRPC NotFound                             tool-refused / upstream_not_found         no
//	gRPC AlreadyExists, FailedPrecondition    tool-refused / upstream_conflict          no
//	gRPC PermissionDenied                     tool-not-permitted / upstream_forbidden   no
//	gRPC Unauthenticated                      tool-not-permitted / upstream_unauthorized no
//	gRPC ResourceExhausted                    rate-limited / upstream_rate_limited      yes
//	gRPC Unavailable                          tool-failed / upstream_unavailable        yes
//	anything else                             tool-failed / unmapped_failure            if idempotent
//
// The reasoning: an error raised before the request left (a refused or
// unroutable connection, a failed DNS lookup, a dial error) is transient,
// since nothing landed; a name that does not resolve is included, bounded by
// the retry budget, because resolvers do fail transiently. An error after the
// request may have gone out (a reset, an unexpected EOF, a timeout, a 500,
// 502 or 504) is retryable only for an idempotent tool. 408, 425, 429 and 503
// say the request was not processed, so they are transient. 404, 409, 410 and
// 422 are the dependency's answer, so they are refusals shown to the model.
// A deadline is the caller's when the call's context says so, and then
// nothing is retried; a timeout a dependency reported while the caller's
// time was still running is the dependency's, retried like any timeout. A
// dial that timed out sent nothing, so it is retried even for a tool that is
// not idempotent. TLS and certificate errors are permanent upstream_tls_failed:
// they do not heal on retry. A gRPC Canceled or DataLoss and statuses below
// 400 are left unmapped.
package mapper
