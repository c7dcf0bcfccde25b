package scrub_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/testrig/sinkrig"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// TestCanaryNeighbours: the canaries with an invisible character or a
// look-alike blank glued before or after them, raw or escaped, in the
// message of a typed error (which the model is shown, scrubbed by the
// redact layer, and the DEBUG log line quotes, scrubbed), through the
// default stack with every sink on: nothing of them reaches the model, a
// log line at any level, a span, a metric or an event. Before, a
// zero-width space, BOM, word joiner or soft hyphen glued before a token
// hid it, and it reached the model and the DEBUG line.
func TestCanaryNeighbours(t *testing.T) {
	r := sinkrig.New(t)
	var message string
	tool, err := r.Stack.Wrap(toolmw.Spec{Name: "lookup"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Failure("ledger_rejected", message)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, noise := range []string{"\u200b", "\ufeff", "\u2060", "\u00ad", "\u200d", `\u200b`, "%E2%80%8B", "&#x200b;", "\u00a0", "\u3000"} {
		for _, secret := range canary.Values() {
			for _, m := range []string{
				"token" + noise + secret + " next",
				"see " + secret + noise + "word",
				"x" + noise + secret + noise + "y",
			} {
				message = m
				res, err := tool(toolmw.WithCallID(context.Background(), "call_1"), nil)
				if err == nil {
					t.Fatal("no error")
				}
				r.Tell(res, err)
			}
		}
	}
	sinks := r.Sinks(t)
	sinkrig.NoLeak(t, sinks)
	if !strings.Contains(sinks["model"], "[REDACTED:") {
		t.Fatal("the model was told nothing scrubbed")
	}
}
