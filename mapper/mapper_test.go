package mapper_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// want is what a classified error should be.
type want struct {
	kind      taxonomy.Kind
	code      string
	retryable bool
}

func check(t *testing.T, got error, w want) *taxonomy.ToolError {
	t.Helper()
	var te *taxonomy.ToolError
	if !errors.As(got, &te) || got != error(te) {
		t.Fatalf("got %T %v, want a *taxonomy.ToolError", got, got)
	}
	if te.Kind() != w.kind || te.Code() != w.code || te.Retryable() != w.retryable {
		t.Fatalf("got %s/%s retryable=%v, want %s/%s retryable=%v",
			te.Kind(), te.Code(), te.Retryable(), w.kind, w.code, w.retryable)
	}
	return te
}

func TestPassThrough(t *testing.T) {
	typed := taxonomy.Refusal("booking_not_cancellable", "non-refundable")
	cancelled := fmt.Errorf("fetch: %w", context.Canceled)
	tests := []struct {
		name string
		err  error
	}{
		{"canceled", context.Canceled},
		{"wrapped canceled", cancelled},
		{"joined canceled", errors.Join(io.EOF, context.Canceled)},
		{"canceled inside a url error", &url.Error{Op: "Get", URL: "http://x", Err: context.Canceled}},
		{"typed", typed},
		{"wrapped typed", fmt.Errorf("cancel: %w", typed)},
		{"joined typed", errors.Join(syscall.ECONNRESET, typed)},
		{"typed wrapping a foreign error", taxonomy.Failure("ledger_rejected", "no").WithCause(syscall.ECONNRESET)},
	}
	m := mapper.Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.ClassifyFor("t", true, tt.err); got != tt.err {
				t.Fatalf("got %v, want the error unchanged", got)
			}
		})
	}
	if got := m.Classify("t", nil); got != nil {
		t.Fatalf("nil: got %v", got)
	}
}

func TestRules(t *testing.T) {
	permanent := want{taxonomy.KindFailed, "matched", false}
	unmapped := want{taxonomy.KindFailed, taxonomy.CodeUnmappedFailure, false}
	tests := []struct {
		name string
		rule mapper.Rule
		err  error
		want want
	}{
		{"Is", mapper.Is(errSentinel, mapper.Permanent("matched")), fmt.Errorf("a: %w", errSentinel), permanent},
		{"Is by method", mapper.Is(errSentinel, mapper.Permanent("matched")), isErr{}, permanent},
		{"Is other", mapper.Is(errSentinel, mapper.Permanent("matched")), errOther, unmapped},
		{"Is uncomparable", mapper.Is(uncomparable{}, mapper.Permanent("matched")), uncomparable{}, unmapped},
		{"Type", mapper.Type[*statusErr](mapper.Permanent("matched")), fmt.Errorf("a: %w", &statusErr{}), permanent},
		{"Type by As", mapper.Type[*statusErr](mapper.Permanent("matched")), asErr{code: 1}, permanent},
		{"Type other", mapper.Type[*statusErr](mapper.Permanent("matched")), errOther, unmapped},
		{"TypeFunc yes", mapper.TypeFunc(func(e *statusErr) (mapper.Verdict, bool) {
			return mapper.Permanent("matched"), e.code == 7
		}), &statusErr{code: 7}, permanent},
		{"TypeFunc declines", mapper.TypeFunc(func(e *statusErr) (mapper.Verdict, bool) {
			return mapper.Permanent("matched"), e.code == 7
		}), &statusErr{code: 8}, unmapped},
		{"Interface", mapper.Interface[interface{ Timeout() bool }](mapper.Permanent("matched")), timeoutErr{}, permanent},
		{"Interface other", mapper.Interface[interface{ Timeout() bool }](mapper.Permanent("matched")), errOther, unmapped},
		{"InterfaceFunc", mapper.InterfaceFunc(func(e net.Error) (mapper.Verdict, bool) {
			return mapper.Permanent("matched"), e.Timeout()
		}), fmt.Errorf("a: %w", timeoutErr{}), permanent},
		{"Status StatusCode", mapper.Status(418, mapper.Permanent("matched")), &statusErr{code: 418}, permanent},
		{"Status HTTPStatusCode", mapper.Status(418, mapper.Permanent("matched")), awsErr{418}, permanent},
		{"Status HTTPResponse", mapper.Status(418, mapper.Permanent("matched")), &respMethodErr{statusResponse(418, nil)}, permanent},
		{"Status Response field", mapper.Status(418, mapper.Permanent("matched")), &ghErr{Response: statusResponse(418, nil)}, permanent},
		{"Status nil Response field", mapper.Status(418, mapper.Permanent("matched")), &ghErr{}, unmapped},
		{"Status other", mapper.Status(418, mapper.Permanent("matched")), &statusErr{code: 419}, unmapped},
		{"StatusRange", mapper.StatusRange(500, 599, mapper.Permanent("matched")), &statusErr{code: 599}, permanent},
		{"StatusRange outside", mapper.StatusRange(500, 599, mapper.Permanent("matched")), &statusErr{code: 600}, unmapped},
		{"StatusRange empty", mapper.StatusRange(599, 500, mapper.Permanent("matched")), &statusErr{code: 550}, unmapped},
		{"GRPCCode", mapper.GRPCCode(grpcCode(14), mapper.Permanent("matched")), fmt.Errorf("a: %w", newGRPC(14)), permanent},
		{"GRPCCode other", mapper.GRPCCode(grpcCode(14), mapper.Permanent("matched")), newGRPC(13), unmapped},
		{"GRPCCode nil status", mapper.GRPCCode(grpcCode(0), mapper.Permanent("matched")), &grpcErr{}, unmapped},
		{"zero Rule", mapper.Rule{}, errSentinel, unmapped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mapper.New().With(tt.rule)
			got := check(t, m.Classify("tool", tt.err), tt.want)
			if got.Tool() != "tool" || !reflect.DeepEqual(got.Unwrap(), tt.err) {
				t.Fatalf("tool %q, cause %v, want %q and %v", got.Tool(), got.Unwrap(), "tool", tt.err)
			}
		})
	}
}

// uncomparable is an error type that == would panic on.
type uncomparable struct{ _ []string }

func (uncomparable) Error() string { return "uncomparable" }

func TestVerdicts(t *testing.T) {
	tests := []struct {
		out                    mapper.Verdict
		kind                   taxonomy.Kind
		retryable, idempotentR bool
	}{
		{mapper.Transient("x"), taxonomy.KindFailed, true, true},
		{mapper.TransientIfIdempotent("x"), taxonomy.KindFailed, false, true},
		{mapper.Permanent("x"), taxonomy.KindFailed, false, false},
		{mapper.Refusal("x", "no"), taxonomy.KindRefused, false, false},
		{mapper.Timeout("x"), taxonomy.KindTimeout, false, true},
		{mapper.NotPermitted("x"), taxonomy.KindNotPermitted, false, false},
		{mapper.RateLimited("x"), taxonomy.KindRateLimited, true, true},
		{mapper.NewVerdict(taxonomy.KindTimeout, "x", mapper.RetryNever), taxonomy.KindTimeout, false, false},
		{mapper.NewVerdict(taxonomy.KindCircuitOpen, "x", mapper.RetryAlways), taxonomy.KindCircuitOpen, true, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			m := mapper.New().With(mapper.Is(errSentinel, tt.out))
			check(t, m.ClassifyFor("t", false, errSentinel), want{tt.kind, "x", tt.retryable})
			check(t, m.ClassifyFor("t", true, errSentinel), want{tt.kind, "x", tt.idempotentR})
		})
	}
	t.Run("refusal message", func(t *testing.T) {
		m := mapper.New().With(mapper.Is(errSentinel, mapper.Refusal("sold_out", "the fare is sold out")))
		if got := m.Classify("book", errSentinel).Error(); got != "book: tool-refused sold_out: the fare is sold out" {
			t.Fatalf("Error() = %q", got)
		}
	})
	t.Run("zero verdict", func(t *testing.T) {
		m := mapper.New().With(mapper.Is(errSentinel, mapper.Verdict{}))
		check(t, m.Classify("t", errSentinel), want{taxonomy.KindFailed, taxonomy.CodeInvalidCode, false})
	})
	t.Run("no tool", func(t *testing.T) {
		got := check(t, mapper.Default().Classify("", errOther), want{taxonomy.KindFailed, taxonomy.CodeUnmappedFailure, false})
		if got.Error() != "tool-failed unmapped_failure" {
			t.Fatalf("Error() = %q", got.Error())
		}
	})
}

// apiError is the SDK error of the worked example in the package doc.
type apiError struct {
	Status int
	Err    error
}

func (e *apiError) Error() string   { return fmt.Sprintf("api: %d: %v", e.Status, e.Err) }
func (e *apiError) StatusCode() int { return e.Status }
func (e *apiError) Unwrap() error   { return e.Err }

func TestPrecedence(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	d := mapper.Default()

	t.Run("worked example", func(t *testing.T) {
		err := fmt.Errorf("quote: %w", &apiError{Status: 503, Err: reset})
		check(t, d.ClassifyFor("quote", false, err), want{taxonomy.KindFailed, taxonomy.CodeConnectionReset, false})
		check(t, d.ClassifyFor("quote", true, err), want{taxonomy.KindFailed, taxonomy.CodeConnectionReset, true})

		// Without the reset, the status decides.
		err = fmt.Errorf("quote: %w", &apiError{Status: 503, Err: errOther})
		check(t, d.Classify("quote", err), want{taxonomy.KindFailed, taxonomy.CodeUpstreamUnavailable, true})

		// A type rule for the SDK error decides at its own link.
		m := d.With(mapper.Type[*apiError](mapper.Permanent("quote_rejected")))
		err = fmt.Errorf("quote: %w", &apiError{Status: 503, Err: reset})
		check(t, m.Classify("quote", err), want{taxonomy.KindFailed, "quote_rejected", false})
	})

	t.Run("type beats interface at one link", func(t *testing.T) {
		m := mapper.New().With(
			mapper.Type[timeoutErr](mapper.Permanent("by_type")),
			mapper.Interface[net.Error](mapper.Permanent("by_interface")),
		)
		check(t, m.Classify("t", timeoutErr{}), want{taxonomy.KindFailed, "by_type", false})
	})

	t.Run("outer interface beats inner type", func(t *testing.T) {
		m := mapper.New().With(
			mapper.Is(errSentinel, mapper.Permanent("by_sentinel")),
			mapper.Interface[interface{ StatusCode() int }](mapper.Permanent("by_interface")),
		)
		check(t, m.Classify("t", &statusErr{code: 500, err: errSentinel}), want{taxonomy.KindFailed, "by_interface", false})
	})

	t.Run("status only where no type rule matched", func(t *testing.T) {
		m := mapper.New().With(
			mapper.Status(500, mapper.Permanent("by_status")),
			mapper.Is(errSentinel, mapper.Permanent("by_sentinel")),
		)
		check(t, m.Classify("t", &statusErr{code: 500, err: fmt.Errorf("x: %w", errSentinel)}), want{taxonomy.KindFailed, "by_sentinel", false})
		check(t, m.Classify("t", &statusErr{code: 500, err: errOther}), want{taxonomy.KindFailed, "by_status", false})
	})

	t.Run("outermost status first", func(t *testing.T) {
		m := mapper.New().With(
			mapper.Status(500, mapper.Permanent("outer")),
			mapper.Status(400, mapper.Permanent("inner")),
		)
		check(t, m.Classify("t", &statusErr{code: 500, err: &statusErr{code: 400}}), want{taxonomy.KindFailed, "outer", false})
		// An outer status no rule covers lets the walk go on.
		check(t, m.Classify("t", &statusErr{code: 302, err: &statusErr{code: 400}}), want{taxonomy.KindFailed, "inner", false})
	})

	t.Run("joined errors depth first", func(t *testing.T) {
		m := mapper.New().With(
			mapper.Is(errSentinel, mapper.Permanent("first")),
			mapper.Is(errOther, mapper.Permanent("second")),
		)
		err := errors.Join(fmt.Errorf("a: %w", errOther), errSentinel)
		check(t, m.Classify("t", err), want{taxonomy.KindFailed, "second", false})
	})

	t.Run("later rule wins at one level", func(t *testing.T) {
		m := d.With(mapper.Is(syscall.ECONNRESET, mapper.Transient("mine")))
		check(t, m.Classify("t", reset), want{taxonomy.KindFailed, "mine", true})
		m = d.With(mapper.StatusRange(500, 599, mapper.Permanent("all_5xx")))
		check(t, m.Classify("t", &statusErr{code: 503}), want{taxonomy.KindFailed, "all_5xx", false})
	})

	t.Run("a user status rule does not beat a default type rule", func(t *testing.T) {
		m := d.With(mapper.Status(503, mapper.Permanent("mine")))
		check(t, m.Classify("t", &statusErr{code: 503, err: io.ErrUnexpectedEOF}), want{taxonomy.KindFailed, taxonomy.CodeConnectionReset, false})
	})

	t.Run("level follows the type parameter", func(t *testing.T) {
		// Type[net.Error] is an interface rule: the sentinel rule wins at the link.
		m := mapper.New().With(
			mapper.Is(syscall.ETIMEDOUT, mapper.Permanent("sentinel")),
			mapper.Type[net.Error](mapper.Permanent("interface")),
		)
		check(t, m.Classify("t", syscall.ETIMEDOUT), want{taxonomy.KindFailed, "sentinel", false})
	})
}

func TestDefaults(t *testing.T) {
	const (
		failed  = taxonomy.KindFailed
		refused = taxonomy.KindRefused
		timeout = taxonomy.KindTimeout
		denied  = taxonomy.KindNotPermitted
		limited = taxonomy.KindRateLimited
	)
	// never, always, ifIdem describe retryability for a tool that is not
	// idempotent and one that is.
	type retry struct{ plain, idem bool }
	never, always, ifIdem := retry{false, false}, retry{true, true}, retry{false, true}

	dialTimeout := &url.Error{Op: "Post", URL: "https://api.example.com", Err: &net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}}
	tests := []struct {
		name  string
		err   error
		kind  taxonomy.Kind
		code  string
		retry retry
	}{
		{"deadline", context.DeadlineExceeded, timeout, taxonomy.CodeDeadlineExceeded, never},
		{"deadline in url error", &url.Error{Op: "Get", URL: "u", Err: context.DeadlineExceeded}, timeout, taxonomy.CodeDeadlineExceeded, never},
		{"os deadline", os.ErrDeadlineExceeded, timeout, taxonomy.CodeUpstreamTimeout, ifIdem},
		{"EOF", &url.Error{Op: "Post", URL: "u", Err: io.EOF}, failed, taxonomy.CodeConnectionReset, ifIdem},
		{"unexpected EOF", io.ErrUnexpectedEOF, failed, taxonomy.CodeConnectionReset, ifIdem},
		{"reset", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, failed, taxonomy.CodeConnectionReset, ifIdem},
		{"broken pipe", &net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.EPIPE)}, failed, taxonomy.CodeConnectionReset, ifIdem},
		{"aborted", syscall.ECONNABORTED, failed, taxonomy.CodeConnectionReset, ifIdem},
		{"refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, failed, taxonomy.CodeUpstreamUnavailable, always},
		{"refused bare", syscall.ECONNREFUSED, failed, taxonomy.CodeUpstreamUnavailable, always},
		{"host unreachable", syscall.EHOSTUNREACH, failed, taxonomy.CodeUpstreamUnavailable, always},
		{"net unreachable", syscall.ENETUNREACH, failed, taxonomy.CodeUpstreamUnavailable, always},
		{"dns", &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, failed, taxonomy.CodeUpstreamUnavailable, always},
		{"dns temporary", &net.DNSError{Err: "server misbehaving", IsTemporary: true}, failed, taxonomy.CodeUpstreamUnavailable, always},
		{"dial timeout in url error", dialTimeout, timeout, taxonomy.CodeUpstreamTimeout, always},
		{"read timeout", &url.Error{Op: "Get", URL: "u", Err: &net.OpError{Op: "read", Err: timeoutErr{}}}, timeout, taxonomy.CodeUpstreamTimeout, ifIdem},
		{"net.Error timeout", timeoutErr{}, timeout, taxonomy.CodeUpstreamTimeout, ifIdem},
		{"x509", &url.Error{Op: "Get", URL: "u", Err: x509.UnknownAuthorityError{}}, failed, taxonomy.CodeUpstreamTLS, never},
		{"plain", errors.New("boom"), failed, taxonomy.CodeUnmappedFailure, ifIdem},

		{"400", &statusErr{code: 400}, failed, taxonomy.CodeUpstreamBadRequest, never},
		{"401", &statusErr{code: 401}, denied, taxonomy.CodeUpstreamUnauthorized, never},
		{"403", &statusErr{code: 403}, denied, taxonomy.CodeUpstreamForbidden, never},
		{"404", &statusErr{code: 404}, refused, taxonomy.CodeUpstreamNotFound, never},
		{"405", &statusErr{code: 405}, failed, taxonomy.CodeUpstreamBadRequest, never},
		{"408", &statusErr{code: 408}, timeout, taxonomy.CodeUpstreamTimeout, always},
		{"409", &statusErr{code: 409}, refused, taxonomy.CodeUpstreamConflict, never},
		{"410", &statusErr{code: 410}, refused, taxonomy.CodeUpstreamNotFound, never},
		{"422", &statusErr{code: 422}, refused, taxonomy.CodeUpstreamUnprocessable, never},
		{"425", &statusErr{code: 425}, failed, taxonomy.CodeUpstreamUnavailable, always},
		{"429", &statusErr{code: 429}, limited, taxonomy.CodeUpstreamRateLimited, always},
		{"451", &statusErr{code: 451}, failed, taxonomy.CodeUpstreamBadRequest, never},
		{"500", &statusErr{code: 500}, failed, taxonomy.CodeUpstreamError, ifIdem},
		{"501", &statusErr{code: 501}, failed, taxonomy.CodeUpstreamError, ifIdem},
		{"502", &statusErr{code: 502}, failed, taxonomy.CodeUpstreamError, ifIdem},
		{"503", &statusErr{code: 503}, failed, taxonomy.CodeUpstreamUnavailable, always},
		{"504", &statusErr{code: 504}, timeout, taxonomy.CodeUpstreamTimeout, ifIdem},
		{"302", &statusErr{code: 302}, failed, taxonomy.CodeUnmappedFailure, ifIdem},

		{"grpc Canceled", newGRPC(1), failed, taxonomy.CodeUnmappedFailure, ifIdem},
		{"grpc Unknown", newGRPC(2), failed, taxonomy.CodeUpstreamError, ifIdem},
		{"grpc InvalidArgument", newGRPC(3), failed, taxonomy.CodeUpstreamBadRequest, never},
		{"grpc DeadlineExceeded", newGRPC(4), timeout, taxonomy.CodeUpstreamTimeout, ifIdem},
		{"grpc NotFound", newGRPC(5), refused, taxonomy.CodeUpstreamNotFound, never},
		{"grpc AlreadyExists", newGRPC(6), refused, taxonomy.CodeUpstreamConflict, never},
		{"grpc PermissionDenied", newGRPC(7), denied, taxonomy.CodeUpstreamForbidden, never},
		{"grpc ResourceExhausted", newGRPC(8), limited, taxonomy.CodeUpstreamRateLimited, always},
		{"grpc FailedPrecondition", newGRPC(9), refused, taxonomy.CodeUpstreamConflict, never},
		{"grpc Aborted", newGRPC(10), failed, taxonomy.CodeUpstreamError, ifIdem},
		{"grpc OutOfRange", newGRPC(11), failed, taxonomy.CodeUpstreamBadRequest, never},
		{"grpc Unimplemented", newGRPC(12), failed, taxonomy.CodeUpstreamBadRequest, never},
		{"grpc Internal", newGRPC(13), failed, taxonomy.CodeUpstreamError, ifIdem},
		{"grpc Unavailable", newGRPC(14), failed, taxonomy.CodeUpstreamUnavailable, always},
		{"grpc DataLoss", newGRPC(15), failed, taxonomy.CodeUnmappedFailure, ifIdem},
		{"grpc Unauthenticated", newGRPC(16), denied, taxonomy.CodeUpstreamUnauthorized, never},
	}
	m := mapper.Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, m.ClassifyFor("t", false, tt.err), want{tt.kind, tt.code, tt.retry.plain})
			check(t, m.ClassifyFor("t", true, tt.err), want{tt.kind, tt.code, tt.retry.idem})
		})
	}
}

// TestRealNetworkErrors classifies errors made by the standard library
// itself, not built by hand.
func TestRealNetworkErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip("no loopback:", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = net.Dial("tcp", addr)
	if err == nil {
		t.Skip("the closed port accepted a connection")
	}
	check(t, mapper.Default().Classify("t", err), want{taxonomy.KindFailed, taxonomy.CodeUpstreamUnavailable, true})

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	_, err = client.Get("http://" + addr)
	check(t, mapper.Default().Classify("t", err), want{taxonomy.KindFailed, taxonomy.CodeUpstreamUnavailable, true})

	ctx, cancel := context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	<-ctx.Done()
	check(t, mapper.Default().Classify("t", ctx.Err()), want{taxonomy.KindTimeout, taxonomy.CodeDeadlineExceeded, false})
}

// TestTypedNil: a nil pointer of an error type in a chain does not make the
// map call a method through it.
func TestTypedNil(t *testing.T) {
	for _, err := range []error{(*ghErr)(nil), (*grpcErr)(nil), fmt.Errorf("a: %w", (*statusErr)(nil))} {
		check(t, mapper.Default().ClassifyFor("t", false, err), want{taxonomy.KindFailed, taxonomy.CodeUnmappedFailure, false})
	}
}
