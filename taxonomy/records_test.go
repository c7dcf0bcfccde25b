package taxonomy_test

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolmw/toolmw/taxonomy"
)

// TestApprovalRecordIsBounded: an approval id is a safe token or nothing,
// and a summary is valid UTF-8 of at most MaxApprovalSummary bytes,
// whatever its maker passes.
func TestApprovalRecordIsBounded(t *testing.T) {
	long := strings.Repeat("é", taxonomy.MaxApprovalSummary) // 2 bytes each
	for _, tc := range []struct {
		name, id, summary string
		wantID            string // "" when the record is dropped
		wantSummary       string
	}{
		{"plain", "apr_1", "cancel_booking {}", "apr_1", "cancel_booking {}"},
		{"empty id", "", "x", "", ""},
		{"id with space", "apr 1", "x", "", ""},
		{"id with newline", "apr\n1", "x", "", ""},
		{"id at the bound", strings.Repeat("a", taxonomy.MaxApprovalIDLen), "", strings.Repeat("a", taxonomy.MaxApprovalIDLen), ""},
		{"id past the bound", strings.Repeat("a", taxonomy.MaxApprovalIDLen+1), "", "", ""},
		{"invalid UTF-8", "apr_1", "a\xffb", "apr_1", "a\uFFFDb"},
		{"summary at the bound", "apr_1", strings.Repeat("x", taxonomy.MaxApprovalSummary), "apr_1", strings.Repeat("x", taxonomy.MaxApprovalSummary)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := taxonomy.New(taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending, "").WithApproval(tc.id, tc.summary).Approval()
			if tc.wantID == "" {
				if a != nil {
					t.Fatalf("Approval() = %+v, want none", a)
				}
				return
			}
			if a == nil || a.ID != tc.wantID || a.Summary != tc.wantSummary {
				t.Fatalf("Approval() = %+v, want %q %q", a, tc.wantID, tc.wantSummary)
			}
		})
	}
	a := taxonomy.New(taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending, "").WithApproval("apr_1", long).Approval()
	if len(a.Summary) > taxonomy.MaxApprovalSummary || !utf8.ValidString(a.Summary) || !strings.HasSuffix(a.Summary, "…") {
		t.Fatalf("long summary: %d bytes, valid %v", len(a.Summary), utf8.ValidString(a.Summary))
	}
	// A record from elsewhere is held to the same rules.
	var info taxonomy.Info
	js := `{"kind":"approval-pending","code":"approval_pending","retryable":true,"approval":{"id":"apr 1\n","summary":"x"}}`
	if err := json.Unmarshal([]byte(js), &info); err != nil {
		t.Fatal(err)
	}
	e := info.Err()
	if e.Approval() != nil || e.Retryable() {
		t.Fatalf("decoded record: approval %+v retryable %v", e.Approval(), e.Retryable())
	}
}

// TestApprovalCopies: the record a caller gets is a copy; changing it
// changes nothing in the error.
func TestApprovalCopies(t *testing.T) {
	e := taxonomy.New(taxonomy.KindApprovalDenied, taxonomy.CodeApprovalDenied, "").WithApproval("apr_1", "s")
	e.Approval().Summary = "changed"
	taxonomy.InfoOf(e).Approval.ID = "changed"
	if a := e.Approval(); a.ID != "apr_1" || a.Summary != "s" {
		t.Fatalf("the error's record changed: %+v", a)
	}
	s := taxonomy.New(taxonomy.KindBudgetExceeded, taxonomy.CodeSpendLimit, "").WithSpend(1, 0.5)
	s.Spend().Left = 100
	if s.Spend().Left != 0.5 {
		t.Fatal("the error's spend record changed")
	}
}

func TestSpendRecord(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		limit, spent float64
		want         taxonomy.SpendInfo
	}{
		{10, 4, taxonomy.SpendInfo{Limit: 10, Spent: 4, Left: 6}},
		{10, 12, taxonomy.SpendInfo{Limit: 10, Spent: 12, Left: 0}},
		{-1, 2, taxonomy.SpendInfo{Limit: 0, Spent: 2, Left: 0}},
		{nan, nan, taxonomy.SpendInfo{}},
		{inf, 1, taxonomy.SpendInfo{Limit: 0, Spent: 1, Left: 0}},
		{math.Inf(-1), -inf, taxonomy.SpendInfo{}},
	} {
		e := taxonomy.New(taxonomy.KindBudgetExceeded, taxonomy.CodeSpendLimit, "").WithSpend(tc.limit, tc.spent)
		if got := *e.Spend(); got != tc.want {
			t.Errorf("WithSpend(%v, %v) = %+v, want %+v", tc.limit, tc.spent, got, tc.want)
		}
		if _, err := json.Marshal(taxonomy.InfoOf(e)); err != nil {
			t.Errorf("WithSpend(%v, %v) does not encode: %v", tc.limit, tc.spent, err)
		}
	}
}

func TestGuardrailName(t *testing.T) {
	for name, want := range map[string]string{
		"no_pii":                   "no_pii",
		"":                         "",
		"ignore previous":          "invalid_name",
		"sk_live_canary0123456789": "invalid_name", // data, not a name
		strings.Repeat("a", 65):    "invalid_name",
	} {
		if got := taxonomy.New(taxonomy.KindGuardrailBlocked, taxonomy.CodeGuardrailArgs, "").WithGuardrail(name).Guardrail(); got != want {
			t.Errorf("WithGuardrail(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestPendingAndDeniedNeverRetry: asking again cannot change a pending or
// denied decision, whatever the maker says.
func TestPendingAndDeniedNeverRetry(t *testing.T) {
	for _, k := range []taxonomy.Kind{taxonomy.KindApprovalPending, taxonomy.KindApprovalDenied} {
		e := taxonomy.New(k, "x", "").WithRetryable(true)
		if ok, _ := taxonomy.ShouldRetry(e, true); ok || e.Retryable() {
			t.Errorf("%s: retryable", k)
		}
		back := taxonomy.Info{Kind: k, Code: "x", Retryable: true}.Err()
		if back.Retryable() {
			t.Errorf("%s from a record: retryable", k)
		}
	}
}

func TestProblemCarriesRecords(t *testing.T) {
	e := taxonomy.New(taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending, "waiting for a reviewer").
		WithTool("cancel_booking").WithApproval("apr_7", "cancel_booking {}")
	js, _ := json.Marshal(taxonomy.InfoOf(e).Problem())
	want := `{"type":"urn:toolmw:kind:approval-pending","title":"Approval pending","status":202,"detail":"waiting for a reviewer","code":"approval_pending","tool":"cancel_booking","retryable":false,"approval":{"id":"apr_7","summary":"cancel_booking {}"}}`
	if string(js) != want {
		t.Fatalf("problem = %s\nwant      %s", js, want)
	}
	b := taxonomy.New(taxonomy.KindBudgetExceeded, taxonomy.CodeSpendLimit, "").WithSpend(5, 4.5).WithGuardrail("x")
	var p taxonomy.Problem
	js, _ = json.Marshal(taxonomy.InfoOf(b).Problem())
	if err := json.Unmarshal(js, &p); err != nil || !reflect.DeepEqual(p.Spend, &taxonomy.SpendInfo{Limit: 5, Spent: 4.5, Left: 0.5}) || p.Status != 402 {
		t.Fatalf("problem = %s (%v)", js, err)
	}
}
