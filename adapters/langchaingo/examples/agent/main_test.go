package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun runs the example: the first pass pauses for the approval, the
// second cancels the booking once and ends with the model's answer.
func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	want := `== first pass
model reads (call_1): <untrusted-data source="tool_refusal">flight_not_cancellable: this fare is non-refundable</untrusted-data>
model reads (call_2): <untrusted-data source="tool_result">clear, 14°C in Oslo</untrusted-data>
model reads (call_3): <untrusted-data source="tool_error">tool-not-found tool_not_found: no tool named rebook_flight</untrusted-data>
paused: cancel_booking waits for approval: cancel_booking {"booking":"BK-1042"}
== approved; second pass
model reads (call_1): <untrusted-data source="tool_refusal">flight_not_cancellable: this fare is non-refundable</untrusted-data>
model reads (call_2): <untrusted-data source="tool_result">clear, 14°C in Oslo</untrusted-data>
model reads (call_3): <untrusted-data source="tool_error">tool-not-found tool_not_found: no tool named rebook_flight</untrusted-data>
model reads (call_4): <untrusted-data source="tool_result">booking BK-1042 cancelled</untrusted-data>
answer: LH123 cannot be cancelled (non-refundable fare); Oslo is clear, 14°C; booking BK-1042 is cancelled.
weather service called 3 times, booking cancelled 1 time(s)
`
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestReadmeGlue: the README's Go block is this program's ask function,
// word for word, so the glue it counts compiles and runs (above); and the
// lines it marks as glue are at most five.
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
	start := strings.Index(string(src), "\nfunc ask(")
	end := strings.Index(string(src)[start+1:], "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("main.go has no ask function")
	}
	fn := string(src)[start+1 : start+1+end+3]
	if unmarked := stripGlueMarks(block); unmarked != fn {
		t.Fatalf("the README's block differs from main.go's ask:\n%s\nwant:\n%s", unmarked, fn)
	}
	if n := strings.Count(block, "// glue "); n == 0 || n > 5 {
		t.Errorf("the README marks %d glue lines, want 1 to 5", n)
	}
}

// stripGlueMarks removes the README's "// glue N: …" comments, and the
// space gofmt would not have put before them.
func stripGlueMarks(block string) string {
	lines := strings.Split(block, "\n")
	for i, l := range lines {
		if j := strings.Index(l, " // glue "); j >= 0 {
			lines[i] = strings.TrimRight(l[:j], " \t")
		}
	}
	return strings.Join(lines, "\n")
}
