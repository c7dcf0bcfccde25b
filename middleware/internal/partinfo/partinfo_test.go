package partinfo

import (
	"slices"
	"testing"

	"github.com/toolmw/toolmw"
)

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
	c.Parts()[0].Data[0] = 9
	c.Parts()[1].Annotations.Audience[0] = "x"
	*c.Parts()[1].Annotations.Priority = 1
	c.Parts()[1].Text = "changed"
	if orig.Parts()[0].Data[0] != 1 || orig.Parts()[1].Annotations.Audience[0] != "user" || pr != 0.5 || orig.Parts()[1].Text != "t" {
		t.Errorf("the original changed: %+v", orig)
	}
	text := toolmw.Text("x")
	if got := Clone(text); got.Content != "x" || got.Parts() != nil {
		t.Errorf("Clone(text) = %+v", got)
	}
}
