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
	"github.com/toolmw/toolmw/taxonomy"
)

// secrets are planted canaries of several families.
var secrets = canary.Values()

// failures returns the ways a tool can fail carrying secret: untyped, as the
// cause of a typed error, wrapped around a typed error, in a typed error's
// own message and in a field error.
func failures(secret string) map[string]error {
	return map[string]error{
		"untyped":           fmt.Errorf("dial upstream with %s: refused", secret),
		"typed cause":       taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier is down").WithCause(fmt.Errorf("auth %s rejected", secret)),
		"wrapping typed":    fmt.Errorf("call with %s: %w", secret, taxonomy.Refusal("booking_not_cancellable", "non-refundable")),
		"typed own message": taxonomy.Failure("ledger_rejected", "ledger refused key "+secret),
		"field error":       taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "value_error", Loc: []any{secret}, Msg: secret}),
		"not permitted":     taxonomy.NotPermitted(taxonomy.CodeNotPermitted, "user "+secret+" may not"),
		"timeout":           taxonomy.Timeout(taxonomy.CodeTimeout, "slow for "+secret, true),
	}
}

// TestCanaryNothingSecretAboveDebug: with the logger at DEBUG, no line above
// DEBUG holds a secret or any error text; the debug lines do (so the
// canary reached the layer).
func TestCanaryNothingSecretAboveDebug(t *testing.T) {
	var buf bytes.Buffer
	clk := newClock()
	mw := logging.New(zerolog.New(&buf), logging.WithClock(clk))
	ctx := toolmw.WithCallID(context.Background(), "call_canary")
	for _, secret := range secrets {
		for name, ferr := range failures(secret) {
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
		for _, frag := range fragments(secret) {
			if strings.Contains(text, frag) {
				t.Errorf("a line above DEBUG holds %q of a planted secret", frag)
			}
		}
		if !strings.Contains(debug.String(), secret) {
			t.Errorf("the debug lines lack %q: the canary did not reach the layer", secret)
		}
	}
	for _, word := range []string{"refused key", "supplier is down", "dial upstream", "non-refundable", "panicked holding", "may not", "slow for", "auth "} {
		if strings.Contains(text, word) {
			t.Errorf("a line above DEBUG holds message text %q", word)
		}
	}
	if strings.Contains(buf.String(), "panicked holding") {
		t.Error("a panic value was logged")
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
