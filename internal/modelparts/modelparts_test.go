package modelparts

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
)

var png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// TestText: a text Result, and parts that are all text or descriptors, are
// not media: the caller sends ForModel's text.
func TestText(t *testing.T) {
	tr := NewTurn(Limits{Image: 1 << 20, Document: 1 << 20, Total: 1 << 20})
	for name, res := range map[string]toolmw.Result{
		"text":     toolmw.Text("hello"),
		"json":     {Content: `{"a":1}`, JSON: true},
		"empty":    {},
		"no media": toolmw.Parts(toolmw.TextPart("a"), toolmw.AudioPart([]byte("RIFF"), "audio/wav")),
	} {
		if _, ok := tr.Blocks(res); ok {
			t.Errorf("%s: media, want none", name)
		}
	}
}

// TestBounds: what the API does not take, or what is past its limits, is a
// descriptor; the turn's total counts across results.
func TestBounds(t *testing.T) {
	enc := base64.StdEncoding.EncodedLen(len(png))
	cases := []struct {
		name   string
		limits Limits
		parts  []toolmw.Part
		kinds  []Kind
	}{
		{"image fits", Limits{Image: enc, Total: enc}, []toolmw.Part{toolmw.ImagePart(png, "IMAGE/PNG")}, []Kind{Image}},
		{"image over its limit", Limits{Image: enc - 1, Document: enc, Total: 1 << 20}, []toolmw.Part{toolmw.ImagePart(png, "image/png")}, []Kind{Text}},
		{"second image over the total", Limits{Image: enc, Total: enc + 4}, []toolmw.Part{toolmw.ImagePart(png, "image/png"), toolmw.ImagePart(png, "image/png")}, []Kind{Image, Text}},
		{"bytes not the type", Limits{Image: 1 << 20, Total: 1 << 20}, []toolmw.Part{toolmw.ImagePart(png, "image/jpeg")}, []Kind{Text}},
		{"no type", Limits{Image: 1 << 20, Total: 1 << 20}, []toolmw.Part{toolmw.ImagePart(png, "")}, []Kind{Text}},
		{"bad type", Limits{Image: 1 << 20, Total: 1 << 20}, []toolmw.Part{toolmw.ImagePart(png, "image/png; x")}, []Kind{Text}},
		{"plain text not taken", Limits{Document: 1 << 20, Total: 1 << 20}, []toolmw.Part{toolmw.FilePart("a.txt", "text/plain", []byte("hi"))}, []Kind{Text}},
		{"plain text taken", Limits{Document: 1 << 20, Total: 1 << 20, PlainText: true}, []toolmw.Part{toolmw.FilePart("a.txt", "text/plain", []byte("hi"))}, []Kind{PlainText}},
		{"plain text not UTF-8", Limits{Document: 1 << 20, Total: 1 << 20, PlainText: true}, []toolmw.Part{toolmw.FilePart("a.txt", "text/plain", []byte("\xff\xfe"))}, []Kind{Text}},
		{"a PDF that is not", Limits{Document: 1 << 20, Total: 1 << 20}, []toolmw.Part{toolmw.FilePart("a.pdf", "application/pdf", png)}, []Kind{Text}},
		{"an embedded image resource", Limits{Image: 1 << 20, Total: 1 << 20}, []toolmw.Part{toolmw.BlobResourcePart("x://a", "image/png", png)}, []Kind{Text}},
	}
	for _, c := range cases {
		tr := NewTurn(c.limits)
		blocks, _ := tr.Blocks(toolmw.Parts(c.parts...))
		for i, b := range blocks {
			if b.Kind != c.kinds[i] {
				t.Errorf("%s: block %d of kind %d, want %d", c.name, i, b.Kind, c.kinds[i])
			}
		}
	}
	// The total spans a turn's results.
	tr := NewTurn(Limits{Image: enc, Total: enc})
	if _, ok := tr.Blocks(toolmw.Parts(toolmw.ImagePart(png, "image/png"))); !ok {
		t.Fatal("the first image is not media")
	}
	if _, ok := tr.Blocks(toolmw.Parts(toolmw.ImagePart(png, "image/png"))); ok {
		t.Error("the second result's image is media past the turn's total")
	}
}

// TestURLs: only absolute http and https URLs without credentials are
// sent; everything else is a descriptor.
func TestURLs(t *testing.T) {
	for uri, ok := range map[string]bool{
		"https://cdn.example.com/a.png":        true,
		"HTTP://cdn.example.com/a.png":         true,
		"https://u:p@cdn.example.com/a.png":    false,
		"file:///etc/passwd":                   false,
		"data:image/png;base64,AAAA":           false,
		"/relative.png":                        false,
		"javascript:alert(1)":                  false,
		"https://" + strings.Repeat("a", 2048): false,
	} {
		tr := NewTurn(Limits{Image: 1 << 20, Total: 1 << 20})
		blocks, got := tr.Blocks(toolmw.Parts(toolmw.Part{Kind: toolmw.PartImage, URI: uri}))
		if got != ok || ok && blocks[0].URL != uri {
			t.Errorf("%.40s: media %v (%+v), want %v", uri, got, blocks, ok)
		}
	}
}

func TestCleanName(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf":             "report.pdf",
		"../../etc/passwd":       "passwd",
		`C:\Users\x\q3.pdf`:      "q3.pdf",
		"a\x00b\nc\u200b.pdf":    "abc.pdf",
		"tag\U000E0041s.pdf":     "tags.pdf",
		"evil\u202Efdp.exe":      "evilfdp.exe",
		strings.Repeat("é", 100): strings.Repeat("é", 64),
		"  spaced  ":             "spaced",
	} {
		if got := CleanName(in); got != want {
			t.Errorf("CleanName(%q) = %q, want %q", in, got, want)
		}
	}
}
