package toolmwtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
)

// DecodeJSON parses a request body, keeping numbers as they were written.
func DecodeJSON(t testing.TB, body []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("request body is not a JSON object: %v\n%s", err, body)
	}
	return m
}

// SameJSON reports whether two JSON documents are equal as values.
func SameJSON(t testing.TB, a, b any) bool {
	t.Helper()
	norm := func(v any) any {
		raw, ok := v.(json.RawMessage)
		if !ok {
			var err error
			if raw, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var out any
		if err := dec.Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	x, _ := json.Marshal(norm(a))
	y, _ := json.Marshal(norm(b))
	return bytes.Equal(x, y)
}

// NoSecrets fails t when a piece of one of secrets (the whole, or its last
// two thirds) appears in any body once echo has removed what the body may
// carry back of the model's own output (a test may plant a secret in the
// model's arguments, to see that no answer repeats it).
func NoSecrets(t testing.TB, bodies [][]byte, secrets []string, echo func(testing.TB, []byte) []byte) {
	t.Helper()
	for i, b := range bodies {
		b = echo(t, b)
		for _, s := range secrets {
			for _, part := range []string{s, s[len(s)/3:]} {
				if bytes.Contains(b, []byte(part)) {
					t.Errorf("request %d carries a planted secret (%.12s…)", i+1, s)
				}
			}
		}
	}
}

// Envelope parses a tool answer's text, failing t when it is not exactly
// one ForModel envelope.
func Envelope(t testing.TB, text string) (source, content string) {
	t.Helper()
	source, content, ok := toolmw.ParseEnvelope(text)
	if !ok {
		t.Fatalf("not a ForModel envelope: %q", text)
	}
	return source, content
}

// Barrier lets n goroutines proceed only once all n have arrived, so a
// test proves they were in flight at the same time. A test whose calls do
// not overlap fails after a guard of 20 s instead of hanging: a deadlock
// guard, not a timing assertion. It is safe for concurrent use.
type Barrier struct {
	mu      sync.Mutex
	n, in   int
	maxIn   int
	arrived chan struct{}
}

// Guard is how long Wait waits for the others before it gives up.
const Guard = 20 * time.Second

// ErrNotConcurrent is what Wait returns when the guard ran out.
var ErrNotConcurrent = errors.New("the calls did not run at the same time")

// NewBarrier returns a Barrier for n goroutines.
func NewBarrier(n int) *Barrier { return &Barrier{n: n, arrived: make(chan struct{})} }

// Wait arrives at the barrier and waits for the others, ctx or the guard.
func (b *Barrier) Wait(ctx context.Context) error {
	b.mu.Lock()
	b.in++
	b.maxIn = max(b.maxIn, b.in)
	if b.in == b.n {
		close(b.arrived)
	}
	b.mu.Unlock()
	select {
	case <-b.arrived:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(Guard):
		return ErrNotConcurrent
	}
}

// Most returns how many goroutines were at the barrier at once, at most.
func (b *Barrier) Most() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.maxIn
}

// Leave marks a goroutine gone from the barrier.
func (b *Barrier) Leave() {
	b.mu.Lock()
	b.in--
	b.mu.Unlock()
}
