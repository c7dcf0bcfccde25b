package main

import (
	"context"
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
	var out strings.Builder
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	want := "get_weather toolu_01A09q90qw90lq917835lq9a: ok\n" +
		"get_weather toolu_01B18r81rx81mr826744mr8b: ok\n" +
		"Paris has light rain at 14°C; Tokyo is clear at 22°C.\n"
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
