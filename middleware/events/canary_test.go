package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// secrets are planted canaries of several families.
var secrets = canary.Values()

func TestCanaryNoSecretInEvents(t *testing.T) {
	var sink collector
	em := events.NewEmitter(&sink)
	ctx := toolmw.WithCallID(context.Background(), "call_canary")
	calls := 0
	for _, secret := range secrets {
		for name, ferr := range canary.Hidden(secret) {
			tool := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, returning(ferr), em.Middleware(), testutil.RetryN(2))
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
		for _, frag := range canary.Fragments(secret) {
			if strings.Contains(text, frag) {
				t.Errorf("an event holds %q of a planted secret", frag)
			}
		}
	}
	for _, word := range append(canary.HiddenText, "panicked holding") {
		if strings.Contains(text, word) {
			t.Errorf("an event holds error text %q", word)
		}
	}
}
