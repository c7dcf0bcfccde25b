package taxonomy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
