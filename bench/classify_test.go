package bench

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"

	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/taxonomy"
)

// BenchmarkClassify measures the mapper translating a tool's error.

// quotaError and the sentinels below stand for a supplier SDK's errors.
type quotaError struct{ left int }

func (e *quotaError) Error() string { return fmt.Sprintf("quota: %d left", e.left) }

type statusError struct{ code int }

func (e *statusError) Error() string   { return fmt.Sprintf("status %d", e.code) }
func (e *statusError) StatusCode() int { return e.code }

// rules20 is a map of twenty rules of every level; only the last one matches
// errDial, at its innermost link, so the walk tries every rule at every
// link first.
func rules20() *mapper.Map {
	var rules []mapper.Rule
	for i := range 14 {
		rules = append(rules, mapper.Is(fmt.Errorf("supplier error %d", i), mapper.Permanent("supplier_error")))
	}
	return mapper.New().With(append(rules,
		mapper.Type[*quotaError](mapper.RateLimited("supplier_quota")),
		mapper.Type[*statusError](mapper.Permanent("supplier_status")),
		mapper.Interface[interface{ Retryable() bool }](mapper.Transient("supplier_retryable")),
		mapper.StatusRange(500, 599, mapper.TransientIfIdempotent("supplier_5xx")),
		mapper.Status(429, mapper.RateLimited("supplier_throttled")),
		mapper.Is(syscall.ECONNREFUSED, mapper.Transient("upstream_unavailable")),
	)...)
}

// errDial is what an HTTP client returns when the connection is refused:
// the errno three wrappers deep.
var errDial = fmt.Errorf("get_weather: %w", &url.Error{
	Op:  "Get",
	URL: "https://weather.example/v1/forecast",
	Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
})

// errTyped is an error the tool's author already typed, wrapped once.
var errTyped = fmt.Errorf("get_weather: %w", taxonomy.Transient("supplier_unavailable", "the supplier is down"))

var sinkErr error

func BenchmarkClassify(b *testing.B) {
	m20, def := rules20(), mapper.Default()
	for _, c := range []struct {
		name string
		m    *mapper.Map
		err  error
	}{
		{"wrapped3_rules20", m20, errDial},
		{"wrapped3_default", def, errDial},
		{"typed", m20, errTyped},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				sinkErr = c.m.ClassifyFor("get_weather", true, c.err)
			}
		})
	}
}

// TestClassifyCases checks that the benchmarked cases take the paths they
// claim to.
func TestClassifyCases(t *testing.T) {
	m20 := rules20()
	if got := taxonomy.InfoOf(m20.Classify("get_weather", errDial)).Code; got != "upstream_unavailable" {
		t.Errorf("rules20: code %q, want upstream_unavailable", got)
	}
	if got := m20.Classify("get_weather", errTyped); got != errTyped {
		t.Errorf("a typed error came back as %v", got)
	}
	if !errors.Is(mapper.Default().Classify("get_weather", errDial), syscall.ECONNREFUSED) {
		t.Error("the default map lost the cause")
	}
}
