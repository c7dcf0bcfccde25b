package mapper

import (
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/taxonomy"
)

// httpStatus returns the HTTP status code link carries, if any.
func httpStatus(link error) (uint64, bool) {
	code := -1
	switch v := link.(type) {
	case interface{ StatusCode() int }:
		code = v.StatusCode()
	case interface{ HTTPStatusCode() int }:
		code = v.HTTPStatusCode()
	default:
		if r := responseOf(link); r != nil {
			code = r.StatusCode
		}
	}
	if code < 0 {
		return 0, false
	}
	return uint64(code), true
}

// responseOf returns the *http.Response link carries through an
// HTTPResponse method or an exported Response field, or nil.
func responseOf(link error) *http.Response {
	if v, ok := link.(interface{ HTTPResponse() *http.Response }); ok {
		return v.HTTPResponse()
	}
	v := reflect.ValueOf(link)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	i := responseField(v.Type())
	if i < 0 {
		return nil
	}
	r, _ := v.Field(i).Interface().(*http.Response)
	return r
}

var (
	responseType   = reflect.TypeFor[*http.Response]()
	responseFields sync.Map // reflect.Type → int: the index of its Response field, or -1
)

// responseField returns the index of struct type t's exported field
// "Response *http.Response", or -1. It caches the answer per type.
func responseField(t reflect.Type) int {
	if i, ok := responseFields.Load(t); ok {
		return i.(int)
	}
	i := -1
	if f, ok := t.FieldByName("Response"); ok && f.IsExported() && len(f.Index) == 1 && f.Type == responseType {
		i = f.Index[0]
	}
	responseFields.Store(t, i)
	return i
}

// grpcCode returns the gRPC status code of link, read without importing
// grpc: link has a method GRPCStatus() S and S a method Code() C, with C an
// unsigned integer type (codes.Code is a uint32).
func grpcCode(link error) (uint64, bool) {
	v := reflect.ValueOf(link)
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return 0, false
	}
	s, ok := callResult(v.MethodByName("GRPCStatus"))
	if !ok {
		return 0, false
	}
	c, ok := callResult(s.MethodByName("Code"))
	if !ok {
		return 0, false
	}
	switch c.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return c.Uint(), true
	}
	return 0, false
}

// callResult calls f, a method without arguments and with one result, and
// returns a non-nil result.
func callResult(f reflect.Value) (reflect.Value, bool) {
	if !f.IsValid() || f.Type().NumIn() != 0 || f.Type().NumOut() != 1 {
		return reflect.Value{}, false
	}
	r := f.Call(nil)[0]
	switch r.Kind() {
	case reflect.Pointer, reflect.Interface:
		if r.IsNil() {
			return reflect.Value{}, false
		}
	}
	return r, true
}

// retryAfterAt returns the Retry-After link carries: from a
// RetryAfter() time.Duration method (a positive value), or from the
// Retry-After header of its Header() http.Header method or its
// *http.Response.
func (m *Map) retryAfterAt(link error) (time.Duration, bool) {
	if v, ok := link.(interface{ RetryAfter() time.Duration }); ok {
		if d := v.RetryAfter(); d > 0 {
			return taxonomy.ClampRetryAfter(d), true
		}
	}
	var h http.Header
	if v, ok := link.(interface{ Header() http.Header }); ok {
		h = v.Header()
	} else if r := responseOf(link); r != nil {
		h = r.Header
	}
	if h == nil {
		return 0, false
	}
	return parseRetryAfter(h.Get("Retry-After"), m.cfg.clock)
}

// maxSeconds is the longest Retry-After, in seconds, that an error carries
// (taxonomy.MaxRetryAfter); longer values saturate at it.
const maxSeconds = int64(taxonomy.MaxRetryAfter / time.Second)

// parseRetryAfter parses a Retry-After value (RFC 9110 §10.2.3): a number
// of seconds, or an HTTP-date read against clk's now (a date in the past
// means now: 0). It reports false for an empty, negative or malformed value. A
// value longer than taxonomy.MaxRetryAfter saturates at it.
func parseRetryAfter(s string, clk clock.Clock) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if s[0] >= '0' && s[0] <= '9' {
		var n int64
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			if n <= maxSeconds { // past it, saturated; keep checking the digits
				n = n*10 + int64(c-'0')
			}
		}
		return time.Duration(min(n, maxSeconds)) * time.Second, true
	}
	t, err := http.ParseTime(s)
	if err != nil {
		return 0, false
	}
	return taxonomy.ClampRetryAfter(t.Sub(clk.Now())), true
}
