package events_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// TestPartsNeverInEvents: a success with parts emits nothing; a failure
// whose tool also returned parts (secrets in their text, JSON, names,
// URIs, MIME types, kinds and bytes) emits an event that says what the
// model was told, the error, and nothing of the parts.
func TestPartsNeverInEvents(t *testing.T) {
	var sink collector
	em := events.NewEmitter(&sink)
	ctx := context.Background()
	for _, secret := range secrets {
		parts := testutil.PartsWith(secret)
		ok := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, toolmwtest.Returning(parts, nil), em.Middleware())
		if _, err := ok(ctx, nil); err != nil {
			t.Fatal(err)
		}
		failing := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, toolmwtest.Returning(parts, taxonomy.Failure("upstream_unavailable", "down")), em.Middleware())
		if _, err := failing(ctx, nil); err == nil {
			t.Fatal("no error")
		}
	}
	if err := em.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := sink.all()
	if len(got) != len(secrets) {
		t.Fatalf("%d events for %d failures", len(got), len(secrets))
	}
	b, _ := json.Marshal(got)
	if fam, found := canary.Find(string(b)); fam != "" {
		t.Errorf("an event holds %q of %s: %s", found, fam, b)
	}
	if got[0].Told != `<untrusted-data source="tool_error">tool-failed upstream_unavailable: down</untrusted-data>` {
		t.Errorf("told %q", got[0].Told)
	}
}
