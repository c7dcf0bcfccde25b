package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/logging"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// TestPartsDescribed: the line of a success whose result has parts says
// how many and describes them, on both backends, at the success level; a
// text result's line has neither field.
func TestPartsDescribed(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			var buf bytes.Buffer
			res := toolmw.Result{Content: "caption"}.WithParts([]toolmw.Part{toolmw.ImagePart(make([]byte, 100), "image/png")}...)
			for _, r := range []toolmw.Result{res, toolmw.Text("plain")} {
				tool := toolmw.MustWrap(toolmw.Spec{Name: "shoot"}, toolmwtest.Returning(r, nil),
					b.new(&buf, slog.LevelInfo, logging.WithSuccessLevel(slog.LevelInfo), logging.WithClock(newClock())))
				if _, err := tool(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
			}
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if len(lines) != 2 {
				t.Fatalf("lines:\n%s", buf.String())
			}
			var first, second map[string]any
			_ = json.Unmarshal([]byte(lines[0]), &first)
			_ = json.Unmarshal([]byte(lines[1]), &second)
			if first["parts"] != 2.0 || first["part_info"] != "text 7 bytes; image image/png 109 bytes" {
				t.Errorf("line %s", lines[0])
			}
			if _, ok := second["parts"]; ok {
				t.Errorf("a text result's line %s", lines[1])
			}
		})
	}
}

// TestPartsCanaries: no secret in a part's text, JSON, name, URI, MIME
// type, kind, bytes or annotations reaches a line, at any level.
func TestPartsCanaries(t *testing.T) {
	for _, b := range backends {
		var buf bytes.Buffer
		for _, secret := range canary.Values() {
			tool := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, toolmwtest.Returning(testutil.PartsWith(secret), nil),
				b.new(&buf, slog.LevelDebug, logging.WithClock(newClock())))
			if _, err := tool(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		}
		if !strings.Contains(buf.String(), "resource_link application/pdf") {
			t.Fatalf("%s: no descriptions:\n%s", b.name, buf.String())
		}
		if fam, found := canary.Find(buf.String()); fam != "" {
			t.Errorf("%s: a line holds %q of %s:\n%s", b.name, found, fam, buf.String())
		}
	}
}
