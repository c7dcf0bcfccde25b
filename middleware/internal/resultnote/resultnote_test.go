package resultnote

import (
	"context"
	"testing"
	"time"
)

type otherKey struct{}

// TestNote: a cache inside writes to the Note the outer layer watches,
// through any context derived from it; with no Note watched, Served does
// nothing; the zero time is a time served.
func TestNote(t *testing.T) {
	Served(context.Background(), time.Now()) // nobody watches
	ctx, n := Watch(context.Background())
	if _, ok := n.Made(); ok {
		t.Fatal("a new Note says a result was served")
	}
	inner, cancel := context.WithTimeout(context.WithValue(ctx, otherKey{}, 1), time.Hour)
	defer cancel()
	made := time.Date(2026, 1, 1, 12, 0, 0, 5, time.UTC)
	Served(inner, made)
	if got, ok := n.Made(); !ok || !got.Equal(made) {
		t.Fatalf("Made %v, %v; want %v", got, ok, made)
	}
	_, n2 := Watch(ctx)
	Served(ctx, time.Unix(0, 0))
	if _, ok := n2.Made(); ok {
		t.Fatal("an outer Note was written for an inner Watch")
	}
	if got, ok := n.Made(); !ok || got.UnixNano() > 1 {
		t.Fatalf("the Unix epoch served: %v, %v", got, ok)
	}
}
