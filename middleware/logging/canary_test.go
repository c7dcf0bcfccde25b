package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/logging"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// TestCanaryNothingSecretAtAnyLevel plants secrets in every way a tool can
// fail (toolmwtest/canary) and logs each failure at DEBUG, on both backends.
// No line at any level may hold a planted secret or any piece of one; no
// line above DEBUG may hold any error text; and the DEBUG detail line must
// show the error's text with each secret replaced by a placeholder (so the
// canary did reach the layer, and was scrubbed there).
func TestCanaryNothingSecretAtAnyLevel(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			levels := map[string]int{}
			for _, secret := range canary.Values() {
				for name, ferr := range canary.All(secret) {
					var buf bytes.Buffer
					clk := newClock()
					tool := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, failing(clk, 0, ferr),
						b.new(&buf, slog.LevelDebug, logging.WithClock(clk)), retryN(2))
					if _, err := tool(toolmw.WithCallID(context.Background(), "call_canary"), nil); err == nil {
						t.Fatalf("%s: no error", name)
					}
					checkCanaryLines(t, name, &buf, levels, reaches(ferr, secret))
				}

				var buf bytes.Buffer
				panicky := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
					panic(fmt.Errorf("panicked holding %s", secret))
				}, b.new(&buf, slog.LevelDebug, logging.WithClock(newClock())))
				func() {
					defer func() { _ = recover() }()
					_, _ = panicky(context.Background(), nil)
				}()
				checkCanaryLines(t, "panic", &buf, levels, false)
				if strings.Contains(buf.String(), "panicked holding") {
					t.Error("a panic value was logged")
				}
			}
			for _, lvl := range []string{"debug", "info", "warn", "error"} {
				if levels[lvl] == 0 {
					t.Errorf("levels %v: want lines at debug, info, warn and error", levels)
				}
			}
		})
	}
}

// reaches reports whether the text the detail line shows of err, its own
// and its cause's, holds secret.
func reaches(err error, secret string) bool {
	text := err.Error()
	if te, ok := taxonomy.From(err); ok && te.Unwrap() != nil {
		text += te.Unwrap().Error()
	}
	return strings.Contains(text, secret)
}

// checkCanaryLines checks the lines one failed call wrote, counting them by
// level in levels.
func checkCanaryLines(t *testing.T, name string, buf *bytes.Buffer, levels map[string]int, reached bool) {
	t.Helper()
	var debug strings.Builder
	for _, ln := range lines(t, buf) {
		lvl, _ := ln["level"].(string)
		levels[lvl]++
		js, _ := json.Marshal(ln)
		if family, found := canary.Find(string(js)); family != "" {
			t.Errorf("%s: a line at %s holds %q of a planted %s: %s", name, lvl, found, family, js)
		}
		if lvl == "debug" && ln["message"] == "tool call error detail" {
			debug.Write(js)
			continue
		}
		for _, word := range append(append(canary.HiddenText, canary.MessageText...), "panicked holding") {
			if strings.Contains(string(js), word) {
				t.Errorf("%s: a line at %s holds message text %q: %s", name, lvl, word, js)
			}
		}
	}
	if debug.Len() == 0 {
		t.Errorf("%s: no detail line at DEBUG", name)
	}
	if reached && !strings.Contains(debug.String(), "[REDACTED:") {
		t.Errorf("%s: the detail line shows no placeholder: the canary did not reach the layer: %s", name, debug.String())
	}
}
