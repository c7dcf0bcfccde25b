package mapper_test

import (
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	m := mapper.Default().WithOptions(mapper.WithClock(clock.NewFake(now)))
	tests := []struct {
		value string
		want  time.Duration
	}{
		{"120", 120 * time.Second},
		{" 7 ", 7 * time.Second},
		{"0", 0},
		{"0007", 7 * time.Second},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"Saturday, 01-Mar-25 12:00:30 GMT", 30 * time.Second}, // RFC 850
		{"Sat Mar  1 12:00:45 2025", 45 * time.Second},         // ANSI C asctime
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},       // past: now
		{"99999999999999999999999", taxonomy.MaxRetryAfter},    // saturates
		{"99999999999999", taxonomy.MaxRetryAfter},
		{fmt.Sprint(math.MaxInt64), taxonomy.MaxRetryAfter},
		{"86400", taxonomy.MaxRetryAfter},
		{"86399", 86399 * time.Second},
		{now.Add(1000 * time.Hour).Format(http.TimeFormat), taxonomy.MaxRetryAfter},
		// Ignored: no hint.
		{"", 0},
		{"-5", 0},
		{"1.5", 0},
		{"5s", 0},
		{"soon", 0},
		{"Mon, 99 Foo 2025 00:00:00 GMT", 0},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			h := http.Header{}
			h.Set("Retry-After", tt.value)
			err := &headerErr{h: h, err: &statusErr{code: 429}}
			te := check(t, m.Classify("t", err), want{taxonomy.KindRateLimited, taxonomy.CodeUpstreamRateLimited, true})
			if te.RetryAfter() != tt.want {
				t.Fatalf("RetryAfter() = %v, want %v", te.RetryAfter(), tt.want)
			}
		})
	}
}

func TestRetryAfterSources(t *testing.T) {
	h := http.Header{"Retry-After": {"3"}}
	tests := []struct {
		name string
		err  error
		want time.Duration
	}{
		{"method", fmt.Errorf("a: %w", &statusErr{code: 503, err: retryAfterErr{2 * time.Second}}), 2 * time.Second},
		{"method zero", &statusErr{code: 503, err: retryAfterErr{0}}, 0},
		{"method negative", &statusErr{code: 503, err: retryAfterErr{-time.Second}}, 0},
		{"Header method", &headerErr{h: h, err: &statusErr{code: 503}}, 3 * time.Second},
		{"HTTPResponse method", &respMethodErr{statusResponse(503, h)}, 3 * time.Second},
		{"Response field", fmt.Errorf("a: %w", &ghErr{Response: statusResponse(429, h)}), 3 * time.Second},
		{"outermost first", &headerErr{h: h, err: &statusErr{code: 503, err: retryAfterErr{2 * time.Second}}}, 3 * time.Second},
		{"none", &statusErr{code: 503}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := taxonomy.From(mapper.Default().Classify("t", tt.err))
			if got == nil || !got.Retryable() || got.RetryAfter() != tt.want {
				t.Fatalf("got %v, want retryable with RetryAfter %v", got, tt.want)
			}
		})
	}
}

func TestRetryAfterOnlyWhenRetryable(t *testing.T) {
	h := http.Header{"Retry-After": {"3"}}
	d := mapper.Default()

	// A refusal is not retried, so it carries no hint.
	te := check(t, d.Classify("t", &headerErr{h: h, err: &statusErr{code: 409}}), want{taxonomy.KindRefused, taxonomy.CodeUpstreamConflict, false})
	if te.RetryAfter() != 0 {
		t.Fatalf("refusal RetryAfter() = %v", te.RetryAfter())
	}

	// A 502 is retryable only for an idempotent tool; so is its hint.
	err := &headerErr{h: h, err: &statusErr{code: 502}}
	if te := check(t, d.ClassifyFor("t", false, err), want{taxonomy.KindFailed, taxonomy.CodeUpstreamError, false}); te.RetryAfter() != 0 {
		t.Fatalf("not idempotent: RetryAfter() = %v", te.RetryAfter())
	}
	if te := check(t, d.ClassifyFor("t", true, err), want{taxonomy.KindFailed, taxonomy.CodeUpstreamError, true}); te.RetryAfter() != 3*time.Second {
		t.Fatalf("idempotent: RetryAfter() = %v", te.RetryAfter())
	}
}

func TestRetryAfterDefault(t *testing.T) {
	m := mapper.New().With(mapper.Is(errSentinel, mapper.Transient("busy").WithRetryAfter(2*time.Second)))
	if te := check(t, m.Classify("t", errSentinel), want{taxonomy.KindFailed, "busy", true}); te.RetryAfter() != 2*time.Second {
		t.Fatalf("default: RetryAfter() = %v", te.RetryAfter())
	}
	// The error's own hint wins, even when it says "now".
	err := &headerErr{h: http.Header{"Retry-After": {"0"}}, err: errSentinel}
	if te := check(t, m.Classify("t", err), want{taxonomy.KindFailed, "busy", true}); te.RetryAfter() != 0 {
		t.Fatalf("error's hint: RetryAfter() = %v", te.RetryAfter())
	}
	// A negative default is 0; a default on a permanent verdict is unused.
	m = mapper.New().With(
		mapper.Is(errSentinel, mapper.Transient("busy").WithRetryAfter(-time.Second)),
		mapper.Is(errOther, mapper.Permanent("gone").WithRetryAfter(time.Second)),
	)
	if te := check(t, m.Classify("t", errSentinel), want{taxonomy.KindFailed, "busy", true}); te.RetryAfter() != 0 {
		t.Fatalf("negative default: RetryAfter() = %v", te.RetryAfter())
	}
	if te := check(t, m.Classify("t", errOther), want{taxonomy.KindFailed, "gone", false}); te.RetryAfter() != 0 {
		t.Fatalf("permanent: RetryAfter() = %v", te.RetryAfter())
	}
}

func TestNilOptions(t *testing.T) {
	m := mapper.Default().WithOptions(mapper.WithClock(nil), mapper.WithScrubber(nil), mapper.WithMessages())
	h := http.Header{"Retry-After": {time.Now().Add(time.Hour).Format(http.TimeFormat)}}
	te := check(t, m.Classify("t", &headerErr{h: h, err: &statusErr{code: 503}}), want{taxonomy.KindFailed, taxonomy.CodeUpstreamUnavailable, true})
	if d := te.RetryAfter(); d < 58*time.Minute || d > time.Hour {
		t.Fatalf("RetryAfter() = %v, want about an hour by the real clock", d)
	}
	if got := m.Classify("t", fmt.Errorf("for %s", plantedEmail)).Error(); got != "t: tool-failed unmapped_failure: for [REDACTED:email]" {
		t.Fatalf("Error() = %q", got)
	}
}

// TestRetryAfterOnTheFakeClock: an HTTP-date Retry-After is read against
// the map's clock when the error is classified, so advancing a fake clock
// shortens the wait.
func TestRetryAfterOnTheFakeClock(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	clk := clock.NewFake(now)
	m := mapper.Default().WithOptions(mapper.WithClock(clk))
	h := http.Header{"Retry-After": {now.Add(2 * time.Minute).Format(http.TimeFormat)}}
	for _, wait := range []time.Duration{2 * time.Minute, 30 * time.Second, 0} {
		te := check(t, m.Classify("t", &headerErr{h: h, err: &statusErr{code: 503}}), want{taxonomy.KindFailed, taxonomy.CodeUpstreamUnavailable, true})
		if d := te.RetryAfter(); d != wait {
			t.Fatalf("at %v: RetryAfter() = %v, want %v", clk.Now(), d, wait)
		}
		clk.Advance(90 * time.Second)
	}
}
