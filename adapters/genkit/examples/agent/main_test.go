package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests with Genkit in its production environment
// whatever the shell says: with GENKIT_ENV=dev, genkit.Init would start
// the reflection server (and write its runtime file), and a telemetry
// server variable would send traces out. goleak then checks that nothing
// is left running, with no exceptions.
func TestMain(m *testing.M) {
	for _, v := range []string{"GENKIT_ENV", "GENKIT_TELEMETRY_SERVER", "GENKIT_REFLECTION_V2_SERVER", "GENKIT_ENABLE_REALTIME_TELEMETRY"} {
		os.Unsetenv(v)
	}
	goleak.VerifyTestMain(m)
}

// TestRun runs the example as a fresh machine would: it pauses for the
// approval, resumes from the saved file, cancels once and answers.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out strings.Builder
	if err := run(ctx, &out, filepath.Join(t.TempDir(), "history.json")); err != nil {
		t.Fatal(err)
	}
	want := `paused: cancel_booking waits for approval; the reviewer approves
cancelled 1 time(s)
From the tools:
call_1: Paris: light rain, 14°C
call_2: unknown_city: no forecast for that city
call_3: cancelled BK-1042
`
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestReadme: the agent function the module's README shows is this
// program's, word for word, and the glue the README counts — the lines a
// user adds to a genkit.Generate of their own, one numbered list for a
// box's tools, one for their own Genkit tools — is at most 5 lines each.
func TestReadme(t *testing.T) {
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
	start := strings.Index(string(src), "\nfunc agent(")
	end := strings.Index(string(src)[start+1:], "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("main.go has no agent function")
	}
	if fn := string(src)[start+1 : start+1+end+3]; block != fn {
		t.Fatalf("the README's agent differs from main.go's:\n%s\nwant:\n%s", block, fn)
	}
	_, glue, ok := strings.Cut(string(readme), "### The glue, counted\n")
	glue, _, _ = strings.Cut(glue, "\n## ")
	lists, most := 0, 0
	for _, line := range strings.Split(glue, "\n") {
		n, _, _ := strings.Cut(line, ". `")
		if len(n) != 1 || n[0] < '1' || n[0] > '9' {
			continue
		}
		if n == "1" {
			lists++
		}
		most = max(most, int(n[0]-'0'))
	}
	if !ok || lists != 2 || most > 5 {
		t.Errorf("the README's glue: %d counted lists, the longest %d lines; want 2 lists of at most 5", lists, most)
	}
}
