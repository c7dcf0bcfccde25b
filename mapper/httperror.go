package mapper

import (
	"net/http"
	"strconv"
	"time"

	"github.com/toolmw/toolmw/clock"
)

// HTTPError is an HTTP status a tool got from its upstream, in the shape the
// map reads: the default map classifies it by its status (409 and 422 are
// refusals, 429 and 503 transient with their Retry-After, 500 transient only
// for an idempotent tool, …; see the package documentation), so a tool
// author writes
//
//	if resp.StatusCode >= 300 {
//		return "", mapper.ResponseError(resp)
//	}
//
// instead of fmt.Errorf("booking failed: %s", resp.Status), which no rule can
// read and which ends as a permanent unmapped_failure.
//
// Its message holds the status code and Go's standard text for it, never the
// response body or the server's own reason phrase, either of which may hold
// anything. An *HTTPError is immutable and safe for concurrent use.
type HTTPError struct {
	code       int
	retryAfter time.Duration
}

// maxRetryAfterLen bounds the Retry-After value an HTTPError reads: an HTTP-date
// is 29 bytes, and no honest number of seconds is longer.
const maxRetryAfterLen = 64

// ResponseError returns the error of resp's status, with resp's Retry-After
// read against the current time. It reads the status code and the
// Retry-After header only: never the body, which the caller still owns and
// must close. A nil resp gives an error of status 0, which no status rule
// matches.
func ResponseError(resp *http.Response) *HTTPError {
	if resp == nil {
		return StatusError(0, nil)
	}
	return StatusError(resp.StatusCode, resp.Header)
}

// StatusError returns the error of an HTTP status code and the response
// header (which may be nil), for clients that do not hand out an
// *http.Response. A code outside 100–999 is recorded as 0. The Retry-After
// header, a number of seconds or an HTTP-date (RFC 9110 §10.2.3), is read
// against the current time (clock.System); an empty, malformed, negative or over-long
// (more than 64 bytes) value is ignored, and a longer wait than
// taxonomy.MaxRetryAfter saturates at it (the retry layer's cap on any one
// wait still applies).
func StatusError(code int, header http.Header) *HTTPError {
	if code < 100 || code > 999 {
		code = 0
	}
	e := &HTTPError{code: code}
	if v := header.Get("Retry-After"); len(v) <= maxRetryAfterLen {
		if d, ok := parseRetryAfter(v, clock.System); ok {
			e.retryAfter = d
		}
	}
	return e
}

// StatusCode returns the HTTP status code, or 0.
func (e *HTTPError) StatusCode() int { return e.code }

// RetryAfter returns the wait the upstream asked for, or 0.
func (e *HTTPError) RetryAfter() time.Duration { return e.retryAfter }

// Error returns "upstream answered HTTP 503 Service Unavailable": the code
// and Go's text for it, nothing the server sent.
func (e *HTTPError) Error() string {
	if e.code == 0 {
		return "upstream answered without a valid HTTP status"
	}
	msg := "upstream answered HTTP " + strconv.Itoa(e.code)
	if text := http.StatusText(e.code); text != "" {
		msg += " " + text
	}
	return msg
}
