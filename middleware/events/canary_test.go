package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/canary"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/taxonomy"
)

// secrets are planted canaries of several families.
var secrets = canary.Values()

// failures returns the ways a tool can fail carrying secret where the model
// is not shown it: untyped, as the cause of a typed error, wrapped around a
// typed error. (A typed error's own message is shown to the model; the
// redact layer scrubs it.)
func failures(secret string) map[string]error {
	return map[string]error{
		"untyped":          fmt.Errorf("dial upstream with %s: refused", secret),
		"typed cause":      taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier is down").WithCause(fmt.Errorf("auth %s rejected", secret)),
		"wrapping typed":   fmt.Errorf("call with %s: %w", secret, taxonomy.Refusal("booking_not_cancellable", "non-refundable")),
		"timeout cause":    taxonomy.Timeout(taxonomy.CodeTimeout, "too slow", true).WithCause(fmt.Errorf("waited on %s", secret)),
		"wrapped untyped":  fmt.Errorf("outer: %w", fmt.Errorf("inner %s", secret)),
		"cancelled, cause": fmt.Errorf("stopped while holding %s: %w", secret, context.Canceled),
	}
}

func TestCanaryNoSecretInEvents(t *testing.T) {
	var sink collector
	em := events.NewEmitter(&sink)
	ctx := toolmw.WithCallID(context.Background(), "call_canary")
	calls := 0
	for _, secret := range secrets {
		for name, ferr := range failures(secret) {
			tool := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, returning(ferr), em.Middleware(), retryN(2))
			if _, err := tool(ctx, nil); err == nil {
				t.Fatalf("%s: no error", name)
			}
			calls++
		}
		panicky := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			panic(fmt.Errorf("panicked holding %s", secret))
		}, em.Middleware())
		func() {
			defer func() { _ = recover() }()
			_, _ = panicky(ctx, nil)
		}()
		calls++
	}
	flush(t, em)
	got := sink.all()
	if len(got) != calls {
		t.Fatalf("%d events for %d calls", len(got), calls)
	}
	var dump strings.Builder
	for _, e := range got {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		dump.Write(b)
		fmt.Fprintf(&dump, "\n%+v\n", e)
	}
	text := dump.String()
	for _, want := range []string{"unmapped_failure", "upstream_unavailable", "booking_not_cancellable", "tool_panicked", "call_canary", "untrusted-data"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the events lack %q", want)
		}
	}
	for _, secret := range secrets {
		for _, frag := range fragments(secret) {
			if strings.Contains(text, frag) {
				t.Errorf("an event holds %q of a planted secret", frag)
			}
		}
	}
	for _, word := range []string{"dial upstream", "auth ", "call with", "waited on", "inner", "stopped while", "panicked holding"} {
		if strings.Contains(text, word) {
			t.Errorf("an event holds error text %q", word)
		}
	}
}

// fragments returns the secret and pieces of it distinctive enough that
// finding one means the secret leaked, even cut.
func fragments(secret string) []string {
	out := []string{secret}
	if len(secret) > 16 {
		out = append(out, secret[len(secret)-12:], secret[4:16])
	}
	return out
}
