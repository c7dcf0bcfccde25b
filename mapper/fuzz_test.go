package mapper_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/taxonomy"
)

var fuzzLeaves = []error{
	errOther,
	errSentinel,
	io.EOF,
	io.ErrUnexpectedEOF,
	syscall.ECONNRESET,
	syscall.ECONNREFUSED,
	context.DeadlineExceeded,
	context.Canceled,
	os.ErrDeadlineExceeded,
	timeoutErr{},
	isErr{},
	asErr{code: 503},
	&net.DNSError{Err: "no such host", IsNotFound: true},
	taxonomy.Refusal("booking_not_cancellable", "no"),
	taxonomy.Transient("supplier_unavailable", "down"),
	(*statusErr)(nil),
	(*ghErr)(nil),
	(*grpcErr)(nil),
	&ghErr{},
}

// chainFrom builds an error chain from data: each byte either starts from a
// leaf or wraps what was built so far; the header value of a Retry-After
// wrapper is taken from the rest of data.
func chainFrom(data []byte) error {
	var err error
	for i := 0; i < len(data); i++ {
		b := data[i]
		next := func() int {
			if i+1 < len(data) {
				i++
				return int(data[i])
			}
			return 0
		}
		switch b % 12 {
		case 0:
			err = fuzzLeaves[next()%len(fuzzLeaves)]
		case 1:
			err = fmt.Errorf("wrap: %w", err)
		case 2:
			err = errors.Join(err, fuzzLeaves[next()%len(fuzzLeaves)])
		case 3:
			err = &url.Error{Op: "Post", URL: "https://api.example.com", Err: err}
		case 4:
			op := "read"
			if next()%2 == 0 {
				op = "dial"
			}
			err = &net.OpError{Op: op, Net: "tcp", Err: err}
		case 5:
			err = &statusErr{code: 100 + next()*2, err: err}
		case 6:
			err = newGRPC(grpcCode(next() % 20))
		case 7:
			h := http.Header{"Retry-After": {string(data[i+1:])}}
			err = &headerErr{h: h, err: err}
			i = len(data)
		case 8:
			err = &ghErr{Response: statusResponse(next()*3, http.Header{"Retry-After": {"5"}})}
		case 9:
			err = retryAfterErr{d: -1 << next() % 64}
		case 10:
			err = fmt.Errorf("two: %w and %w", err, fuzzLeaves[next()%len(fuzzLeaves)])
		case 11:
			err = errors.Join(err, nil)
		}
	}
	return err
}

func FuzzClassify(f *testing.F) {
	for _, seed := range []string{
		"", "\x00\x00", "\x00\x04\x01\x03", "\x00\x07\x01", "\x00\x0d\x01\x02\x04",
		"\x00\x00\x05\xc8\x07120", "\x06\x0e", "\x08\x8f", "\x00\x00\x0a\x07\x03",
		"\x00\x05\x04\x00\x03", "\x09\x05", "\x00\x0f\x05\x10", "\x00\x10\x0b",
		"\x00\x00\x07Sat, 01 Mar 2025 12:00:00 GMT", "\x00\x00\x0299999999999999999999",
	} {
		f.Add([]byte(seed), false)
	}
	m := mapper.Default()
	f.Fuzz(func(t *testing.T, data []byte, idempotent bool) {
		err := chainFrom(data)
		got := m.ClassifyFor("fuzz", idempotent, err)
		if err == nil {
			if got != nil {
				t.Fatalf("nil became %v", got)
			}
			return
		}
		_, typed := taxonomy.From(err)
		if typed || errors.Is(err, context.Canceled) {
			if got != err {
				t.Fatalf("%v came back changed: %v", err, got)
			}
			return
		}
		te, ok := got.(*taxonomy.ToolError)
		if !ok {
			t.Fatalf("%v came back as %T", err, got)
		}
		if te.Unwrap() != err || te.Tool() != "fuzz" || te.RetryAfter() < 0 {
			t.Fatalf("%v came back as %v (cause %v, retry after %v)", err, te, te.Unwrap(), te.RetryAfter())
		}
		if te.Retryable() && te.Kind() == taxonomy.KindRefused {
			t.Fatalf("%v is a retryable refusal: %v", err, te)
		}
		if te.Code() == taxonomy.CodeUnmappedFailure && te.Retryable() != idempotent {
			t.Fatalf("%v is unmapped with retryable=%v for idempotent=%v", err, te.Retryable(), idempotent)
		}
	})
}
