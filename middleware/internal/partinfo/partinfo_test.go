package partinfo

import (
	"slices"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

func TestDescribe(t *testing.T) {
	tests := []struct {
		p    toolmw.Part
		want string
	}{
		{toolmw.ImagePart([]byte("abc"), "image/png"), "image image/png 12 bytes"},
		{toolmw.TextPart("hello"), "text 5 bytes"},
		{toolmw.Part{Kind: "secret-kind", Text: "x"}, "unknown 1 bytes"},
		{toolmw.Part{Kind: toolmw.PartFile, MIMEType: "text/csv; charset=utf-8"}, "file text/csv 23 bytes"},
		{toolmw.Part{Kind: toolmw.PartFile, MIMEType: "not a type"}, "file invalid-mime 10 bytes"},
		{toolmw.Part{Kind: toolmw.PartFile, MIMEType: "image/"}, "file invalid-mime 6 bytes"},
	}
	for _, tt := range tests {
		if got := Describe(tt.p); got != tt.want {
			t.Errorf("Describe(%+v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}

// TestDescribeCanaries: a secret the tool put in a kind, a MIME type, a
// name or a URI never reaches a description.
func TestDescribeCanaries(t *testing.T) {
	for _, s := range canary.Secrets {
		for _, p := range []toolmw.Part{
			{Kind: toolmw.PartKind(s.Value)},
			{Kind: toolmw.PartImage, MIMEType: "image/" + s.Value},
			{Kind: toolmw.PartImage, MIMEType: s.Value},
			{Kind: toolmw.PartImage, MIMEType: "image/png; name=" + s.Value},
			toolmw.ResourceLinkPart("https://example.com/?k="+s.Value, s.Value, "text/plain"),
		} {
			if fam, found := canary.Find(Describe(p)); fam != "" {
				t.Errorf("%s: %q leaked in %q", s.Family, found, Describe(p))
			}
		}
	}
}

func TestList(t *testing.T) {
	parts := []toolmw.Part{toolmw.TextPart("a"), toolmw.TextPart("bb"), toolmw.TextPart("ccc")}
	if got := List(parts, 2); !slices.Equal(got, []string{"text 1 bytes", "text 2 bytes", "+1 more"}) {
		t.Errorf("List = %q", got)
	}
	if got := List(parts, 5); len(got) != 3 {
		t.Errorf("List = %q", got)
	}
	if got := List(nil, 5); len(got) != 0 {
		t.Errorf("List(nil) = %q", got)
	}
}

func TestClone(t *testing.T) {
	pr := 0.5
	orig := toolmw.Parts(toolmw.ImagePart([]byte{1, 2}, "image/png"),
		toolmw.Part{Kind: toolmw.PartText, Text: "t", Annotations: &toolmw.Annotations{Audience: []string{"user"}, Priority: &pr}})
	c := Clone(orig)
	c.Parts[0].Data[0] = 9
	c.Parts[1].Annotations.Audience[0] = "x"
	*c.Parts[1].Annotations.Priority = 1
	c.Parts[1].Text = "changed"
	if orig.Parts[0].Data[0] != 1 || orig.Parts[1].Annotations.Audience[0] != "user" || pr != 0.5 || orig.Parts[1].Text != "t" {
		t.Errorf("the original changed: %+v", orig)
	}
	text := toolmw.Text("x")
	if got := Clone(text); got.Content != "x" || got.Parts != nil {
		t.Errorf("Clone(text) = %+v", got)
	}
}
