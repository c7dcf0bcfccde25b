package turn

import (
	"encoding/base64"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolmw/toolmw"
)

// BlockKind is how a [Block] goes to the API.
type BlockKind int

// The kinds of block.
const (
	BlockText      BlockKind = iota // enveloped text, or a descriptor: Text
	BlockImage                      // an image: Data (base64) of MIMEType, or URL
	BlockPDF                        // a PDF document: Data (base64), or URL; Name
	BlockPlainText                  // a plain-text document: Text (enveloped); Name
)

// Block is one part of a result as an API that takes media gets it (see
// [Media]).
type Block struct {
	Kind BlockKind
	// Text is what the model reads of a BlockText block, or a
	// BlockPlainText document's content: wrapped as untrusted data.
	Text string
	// Data is the bytes of an image or a PDF in standard base64; "" when
	// URL is set.
	Data string
	// URL is where the API fetches an image or a PDF: http or https.
	URL string
	// MIMEType is an image's media type (image/png, …) or application/pdf,
	// in lower case without parameters.
	MIMEType string
	// Name is a document's name, cleaned for the API ([CleanName]); "" when
	// the part had none.
	Name string
}

// DataURL returns an image's or a PDF's bytes as a data URL
// (data:image/png;base64,…).
func (b Block) DataURL() string { return "data:" + b.MIMEType + ";base64," + b.Data }

// MediaLimits are an API's bounds on the media of one request.
type MediaLimits struct {
	// Image is the most base64 bytes of one image.
	Image int
	// Document is the most base64 (or text) bytes of one document.
	Document int
	// Total is the most base64 (or text) bytes of all the media of one
	// turn's answers.
	Total int
	// PlainText says whether the API takes plain-text documents.
	PlainText bool
}

// Media decides how the results of one turn's calls go to a model API that
// takes images and documents in its tool results (OpenAI's Responses API,
// Anthropic's Messages API): which part is sent as an image, a PDF or a
// plain-text document, and which as text — wrapped as untrusted data, or a
// descriptor of what the API does not take. The model-SDK adapters share
// it; each turns the [Block]s into its SDK's types.
//
// Everything in a part is untrusted. A part is sent as media only when its
// MIME type is one the API takes (image/png, image/jpeg, image/gif,
// image/webp; application/pdf; text/plain where the API takes plain-text
// documents) and its bytes are what the type says (sniffed with
// http.DetectContentType, or valid UTF-8 for text), or when it has no
// bytes and its URI is an http or https URL without credentials; and only
// while it fits the API's bounds ([MediaLimits]), counted across the
// turn's results. Anything else is toolmw.ForModel's descriptor of it,
// wrapped as untrusted data.
//
// A Media is for one turn's answers, from one goroutine; its zero value
// takes no media.
type Media struct {
	limits MediaLimits
	used   int
}

// NewMedia returns a Media within limits.
func NewMedia(limits MediaLimits) *Media { return &Media{limits: limits} }

// Blocks returns res's parts as blocks, in order, and true when at least
// one of them is media; false when every part would be text (a text
// Result, or parts the API takes none of): the caller then sends
// toolmw.ForModel's text as it does for any text result.
func (m *Media) Blocks(res toolmw.Result) ([]Block, bool) {
	if len(res.Parts()) == 0 {
		return nil, false
	}
	parts := res.AllParts()
	wrapped := toolmw.ForModelParts(res)
	out := make([]Block, len(parts))
	media := false
	for i, p := range parts {
		b, ok := m.media(p)
		if !ok {
			switch p.Kind {
			case toolmw.PartText, toolmw.PartJSON:
				b = Block{Kind: BlockText, Text: wrapped[i].Text}
			default:
				b = Block{Kind: BlockText, Text: toolmw.ForModel(toolmw.Parts(p), nil)}
			}
		}
		media = media || ok
		out[i] = b
	}
	return out, media
}

// media returns p as an Image, PDF or PlainText block when the API takes
// it and it fits.
func (m *Media) media(p toolmw.Part) (Block, bool) {
	mt := mediaType(p.MIMEType)
	var kind BlockKind
	switch {
	case p.Kind == toolmw.PartImage && (imageType(mt) || mt == "" && len(p.Data) == 0):
		kind = BlockImage
	case p.Kind == toolmw.PartFile && mt == "application/pdf":
		kind = BlockPDF
	case p.Kind == toolmw.PartFile && mt == "text/plain" && m.limits.PlainText && len(p.Data) > 0:
		kind = BlockPlainText
	default:
		return Block{}, false
	}
	b := Block{Kind: kind, MIMEType: mt}
	if kind != BlockImage {
		b.Name = CleanName(p.Name)
	}
	switch {
	case kind == BlockPlainText:
		if !utf8.Valid(p.Data) {
			return Block{}, false
		}
		b.MIMEType = ""
		b.Text = toolmw.ForModel(toolmw.Text(string(p.Data)), nil)
		return b, m.take(kind, len(b.Text))
	case len(p.Data) > 0:
		if sniffed, _, _ := strings.Cut(http.DetectContentType(p.Data), ";"); sniffed != mt {
			return Block{}, false
		}
		if !m.take(kind, base64.StdEncoding.EncodedLen(len(p.Data))) {
			return Block{}, false
		}
		b.Data = base64.StdEncoding.EncodeToString(p.Data)
		return b, true
	default:
		u, ok := webURL(p.URI)
		if !ok || !m.take(kind, len(u)) {
			return Block{}, false
		}
		b.URL = u
		return b, true
	}
}

// take counts n bytes of a block of kind against the limits, and reports
// whether they fit.
func (m *Media) take(kind BlockKind, n int) bool {
	item := m.limits.Document
	if kind == BlockImage {
		item = m.limits.Image
	}
	if n > item || m.used+n > m.limits.Total {
		return false
	}
	m.used += n
	return true
}

// mediaType returns s's media type in lower case without parameters, or
// "" when s does not parse.
func mediaType(s string) string {
	mt, _, err := mime.ParseMediaType(s)
	if err != nil {
		return ""
	}
	return mt
}

// imageType reports whether the APIs take images of media type mt.
func imageType(mt string) bool {
	switch mt {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// webURL returns s when it is an absolute http or https URL with a host
// and no user information, at most 2048 bytes.
func webURL(s string) (string, bool) {
	if len(s) > 2048 {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.Opaque != "" {
		return "", false
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "http" && scheme != "https" {
		return "", false
	}
	return s, true
}

// maxName is the most bytes of a cleaned name.
const maxName = 128

// CleanName returns name as a document's name: its last path element,
// without control and format characters (zero-width, bidirectional
// overrides, tags: text a reader does not see), at most 128 bytes (cut at
// a character).
func CleanName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range name {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > maxName {
			break
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}
