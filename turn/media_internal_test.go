package turn

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
	m := NewMedia(MediaLimits{Image: 1 << 20, Document: 1 << 20, Total: 1 << 20})
	for name, res := range map[string]toolmw.Result{
		"text":     toolmw.Text("hello"),
		"json":     {Content: `{"a":1}`, JSON: true},
		"empty":    {},
		"no media": toolmw.Parts(toolmw.TextPart("a"), toolmw.AudioPart([]byte("RIFF"), "audio/wav")),
	} {
		if _, ok := m.Blocks(res); ok {
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
		limits MediaLimits
		parts  []toolmw.Part
		kinds  []BlockKind
	}{
		{"image fits", MediaLimits{Image: enc, Total: enc}, []toolmw.Part{toolmw.ImagePart(png, "IMAGE/PNG")}, []BlockKind{BlockImage}},
		{"image over its limit", MediaLimits{Image: enc - 1, Document: enc, Total: 1 << 20}, []toolmw.Part{toolmw.ImagePart(png, "image/png")}, []BlockKind{BlockText}},
		{"second image over the total", MediaLimits{Image: enc, Total: enc + 4}, []toolmw.Part{toolmw.ImagePart(png, "image/png"), toolmw.ImagePart(png, "image/png")}, []BlockKind{BlockImage, BlockText}},
		{"bytes not the type", MediaLimits{Image: 1 << 20, Total: 1 << 20}, []toolmw.Part{toolmw.ImagePart(png, "image/jpeg")}, []BlockKind{BlockText}},
		{"no type", MediaLimits{Image: 1 << 20, Total: 1 << 20}, []toolmw.Part{toolmw.ImagePart(png, "")}, []BlockKind{BlockText}},
		{"bad type", MediaLimits{Image: 1 << 20, Total: 1 << 20}, []toolmw.Part{toolmw.ImagePart(png, "image/png; x")}, []BlockKind{BlockText}},
		{"plain text not taken", MediaLimits{Document: 1 << 20, Total: 1 << 20}, []toolmw.Part{toolmw.FilePart("a.txt", "text/plain", []byte("hi"))}, []BlockKind{BlockText}},
		{"plain text taken", MediaLimits{Document: 1 << 20, Total: 1 << 20, PlainText: true}, []toolmw.Part{toolmw.FilePart("a.txt", "text/plain", []byte("hi"))}, []BlockKind{BlockPlainText}},
		{"plain text not UTF-8", MediaLimits{Document: 1 << 20, Total: 1 << 20, PlainText: true}, []toolmw.Part{toolmw.FilePart("a.txt", "text/plain", []byte("\xff\xfe"))}, []BlockKind{BlockText}},
		{"a PDF that is not", MediaLimits{Document: 1 << 20, Total: 1 << 20}, []toolmw.Part{toolmw.FilePart("a.pdf", "application/pdf", png)}, []BlockKind{BlockText}},
		{"an embedded image resource", MediaLimits{Image: 1 << 20, Total: 1 << 20}, []toolmw.Part{toolmw.BlobResourcePart("x://a", "image/png", png)}, []BlockKind{BlockText}},
	}
	for _, c := range cases {
		m := NewMedia(c.limits)
		blocks, _ := m.Blocks(toolmw.Parts(c.parts...))
		for i, b := range blocks {
			if b.Kind != c.kinds[i] {
				t.Errorf("%s: block %d of kind %d, want %d", c.name, i, b.Kind, c.kinds[i])
			}
		}
	}
	// The total spans a turn's results.
	m := NewMedia(MediaLimits{Image: enc, Total: enc})
	if _, ok := m.Blocks(toolmw.Parts(toolmw.ImagePart(png, "image/png"))); !ok {
		t.Fatal("the first image is not media")
	}
	if _, ok := m.Blocks(toolmw.Parts(toolmw.ImagePart(png, "image/png"))); ok {
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
		m := NewMedia(MediaLimits{Image: 1 << 20, Total: 1 << 20})
		blocks, got := m.Blocks(toolmw.Parts(toolmw.Part{Kind: toolmw.PartImage, URI: uri}))
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
