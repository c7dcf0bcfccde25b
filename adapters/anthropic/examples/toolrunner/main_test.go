package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRunOnReplay runs the example as a fresh machine would, with no key:
// against the replay, three calls at once then the answer.
func TestRunOnReplay(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	var out strings.Builder
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	want := `toolu_01A09q90qw90lq917835lq9a false <untrusted-data source="tool_result">Paris: light rain, 14°C</untrusted-data>
toolu_01B18r81rx81mr826744mr8b true Error: <untrusted-data source="tool_refusal">unknown_city: no forecast for that city</untrusted-data>
toolu_01C27s72sy72ns735653ns7c false <untrusted-data source="tool_result">Paris: 09:30</untrusted-data>
In Paris it is 09:30 with light rain at 14°C; there is no forecast for Atlantis.
`
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestReadme: the README's tool runner code is this program's ask, word
// for word (so it compiles and runs, above), and its glue — the lines
// beyond building the runner the SDK's way — is the five lines the README
// counts: New, its error check, the runner's tools, WithBetaRunner and End.
func TestReadme(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## The SDK's tool runner\n")
	_, block, ok2 := strings.Cut(section, "```go\n")
	block, _, ok3 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README has no tool runner section with a Go block")
	}
	start := strings.Index(string(src), "\nfunc ask(")
	end := strings.Index(string(src)[start+1:], "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("main.go has no ask function")
	}
	if fn := string(src)[start+1 : start+1+end+3]; block != fn {
		t.Fatalf("the README's code differs from main.go's ask:\n%s\nwant:\n%s", block, fn)
	}
	var glue []string
	for line := range strings.Lines(block) {
		if strings.Contains(line, "toolanthropic.") || strings.Contains(line, "tools.BetaTools()") || strings.Contains(line, "run.End(") ||
			strings.TrimSpace(line) == "if err != nil {" && len(glue) == 1 {
			glue = append(glue, strings.TrimSpace(line))
		}
	}
	if len(glue) != 5 {
		t.Errorf("the glue is %d lines, want the 5 the README counts: %q", len(glue), glue)
	}
}
