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
// against the replay, two calls then the answer.
func TestRunOnReplay(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	var out, logs strings.Builder
	if err := run(context.Background(), &out, &logs); err != nil {
		t.Fatal(err)
	}
	if want := "Paris has light rain at 14°C; Tokyo is clear at 22°C.\n"; out.String() != want {
		t.Fatalf("output %q, want %q", out.String(), want)
	}
	// One log line per call, each with the model's id and outcome ok.
	for _, id := range []string{"toolu_01A09q90qw90lq917835lq9a", "toolu_01B18r81rx81mr826744mr8b"} {
		if !strings.Contains(logs.String(), "tool=get_weather call_id="+id+" outcome=ok") {
			t.Errorf("no log line for call %s:\n%s", id, logs.String())
		}
	}
}

// TestReadmeLoop: the loop the module's README shows is this program's
// loop, word for word, so the README's code compiles and runs (above).
func TestReadmeLoop(t *testing.T) {
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
	start := strings.Index(string(src), "\nfunc loop(")
	end := strings.Index(string(src)[start+1:], "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("main.go has no loop function")
	}
	if fn := string(src)[start+1 : start+1+end+3]; block != fn {
		t.Fatalf("the README's loop differs from main.go's:\n%s\nwant:\n%s", block, fn)
	}
	if n := strings.Count(block, "\n"); n >= 40 {
		t.Errorf("the README's loop takes %d lines, want under 40", n)
	}
}
