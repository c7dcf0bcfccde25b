package scrub

//go:generate go run ./internal/stdliberrs -o testdata/stdlib_errors.txt

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// readQuoted reads a file of Go-quoted strings, one a line, skipping
// blank lines and '#' comments.
func readQuoted(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := strconv.Unquote(line)
		if err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStdlibErrors checks that the error messages of the Go standard
// library (testdata/stdlib_errors.txt, made by go generate from every
// errors.New and fmt.Errorf in $GOROOT/src) come back unchanged.
func TestStdlibErrors(t *testing.T) {
	msgs := readQuoted(t, "testdata/stdlib_errors.txt")
	changed := 0
	for _, m := range msgs {
		if got := String(m); got != m {
			changed++
			t.Errorf("changed:\n  in:  %q\n  out: %q", m, got)
		}
	}
	t.Logf("%d of %d messages changed", changed, len(msgs))
}
