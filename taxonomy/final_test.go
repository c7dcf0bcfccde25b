package taxonomy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolmw/toolmw/taxonomy"
)

func TestFinal(t *testing.T) {
	transient := taxonomy.Transient("upstream_unavailable", "down").WithRetryAfter(time.Second)
	refusal := taxonomy.Refusal("booking_not_cancellable", "no")
	untyped := errors.New("socket closed")
	tests := []struct {
		name       string
		err        error
		idempotent bool
		same       bool // returned as it is: ShouldRetry already says no
		info       taxonomy.Info
	}{
		{"nil", nil, true, true, taxonomy.Info{}},
		{"cancelled", context.Canceled, true, true, taxonomy.Info{Kind: taxonomy.KindCancelled, Code: taxonomy.CodeCancelled}},
		{"refusal", refusal, true, true, taxonomy.InfoOf(refusal)},
		{"untyped, not idempotent", untyped, false, true, taxonomy.InfoOf(untyped)},
		{"transient", transient, false, false,
			taxonomy.Info{Kind: taxonomy.KindFailed, Code: "upstream_unavailable", Retryable: true, Final: true, RetryAfter: taxonomy.Seconds(time.Second), Message: "down"}},
		{"wrapped transient", fmt.Errorf("x: %w", transient), false, false,
			taxonomy.Info{Kind: taxonomy.KindFailed, Code: "upstream_unavailable", Retryable: true, Final: true, RetryAfter: taxonomy.Seconds(time.Second), Message: "down"}},
		{"untyped, idempotent", untyped, true, false,
			taxonomy.Info{Kind: taxonomy.KindFailed, Code: taxonomy.CodeUnmappedFailure, Retryable: true, Final: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := taxonomy.Final(tc.err, tc.idempotent)
			if tc.same && got != tc.err {
				t.Fatalf("Final(%v) = %v, want it unchanged", tc.err, got)
			}
			if again, _ := taxonomy.ShouldRetry(got, tc.idempotent); again {
				t.Fatal("ShouldRetry says retry for a final error")
			}
			// An untyped error stays reachable; a typed one is copied, its
			// record kept (below).
			if _, typed := taxonomy.From(tc.err); tc.err != nil && !typed && !errors.Is(got, tc.err) {
				t.Fatal("the original error is not in the chain")
			}
			info := taxonomy.InfoOf(got)
			if fmt.Sprint(info) != fmt.Sprint(tc.info) {
				t.Fatalf("InfoOf = %+v, want %+v", info, tc.info)
			}
			// The record crosses a process boundary with its finality.
			b, err := json.Marshal(info)
			if err != nil {
				t.Fatal(err)
			}
			var back taxonomy.Info
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if tc.err != nil {
				if again, _ := taxonomy.ShouldRetry(back.Err(), tc.idempotent); again {
					t.Fatalf("the decoded record %s says retry", b)
				}
			}
		})
	}
	if !taxonomy.IsFinal(taxonomy.Final(transient, false)) || taxonomy.IsFinal(transient) {
		t.Fatal("IsFinal disagrees with Final")
	}
	if transient.Final() {
		t.Fatal("Final modified its argument")
	}
}

// foreign is a taxonomy.Error made outside the package, saying anything.
type foreign struct {
	kind  taxonomy.Kind
	code  string
	tool  string
	after time.Duration
	retry bool
}

func (f foreign) Error() string             { return "foreign" }
func (f foreign) Unwrap() error             { return nil }
func (f foreign) Kind() taxonomy.Kind       { return f.kind }
func (f foreign) Code() string              { return f.code }
func (f foreign) Tool() string              { return f.tool }
func (f foreign) Retryable() bool           { return f.retry }
func (f foreign) RetryAfter() time.Duration { return f.after }

// TestInfoRoundTripsExtremes: every value an error can hold, made here or
// elsewhere, gives a record that encodes, decodes and rebuilds the same.
func TestInfoRoundTripsExtremes(t *testing.T) {
	const secret = "ghp_CANARYcanary0123456789abcdefCANARY01"
	durations := []time.Duration{-1 << 63, -time.Second, 0, time.Nanosecond, time.Millisecond, 1500 * time.Millisecond,
		taxonomy.MaxRetryAfter, taxonomy.MaxRetryAfter + 1, 9223372036 * time.Second, 1<<63 - 1}
	for _, d := range durations {
		for _, err := range []error{
			taxonomy.Transient("upstream_unavailable", "down").WithRetryAfter(d),
			foreign{kind: taxonomy.KindRateLimited, code: "upstream_rate_limited", after: d, retry: true},
			foreign{kind: taxonomy.Kind(secret), code: secret, tool: secret, after: d, retry: true},
			foreign{kind: taxonomy.KindRefused, code: "x", after: d, retry: true},
		} {
			info := taxonomy.InfoOf(err)
			if ra := time.Duration(info.RetryAfter); ra < 0 || ra > taxonomy.MaxRetryAfter {
				t.Fatalf("%v: retry_after %v outside [0, MaxRetryAfter]", d, ra)
			}
			b, jerr := json.Marshal(info)
			if jerr != nil {
				t.Fatal(jerr)
			}
			var back taxonomy.Info
			if jerr := json.Unmarshal(b, &back); jerr != nil {
				t.Fatalf("%v: %s does not decode: %v", d, b, jerr)
			}
			if fmt.Sprint(back) != fmt.Sprint(info) || fmt.Sprint(taxonomy.InfoOf(back.Err())) != fmt.Sprint(info) {
				t.Fatalf("%v: round trip %+v -> %s -> %+v", d, info, b, back)
			}
			if strings.Contains(string(b), "CANARY") {
				t.Fatalf("the foreign error's text reached the record: %s", b)
			}
			if info.Kind == taxonomy.KindRefused && info.Retryable {
				t.Fatal("a refusal from elsewhere is retryable")
			}
		}
	}
}
