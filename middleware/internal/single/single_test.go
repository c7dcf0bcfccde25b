package single_test

import (
	"context"
	"testing"

	"github.com/toolmw/toolmw/middleware/internal/single"
)

// TestMark: an unmarked context says so; a marked one names the first
// layer that marked it, also in contexts derived from it.
func TestMark(t *testing.T) {
	ctx := context.Background()
	if _, ok := single.By(ctx); ok {
		t.Fatal("a fresh context is marked")
	}
	m := single.Mark(ctx, "spend")
	if l, ok := single.By(m); !ok || l != "spend" {
		t.Fatalf("By = %q, %t", l, ok)
	}
	again := single.Mark(m, "runlimit")
	if again != m {
		t.Fatal("marking a marked context made a new one")
	}
	child, cancel := context.WithCancel(again)
	defer cancel()
	if l, ok := single.By(child); !ok || l != "spend" {
		t.Fatalf("derived: By = %q, %t", l, ok)
	}
}
