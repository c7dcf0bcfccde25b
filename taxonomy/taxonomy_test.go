package taxonomy_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite testdata/codes.golden")

// golden renders every built-in kind and code with its meaning. The test
// fails when one disappears or changes meaning; adding one means running
// go test ./taxonomy -update and reviewing the diff.
func golden() string {
	var b strings.Builder
	b.WriteString("# Built-in kinds: kind | retryable by default | HTTP status | meaning\n")
	for _, k := range taxonomy.Kinds() {
		fmt.Fprintf(&b, "%s | %t | %d | %s\n", k.Kind, k.Retryable, k.Status, k.Meaning)
	}
	b.WriteString("\n# Built-in codes: kind | code | retryable | meaning | raised by\n")
	for _, c := range taxonomy.Codes() {
		kind := string(c.Kind)
		if kind == "" {
			kind = "(any)"
		}
		fmt.Fprintf(&b, "%s | %s | %s | %s | %s\n", kind, c.Code, c.Retryable, c.Meaning, c.RaisedBy)
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	got := golden()
	const path = "testdata/codes.golden"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("kinds or codes changed; a removed or repurposed code is a breaking change.\n--- got\n%s\n--- want\n%s", got, want)
	}
}

func TestCatalogueIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range taxonomy.Codes() {
		if !taxonomy.ValidCode(c.Code) {
			t.Errorf("code %q is not snake_case", c.Code)
		}
		if seen[c.Code] {
			t.Errorf("code %q listed twice", c.Code)
		}
		seen[c.Code] = true
		if c.Kind != "" && !slicesContainsKind(c.Kind) {
			t.Errorf("code %q names unknown kind %q", c.Code, c.Kind)
		}
	}
	for _, k := range taxonomy.Kinds() {
		if !taxonomy.ValidKind(k.Kind) {
			t.Errorf("kind %q is not kebab-case", k.Kind)
		}
	}
}

func slicesContainsKind(k taxonomy.Kind) bool {
	for _, ki := range taxonomy.Kinds() {
		if ki.Kind == k {
			return true
		}
	}
	return false
}

func TestValidCode(t *testing.T) {
	for _, tc := range []struct {
		code string
		ok   bool
	}{
		{"booking_not_cancellable", true},
		{"a", true},
		{"http2_reset", true},
		{"", false},
		{"Booking", false},
		{"booking-not", false},
		{"_lead", false},
		{"trail_", false},
		{"double__under", false},
		{"9lives", false},
		{"has space", false},
		{strings.Repeat("a", 65), false},
		// Data, not a reason: long words, many digits.
		{"error_" + strings.Repeat("x", 24), true},
		{"error_" + strings.Repeat("x", 25), false},
		{"http_5030", true},
		{"sk_live_canary0123456789", false},
		{"d41d8cd98f00b204e9800998ecf8427e", false},
	} {
		if got := taxonomy.ValidCode(tc.code); got != tc.ok {
			t.Errorf("ValidCode(%q) = %v, want %v", tc.code, got, tc.ok)
		}
	}
}

func TestConstructors(t *testing.T) {
	cause := errors.New("socket closed")
	for _, tc := range []struct {
		name      string
		err       *taxonomy.ToolError
		kind      taxonomy.Kind
		code      string
		retryable bool
	}{
		{"failure is permanent", taxonomy.Failure("ledger_rejected", "no"), taxonomy.KindFailed, "ledger_rejected", false},
		{"transient is retryable", taxonomy.Transient("supplier_down", "down"), taxonomy.KindFailed, "supplier_down", true},
		{"refusal never retryable", taxonomy.Refusal("booking_not_cancellable", "non-refundable").WithRetryable(true), taxonomy.KindRefused, "booking_not_cancellable", false},
		{"empty code", taxonomy.Transient("", "x"), taxonomy.KindFailed, taxonomy.CodeInvalidCode, true},
		{"malformed code", taxonomy.Refusal("Not-Snake", "x"), taxonomy.KindRefused, taxonomy.CodeInvalidCode, false},
		{"malformed kind", taxonomy.New("Bad Kind", "x", ""), taxonomy.KindFailed, "x", false},
		{"circuit open retryable by default", taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, ""), taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, true},
		{"timeout idempotent", taxonomy.Timeout(taxonomy.CodeTimeout, "", true), taxonomy.KindTimeout, taxonomy.CodeTimeout, true},
		{"timeout not idempotent", taxonomy.Timeout(taxonomy.CodeTimeout, "", false), taxonomy.KindTimeout, taxonomy.CodeTimeout, false},
		{"cancel cause makes it permanent", taxonomy.Transient("x", "").WithCause(fmt.Errorf("op: %w", context.Canceled)), taxonomy.KindFailed, "x", false},
		{"other cause keeps retryable", taxonomy.Transient("x", "").WithCause(cause), taxonomy.KindFailed, "x", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err.Kind() != tc.kind || tc.err.Code() != tc.code || tc.err.Retryable() != tc.retryable {
				t.Fatalf("got %s/%s retryable=%v, want %s/%s retryable=%v",
					tc.err.Kind(), tc.err.Code(), tc.err.Retryable(), tc.kind, tc.code, tc.retryable)
			}
		})
	}
}

func TestWithCopies(t *testing.T) {
	base := taxonomy.Transient("x", "m")
	_ = base.WithTool("a").WithRetryAfter(time.Second).WithMessage("other")
	if base.Tool() != "" || base.RetryAfter() != 0 || base.Message() != "m" {
		t.Fatal("With methods modified the receiver")
	}
	if got := base.WithRetryAfter(-time.Second).RetryAfter(); got != 0 {
		t.Fatalf("negative retry-after = %v", got)
	}
}

func TestErrorNeverPrintsCause(t *testing.T) {
	err := taxonomy.Transient("upstream_unavailable", "supplier is down").
		WithTool("book").WithCause(errors.New("dial tcp: token=ghp_secret"))
	if got, want := err.Error(), "book: tool-failed upstream_unavailable: supplier is down"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func TestSentinels(t *testing.T) {
	sentinels := map[taxonomy.Kind]error{
		taxonomy.KindFailed:               taxonomy.ErrFailed,
		taxonomy.KindRefused:              taxonomy.ErrRefused,
		taxonomy.KindTimeout:              taxonomy.ErrTimeout,
		taxonomy.KindCancelled:            taxonomy.ErrCancelled,
		taxonomy.KindNotPermitted:         taxonomy.ErrNotPermitted,
		taxonomy.KindNotFound:             taxonomy.ErrNotFound,
		taxonomy.KindArgsInvalid:          taxonomy.ErrArgsInvalid,
		taxonomy.KindResultInvalid:        taxonomy.ErrResultInvalid,
		taxonomy.KindCircuitOpen:          taxonomy.ErrCircuitOpen,
		taxonomy.KindRateLimited:          taxonomy.ErrRateLimited,
		taxonomy.KindRetryBudgetExhausted: taxonomy.ErrRetryBudgetExhausted,
		taxonomy.KindRunLimitExceeded:     taxonomy.ErrRunLimitExceeded,
		taxonomy.KindDefinitionInvalid:    taxonomy.ErrDefinitionInvalid,
		taxonomy.KindDuplicateTool:        taxonomy.ErrDuplicateTool,
		taxonomy.KindApprovalPending:      taxonomy.ErrApprovalPending,
		taxonomy.KindApprovalDenied:       taxonomy.ErrApprovalDenied,
		taxonomy.KindBudgetExceeded:       taxonomy.ErrBudgetExceeded,
		taxonomy.KindGuardrailBlocked:     taxonomy.ErrGuardrailBlocked,
	}
	if len(sentinels) != len(taxonomy.Kinds()) {
		t.Fatalf("%d sentinels for %d kinds", len(sentinels), len(taxonomy.Kinds()))
	}
	for kind := range sentinels {
		err := fmt.Errorf("outer: %w", taxonomy.New(kind, "some_code", ""))
		for other, os := range sentinels {
			if got := errors.Is(err, os); got != (other == kind) {
				t.Errorf("errors.Is(%s error, Err for %s) = %v", kind, other, got)
			}
		}
	}
}

func TestTimeoutMatchesDeadlineExceeded(t *testing.T) {
	err := fmt.Errorf("call: %w", taxonomy.Timeout(taxonomy.CodeTimeout, "", false))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("timeout does not match context.DeadlineExceeded")
	}
	if errors.Is(taxonomy.Failure("x", ""), context.DeadlineExceeded) {
		t.Fatal("failure matches context.DeadlineExceeded")
	}
	if !errors.Is(taxonomy.New(taxonomy.KindCancelled, taxonomy.CodeCancelled, ""), context.Canceled) {
		t.Fatal("cancellation does not match context.Canceled")
	}
}

func TestShouldRetry(t *testing.T) {
	plain := errors.New("boom")
	for _, tc := range []struct {
		name       string
		err        error
		idempotent bool
		retry      bool
		after      time.Duration
	}{
		{"nil", nil, true, false, 0},
		{"cancelled", context.Canceled, true, false, 0},
		{"wrapped cancelled", fmt.Errorf("x: %w", context.Canceled), true, false, 0},
		{"deadline", context.DeadlineExceeded, true, false, 0},
		{"untyped idempotent", plain, true, true, 0},
		{"untyped not idempotent", plain, false, false, 0},
		{"transient", taxonomy.Transient("x", "").WithRetryAfter(2 * time.Second), false, true, 2 * time.Second},
		{"permanent idempotent", taxonomy.Failure("x", ""), true, false, 0},
		{"refusal", taxonomy.Refusal("x", ""), true, false, 0},
		{"wrapped transient", fmt.Errorf("ctx: %w", taxonomy.Transient("x", "")), false, true, 0},
		{"joined", errors.Join(plain, taxonomy.Transient("x", "")), false, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			retry, after := taxonomy.ShouldRetry(tc.err, tc.idempotent)
			if retry != tc.retry || after != tc.after {
				t.Fatalf("ShouldRetry = %v, %v; want %v, %v", retry, after, tc.retry, tc.after)
			}
		})
	}
}

func TestOutcomeOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want taxonomy.Outcome
	}{
		{nil, taxonomy.OutcomeOK},
		{errors.New("x"), taxonomy.OutcomeFailed},
		{taxonomy.Refusal("x", ""), taxonomy.OutcomeRefused},
		{taxonomy.NotPermitted("x", ""), taxonomy.OutcomeNotPermitted},
		{taxonomy.Timeout("x", "", true), taxonomy.OutcomeTimedOut},
		{context.DeadlineExceeded, taxonomy.OutcomeTimedOut},
		{fmt.Errorf("x: %w", context.Canceled), taxonomy.OutcomeCancelled},
		{taxonomy.Failure("x", "").WithCause(context.Canceled), taxonomy.OutcomeCancelled},
		{taxonomy.New(taxonomy.KindCircuitOpen, "circuit_open", ""), taxonomy.OutcomeFailed},
		{taxonomy.New(taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending, ""), taxonomy.OutcomePending},
		{taxonomy.New(taxonomy.KindApprovalDenied, taxonomy.CodeApprovalDenied, ""), taxonomy.OutcomeDenied},
		{taxonomy.New(taxonomy.KindGuardrailBlocked, taxonomy.CodeGuardrailArgs, ""), taxonomy.OutcomeBlocked},
		{taxonomy.New(taxonomy.KindBudgetExceeded, taxonomy.CodeSpendLimit, ""), taxonomy.OutcomeFailed},
	} {
		if got := taxonomy.OutcomeOf(tc.err); got != tc.want {
			t.Errorf("OutcomeOf(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

func TestInfoOfUntyped(t *testing.T) {
	info := taxonomy.InfoOf(errors.New("password=hunter2 rejected"))
	if info.Kind != taxonomy.KindFailed || info.Code != taxonomy.CodeUnmappedFailure || info.Retryable || info.Message != "" {
		t.Fatalf("InfoOf(untyped) = %+v", info)
	}
	js, _ := json.Marshal(info)
	if strings.Contains(string(js), "hunter2") {
		t.Fatalf("untyped message leaked: %s", js)
	}
	if got := taxonomy.InfoOf(context.Canceled); got.Kind != taxonomy.KindCancelled {
		t.Fatalf("InfoOf(Canceled) = %+v", got)
	}
	if got := taxonomy.InfoOf(context.DeadlineExceeded); got.Kind != taxonomy.KindTimeout || got.Code != taxonomy.CodeDeadlineExceeded {
		t.Fatalf("InfoOf(DeadlineExceeded) = %+v", got)
	}
	if got := taxonomy.InfoOf(nil); !reflect.DeepEqual(got, taxonomy.Info{}) {
		t.Fatalf("InfoOf(nil) = %+v", got)
	}
}

// TestInfoRoundTrip sends an error of every kind through JSON and back.
func TestInfoRoundTrip(t *testing.T) {
	for _, k := range taxonomy.Kinds() {
		t.Run(string(k.Kind), func(t *testing.T) {
			orig := taxonomy.New(k.Kind, "some_reason", "what happened").
				WithTool("book_flight").
				WithRetryAfter(1500*time.Millisecond).
				WithFields(taxonomy.FieldError{Type: "missing", Loc: []any{"items", 2, "qty"}, Msg: "Field required"}).
				WithApproval("apr_0123", "cancel_booking {\"booking\":\"[REDACTED:email]\"}").
				WithSpend(10, 7.25).
				WithGuardrail("no_pii")
			js, err := json.Marshal(taxonomy.InfoOf(orig))
			if err != nil {
				t.Fatal(err)
			}
			var back taxonomy.Info
			if err := json.Unmarshal(js, &back); err != nil {
				t.Fatal(err)
			}
			got := back.Err()
			if got.Kind() != orig.Kind() || got.Code() != orig.Code() || got.Tool() != orig.Tool() ||
				got.Retryable() != orig.Retryable() || got.RetryAfter() != orig.RetryAfter() ||
				got.Message() != orig.Message() || !reflect.DeepEqual(got.Fields(), orig.Fields()) ||
				!reflect.DeepEqual(got.Approval(), orig.Approval()) || !reflect.DeepEqual(got.Spend(), orig.Spend()) ||
				got.Guardrail() != orig.Guardrail() {
				t.Fatalf("round trip changed the error:\n got %+v\nwant %+v (json %s)", taxonomy.InfoOf(got), taxonomy.InfoOf(orig), js)
			}
			if got.Error() != orig.Error() {
				t.Fatalf("Error() %q != %q", got.Error(), orig.Error())
			}
			for _, s := range []error{taxonomy.ErrRefused, taxonomy.ErrTimeout, context.DeadlineExceeded, context.Canceled} {
				if errors.Is(got, s) != errors.Is(orig, s) {
					t.Fatalf("errors.Is(%v) differs after the round trip", s)
				}
			}
		})
	}
}

func TestProblem(t *testing.T) {
	err := taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable").WithTool("cancel")
	js, _ := json.Marshal(taxonomy.InfoOf(err).Problem())
	want := `{"type":"urn:toolmw:kind:tool-refused","title":"Tool refused","status":422,"detail":"this fare is non-refundable","code":"booking_not_cancellable","tool":"cancel","retryable":false}`
	if string(js) != want {
		t.Fatalf("problem = %s\nwant      %s", js, want)
	}
	limited := taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeRateLimited, "").WithRetryAfter(2 * time.Second)
	js, _ = json.Marshal(taxonomy.InfoOf(limited).Problem())
	want = `{"type":"urn:toolmw:kind:rate-limited","title":"Rate limited","status":429,"code":"rate_limited","retryable":true,"retry_after":2}`
	if string(js) != want {
		t.Fatalf("problem = %s\nwant      %s", js, want)
	}
}

func TestSecondsJSON(t *testing.T) {
	var s taxonomy.Seconds
	if err := json.Unmarshal([]byte(`"x"`), &s); err == nil {
		t.Error(`Unmarshal("x") accepted`)
	}
	// Out-of-range values are held to [0, MaxRetryAfter], never refused:
	// a record from elsewhere always decodes.
	for in, want := range map[string]time.Duration{
		`-1`: 0, `1e300`: taxonomy.MaxRetryAfter, `99999999999999`: taxonomy.MaxRetryAfter,
		`0.0004`: 400 * time.Microsecond, `1.5`: 1500 * time.Millisecond,
	} {
		var s taxonomy.Seconds
		if err := json.Unmarshal([]byte(in), &s); err != nil || time.Duration(s) != want {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", in, time.Duration(s), err, want)
		}
	}
	var fe taxonomy.FieldError
	if err := json.Unmarshal([]byte(`{"type":"x","loc":[true],"msg":""}`), &fe); err == nil {
		t.Error("a boolean loc element was accepted")
	}
}

func TestFromJoinAndNil(t *testing.T) {
	if _, ok := taxonomy.From(nil); ok {
		t.Fatal("From(nil) found an error")
	}
	if _, ok := taxonomy.From(errors.Join(errors.New("a"), errors.New("b"))); ok {
		t.Fatal("From found a typed error in an untyped join")
	}
	wrapped := fmt.Errorf("a: %w", fmt.Errorf("b: %w", taxonomy.Failure("x", "")))
	if n := testing.AllocsPerRun(100, func() { _, _ = taxonomy.From(wrapped) }); n != 0 {
		t.Fatalf("From allocates %v times", n)
	}
}
