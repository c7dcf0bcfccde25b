package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/canary"
	"github.com/toolmw/toolmw/middleware/logging"
)

// secrets are planted canaries of several families.
var secrets = canary.Values()

// TestCanaryNothingSecretAboveDebug: with the logger at DEBUG, no line above
// DEBUG holds a secret or any error text; the debug lines do (so the
// canary reached the layer).
func TestCanaryNothingSecretAboveDebug(t *testing.T) {
	var buf bytes.Buffer
	clk := newClock()
	mw := logging.New(zerolog.New(&buf), logging.WithClock(clk))
	ctx := toolmw.WithCallID(context.Background(), "call_canary")
	for _, secret := range secrets {
		for name, ferr := range canary.All(secret) {
			tool := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, failing(clk, 0, ferr), mw, retryN(2))
			if _, err := tool(ctx, nil); err == nil {
				t.Fatalf("%s: no error", name)
			}
		}
		panicky := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			panic(fmt.Errorf("panicked holding %s", secret))
		}, mw)
		func() {
			defer func() { _ = recover() }()
			_, _ = panicky(ctx, nil)
		}()
	}

	var above, debug strings.Builder
	levels := map[string]int{}
	for _, ln := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(ln), &m); err != nil {
			t.Fatal(err)
		}
		levels[fmt.Sprint(m["level"])]++
		if m["level"] == "debug" {
			debug.WriteString(ln + "\n")
		} else {
			above.WriteString(ln + "\n")
		}
	}
	if levels["info"] == 0 || levels["warn"] == 0 || levels["error"] == 0 {
		t.Fatalf("levels %v: want lines at info, warn and error", levels)
	}
	text := above.String()
	for _, secret := range secrets {
		for _, frag := range canary.Fragments(secret) {
			if strings.Contains(text, frag) {
				t.Errorf("a line above DEBUG holds %q of a planted secret", frag)
			}
		}
		if !strings.Contains(debug.String(), secret) {
			t.Errorf("the debug lines lack %q: the canary did not reach the layer", secret)
		}
	}
	for _, word := range append(append(canary.HiddenText, canary.MessageText...), "panicked holding") {
		if strings.Contains(text, word) {
			t.Errorf("a line above DEBUG holds message text %q", word)
		}
	}
	if strings.Contains(buf.String(), "panicked holding") {
		t.Error("a panic value was logged")
	}
}
