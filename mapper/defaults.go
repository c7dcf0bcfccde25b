package mapper

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"

	"github.com/toolmw/toolmw/taxonomy"
)

// The messages of the default rules: fixed sentences, never the foreign
// error's text.
const (
	msgDeadline      = "the call's deadline passed"
	msgConnTimeout   = "the upstream service could not be reached in time"
	msgTimeout       = "the upstream service did not answer in time"
	msgUnreachable   = "the upstream service could not be reached"
	msgReset         = "the connection to the upstream service broke"
	msgBadRequest    = "the upstream service rejected the request"
	msgUnauthorized  = "the upstream service did not accept the credentials"
	msgForbidden     = "the upstream service denied the request"
	msgNotFound      = "the upstream service has no such resource"
	msgConflict      = "the request conflicts with the resource's current state"
	msgUnprocessable = "the upstream service rejected the content of the request"
	msgTooEarly      = "the upstream service did not process the request yet"
	msgRateLimited   = "the upstream service is limiting the rate of requests"
	msgUpstreamError = "the upstream service failed while handling the request"
	msgUnavailable   = "the upstream service is unavailable"
	msgTLS           = "the secure connection to the upstream service could not be established"
)

// gRPC status codes (google.golang.org/grpc/codes), named here to keep
// grpc out of the imports.
const (
	grpcUnknown            uint32 = 2
	grpcInvalidArgument    uint32 = 3
	grpcDeadlineExceeded   uint32 = 4
	grpcNotFound           uint32 = 5
	grpcAlreadyExists      uint32 = 6
	grpcPermissionDenied   uint32 = 7
	grpcResourceExhausted  uint32 = 8
	grpcFailedPrecondition uint32 = 9
	grpcAborted            uint32 = 10
	grpcOutOfRange         uint32 = 11
	grpcUnimplemented      uint32 = 12
	grpcInternal           uint32 = 13
	grpcUnavailable        uint32 = 14
	grpcUnauthenticated    uint32 = 16
)

// The built-in verdicts of a deadline error, which depend on whose deadline
// it was rather than on a rule (see [Map.ClassifyContext]).
var (
	callerDeadline  = NewVerdict(taxonomy.KindTimeout, taxonomy.CodeDeadlineExceeded, RetryNever).WithMessage(msgDeadline)
	upstreamTimeout = Timeout(taxonomy.CodeUpstreamTimeout).WithMessage(msgTimeout)
)

// DefaultRules returns the rules of [Default], for the standard library,
// HTTP statuses and gRPC codes, in a new slice. The package documentation
// lists them. Use it to build a map with other options:
//
//	m := mapper.New(mapper.WithClock(fake)).With(mapper.DefaultRules()...)
func DefaultRules() []Rule {
	var (
		unreachable = Transient(taxonomy.CodeUpstreamUnavailable).WithMessage(msgUnreachable)
		reset       = TransientIfIdempotent(taxonomy.CodeConnectionReset).WithMessage(msgReset)
		timeout     = Timeout(taxonomy.CodeUpstreamTimeout).WithMessage(msgTimeout)
		badRequest  = Permanent(taxonomy.CodeUpstreamBadRequest).WithMessage(msgBadRequest)
		notFound    = Refusal(taxonomy.CodeUpstreamNotFound, msgNotFound)
		conflict    = Refusal(taxonomy.CodeUpstreamConflict, msgConflict)
		upstream    = TransientIfIdempotent(taxonomy.CodeUpstreamError).WithMessage(msgUpstreamError)
		unavailable = Transient(taxonomy.CodeUpstreamUnavailable).WithMessage(msgUnavailable)
		rateLimited = RateLimited(taxonomy.CodeUpstreamRateLimited).WithMessage(msgRateLimited)
		forbidden   = NotPermitted(taxonomy.CodeUpstreamForbidden).WithMessage(msgForbidden)
		tlsFailed   = Permanent(taxonomy.CodeUpstreamTLS).WithMessage(msgTLS)
		unauth      = NotPermitted(taxonomy.CodeUpstreamUnauthorized).WithMessage(msgUnauthorized)
		// A dial that timed out sent nothing: a timeout, retried always.
		connectTimeout = NewVerdict(taxonomy.KindTimeout, taxonomy.CodeUpstreamTimeout, RetryAlways).WithMessage(msgConnTimeout)
	)
	return []Rule{
		// Sentinels and concrete types. context.DeadlineExceeded has no
		// rule: whose deadline it was decides (see ClassifyContext).
		Is(os.ErrDeadlineExceeded, timeout),
		Is(io.EOF, reset),
		Is(io.ErrUnexpectedEOF, reset),
		Is(syscall.EPIPE, reset),
		Is(syscall.ECONNABORTED, reset),
		Is(syscall.ECONNRESET, reset),
		Is(syscall.EHOSTUNREACH, unreachable),
		Is(syscall.ENETUNREACH, unreachable),
		Is(syscall.ECONNREFUSED, unreachable),
		Type[*net.DNSError](unreachable),
		// A certificate or handshake failure does not heal on retry.
		Type[x509.UnknownAuthorityError](tlsFailed),
		Type[x509.HostnameError](tlsFailed),
		Type[x509.CertificateInvalidError](tlsFailed),
		Type[*tls.CertificateVerificationError](tlsFailed),
		Type[tls.RecordHeaderError](tlsFailed),
		Type[tls.AlertError](tlsFailed),
		TypeFunc(func(e *net.OpError) (Verdict, bool) {
			// Nothing is sent before the connection is made, so a
			// failed or timed-out dial may always be retried.
			if e.Op != "dial" {
				return Verdict{}, false
			}
			if e.Timeout() {
				return connectTimeout, true
			}
			return unreachable, true
		}),

		// Interfaces.
		InterfaceFunc(func(e net.Error) (Verdict, bool) {
			// A *url.Error reports the timeout of what it wraps; look
			// inside, where a dial error says more.
			if _, ok := e.(*url.Error); ok {
				return Verdict{}, false
			}
			// context.DeadlineExceeded is a net.Error too; whose
			// deadline it was decides, not this rule.
			if e == context.DeadlineExceeded {
				return Verdict{}, false
			}
			return timeout, e.Timeout()
		}),

		// HTTP statuses: the ranges first, so the single codes after them win.
		StatusRange(400, 499, badRequest),
		Status(401, unauth),
		Status(403, forbidden),
		Status(404, notFound),
		Status(408, NewVerdict(taxonomy.KindTimeout, taxonomy.CodeUpstreamTimeout, RetryAlways).WithMessage(msgTimeout)),
		Status(409, conflict),
		Status(410, notFound),
		Status(422, Refusal(taxonomy.CodeUpstreamUnprocessable, msgUnprocessable)),
		Status(425, Transient(taxonomy.CodeUpstreamUnavailable).WithMessage(msgTooEarly)),
		Status(429, rateLimited),
		StatusRange(500, 599, upstream),
		Status(503, unavailable),
		Status(504, timeout),

		// gRPC codes.
		GRPCCode(grpcUnknown, upstream),
		GRPCCode(grpcInvalidArgument, badRequest),
		GRPCCode(grpcDeadlineExceeded, timeout),
		GRPCCode(grpcNotFound, notFound),
		GRPCCode(grpcAlreadyExists, conflict),
		GRPCCode(grpcPermissionDenied, forbidden),
		GRPCCode(grpcResourceExhausted, rateLimited),
		GRPCCode(grpcFailedPrecondition, conflict),
		GRPCCode(grpcAborted, upstream),
		GRPCCode(grpcOutOfRange, badRequest),
		GRPCCode(grpcUnimplemented, badRequest),
		GRPCCode(grpcInternal, upstream),
		GRPCCode(grpcUnavailable, unavailable),
		GRPCCode(grpcUnauthenticated, unauth),
	}
}
