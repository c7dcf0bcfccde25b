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
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	var out strings.Builder
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	want := "get_weather call_Xk3pQ9mZ2bT7vN1rL8sD4fHa: ok\n" +
		"get_weather call_R5tY8uI2oP4aS6dF9gH1jK3l: ok\n" +
		"Paris has light rain at 14°C; Tokyo is clear at 22°C.\n"
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
