package mapper_test

import (
	"errors"
	"net/http"
	"time"
)

// statusErr has StatusCode() int. Its methods work on a nil pointer, so a
// typed nil can sit in a chain.
type statusErr struct {
	code int
	err  error
}

func (e *statusErr) Error() string { return "status error" }

func (e *statusErr) StatusCode() int {
	if e == nil {
		return 0
	}
	return e.code
}

func (e *statusErr) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.err
}

// awsErr has HTTPStatusCode() int, as smithy-go's response errors do.
type awsErr struct{ code int }

func (e awsErr) Error() string       { return "aws error" }
func (e awsErr) HTTPStatusCode() int { return e.code }

// respMethodErr has HTTPResponse() *http.Response.
type respMethodErr struct{ resp *http.Response }

func (e *respMethodErr) Error() string                { return "response method error" }
func (e *respMethodErr) HTTPResponse() *http.Response { return e.resp }

// ghErr has a Response *http.Response field, as go-github's errors do.
type ghErr struct {
	Response *http.Response
	Message  string
}

func (e *ghErr) Error() string { return "github error: " + e.Message }

// headerErr has Header() http.Header.
type headerErr struct {
	h   http.Header
	err error
}

func (e *headerErr) Error() string       { return "header error" }
func (e *headerErr) Header() http.Header { return e.h }
func (e *headerErr) Unwrap() error       { return e.err }

// retryAfterErr has RetryAfter() time.Duration.
type retryAfterErr struct{ d time.Duration }

func (e retryAfterErr) Error() string             { return "slow down" }
func (e retryAfterErr) RetryAfter() time.Duration { return e.d }

// grpcErr looks like grpc's *status.Error: GRPCStatus() *grpcStatus, and
// the status has Code() grpcCode, a uint32.
type (
	grpcCode   uint32
	grpcStatus struct{ code grpcCode }
	grpcErr    struct{ s *grpcStatus }
)

func (s *grpcStatus) Code() grpcCode {
	if s == nil {
		return 0
	}
	return s.code
}
func (e *grpcErr) Error() string           { return "rpc error" }
func (e *grpcErr) GRPCStatus() *grpcStatus { return e.s }
func newGRPC(code grpcCode) error          { return &grpcErr{&grpcStatus{code}} }
func statusResponse(code int, h http.Header) *http.Response {
	return &http.Response{StatusCode: code, Header: h}
}

// timeoutErr is a net.Error with Timeout() true.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// asErr fills a *statusErr through an As method.
type asErr struct{ code int }

func (e asErr) Error() string { return "as error" }
func (e asErr) As(target any) bool {
	if p, ok := target.(**statusErr); ok {
		*p = &statusErr{code: e.code}
		return true
	}
	return false
}

// isErr reports errSentinel through an Is method.
type isErr struct{}

func (isErr) Error() string        { return "is error" }
func (isErr) Is(target error) bool { return target == errSentinel }

var (
	errSentinel = errors.New("sentinel")
	errOther    = errors.New("other")
)
