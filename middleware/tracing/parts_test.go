package tracing_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/tracing"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// TestPartsDescribed: a result with parts is described on its span, its
// count and the first MaxPartsDescribed parts' kinds, MIME types and
// sizes; a text result gets neither attribute.
func TestPartsDescribed(t *testing.T) {
	r := newRig(t)
	parts := []toolmw.Part{toolmw.ImagePart(make([]byte, 100), "image/png")}
	for range tracing.MaxPartsDescribed {
		parts = append(parts, toolmw.TextPart("hi"))
	}
	for _, res := range []toolmw.Result{toolmw.Text("caption").WithParts(parts...), toolmw.Text("plain")} {
		tool := toolmw.MustWrap(toolmw.Spec{Name: "shoot"}, toolmwtest.Returning(res, nil), tracing.New(r.opts()...))
		if _, err := tool(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	spans := r.spans.GetSpans()
	attrs := map[string]string{}
	for _, kv := range spans[0].Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if attrs[string(tracing.KeyResultParts)] != "10" {
		t.Errorf("parts %q", attrs[string(tracing.KeyResultParts)])
	}
	var descs []string
	for _, kv := range spans[0].Attributes {
		if kv.Key == tracing.KeyResultPartDescriptions {
			descs = kv.Value.AsStringSlice()
		}
	}
	want := []string{"text 7 bytes", "image image/png 109 bytes"}
	for range tracing.MaxPartsDescribed - 2 {
		want = append(want, "text 2 bytes")
	}
	if want = append(want, "+2 more"); !slices.Equal(descs, want) {
		t.Errorf("descriptions %q, want %q", descs, want)
	}
	for _, kv := range spans[1].Attributes {
		if strings.HasPrefix(string(kv.Key), "toolmw.result.") {
			t.Errorf("a text result has %s", kv.Key)
		}
	}
}

// TestPartsCanaries: no secret in a part's text, JSON, name, URI, MIME
// type, kind, bytes or annotations reaches a span.
func TestPartsCanaries(t *testing.T) {
	r := newRig(t)
	for _, secret := range secrets {
		tool := toolmw.MustWrap(toolmw.Spec{Name: "canary"}, toolmwtest.Returning(testutil.PartsWith(secret), nil), tracing.New(r.opts()...))
		if _, err := tool(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	var dump strings.Builder
	for _, s := range r.spans.GetSpans() {
		fmt.Fprintf(&dump, "%s %v\n", s.Name, s.Attributes)
	}
	if !strings.Contains(dump.String(), "resource_link application/pdf") {
		t.Fatalf("no descriptions:\n%s", dump.String())
	}
	if fam, found := canary.Find(dump.String()); fam != "" {
		t.Errorf("a span holds %q of %s:\n%s", found, fam, dump.String())
	}
}
