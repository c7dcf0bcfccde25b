package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const want = `paused: cancel_booking (call_3) waits for a person
reviewer approves cancel_booking {"booking":"BK-1042"}
assistant: No refund for this fare (120 EUR), so I cancelled BK-1042.
the model read:
  call_1 refund_booking: <untrusted-data source="tool_refusal">booking_not_refundable: this fare is non-refundable</untrusted-data>
  call_2 lookup_fare: <untrusted-data source="tool_result">BK-1042: 120 EUR</untrusted-data>
  call_3 cancel_booking: <untrusted-data source="tool_result">cancelled BK-1042</untrusted-data>
  call_4 rebook_booking: <untrusted-data source="tool_error">tool-not-found tool_not_found: no tool named rebook_booking</untrusted-data>
cancel_booking ran 1 time(s)
`

// TestRun runs the example as `go run` does: the run pauses for the
// cancellation, the reviewer approves, the run resumes and the
// cancellation runs once.
func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("the example printed\n%s\nwant\n%s", out.String(), want)
	}
}

// TestReadmeGlue: the README's Go block is this program's newAgent and
// review, word for word, so the README's code compiles and runs (above);
// the lines a user adds to an ADK program are marked "// +toolmw", and
// there are at most five.
func TestReadmeGlue(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```go\n")
	block, _, ok2 := strings.Cut(block, "```\n")
	if !ok || !ok2 {
		t.Fatal("the README has no Go block")
	}
	var fns []string
	for _, name := range []string{"newAgent", "review"} {
		start := strings.Index(string(src), "\n// "+name+" ")
		if start < 0 {
			t.Fatalf("main.go has no %s", name)
		}
		end := strings.Index(string(src)[start:], "\n}\n")
		fns = append(fns, string(src)[start+1:start+end+3])
	}
	if want := strings.Join(fns, "\n"); block != want {
		t.Fatalf("the README's code differs from main.go's:\n%s\nwant:\n%s", block, want)
	}
	if n := strings.Count(block, "// +toolmw"); n == 0 || n > 5 {
		t.Fatalf("the README marks %d glue lines, want 1 to 5", n)
	}
	if !strings.Contains(string(readme), "3 lines") {
		t.Error("the README does not state the count it shows")
	}
}
