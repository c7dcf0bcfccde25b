package guardrail_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/guardrail"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// TestResultStringsParts: a string check sees each string of a result's
// parts, decoded; never bytes.
func TestResultStringsParts(t *testing.T) {
	res := toolmw.Result{Content: "head"}.WithParts([]toolmw.Part{
		toolmw.TextPart("a text"),
		{Kind: toolmw.PartJSON, Text: `{"k\u0065y": ["v\u0061l", 4]}`},
		{Kind: toolmw.PartJSON, Text: `{not json`},
		toolmw.ResourceLinkPart("https://example.com/r", "link name", "text/plain"),
		toolmw.ResourcePart("file:///x", "text/plain", "embedded"),
		toolmw.ImagePart([]byte("bytes are not read"), "image/png"),
		toolmw.TextPart(""),
	}...)
	var mu sync.Mutex
	var seen []string
	mw := guardrail.New(guardrail.ResultStrings("look", func(_ context.Context, _ toolmw.Call, s string) error {
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
		return nil
	}))
	if _, err := mw(toolmwtest.Returning(res, nil))(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"head", "a text", "key", "val", "4", "{not json", "https://example.com/r", "link name", "file:///x", "embedded"}
	slices.Sort(want)
	slices.Sort(seen)
	if !slices.Equal(seen, want) {
		t.Errorf("seen %q, want %q", seen, want)
	}
	// Parts alone: no empty content is read.
	seen = nil
	if _, err := mw(toolmwtest.Returning(toolmw.Parts(toolmw.TextPart("only")), nil))(context.Background(), nil); err != nil || !slices.Equal(seen, []string{"only"}) {
		t.Errorf("seen %q %v", seen, err)
	}
}

// TestResultCheckParts: a result check sees JSON parts decoded, and the
// tool's result reaches the caller as it was.
func TestResultCheckParts(t *testing.T) {
	doc := `{"c\u0061rd": "4556"}`
	res := toolmw.Parts(toolmw.TextPart("t"), toolmw.Part{Kind: toolmw.PartJSON, Text: doc})
	var got toolmw.Result
	mw := guardrail.New(guardrail.Result("look", func(_ context.Context, _ toolmw.Call, r toolmw.Result) error {
		got = r
		return nil
	}))
	out, err := mw(toolmwtest.Returning(res, nil))(context.Background(), nil)
	if err != nil || got.Parts()[1].Text != `{"card":"4556"}` || got.Parts()[0].Text != "t" {
		t.Fatalf("seen %+v %v", got, err)
	}
	if out.Parts()[1].Text != doc || res.Parts()[1].Text != doc {
		t.Errorf("the result was changed: %+v", out)
	}
}

// TestResultStringsPartsBlock: a secret in any string of a part blocks
// the result, and the block carries nothing of it.
func TestResultStringsPartsBlock(t *testing.T) {
	for _, s := range canary.Secrets {
		for i, p := range testutil.PartsWith(s.Value).Parts() {
			if p.Kind == toolmw.PartImage || !p.Kind.Valid() || p.Annotations != nil {
				continue // the secret is in bytes, a kind, a MIME type or annotations: not strings a check reads
			}
			mw := guardrail.New(guardrail.ResultStrings("no_secrets", func(_ context.Context, _ toolmw.Call, str string) error {
				if strings.Contains(str, s.Body) {
					return errors.New("found")
				}
				return nil
			}))
			_, err := mw(toolmwtest.Returning(toolmw.Parts(p), nil))(context.Background(), nil)
			if te, ok := taxonomy.From(err); !ok || te.Code() != taxonomy.CodeGuardrailResult {
				t.Errorf("%s part %d (%s): %v", s.Family, i, p.Kind, err)
			}
			if canary.Leaked(err.Error()) != "" {
				t.Errorf("the block leaks: %v", err)
			}
		}
	}
}
