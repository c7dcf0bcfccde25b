package toolmw

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/toolmw/toolmw/scrub"
)

// PartKind says what a [Part] holds.
type PartKind string

// The kinds of part.
const (
	PartText         PartKind = "text"          // Text is text for the model
	PartJSON         PartKind = "json"          // Text is a JSON document: structured output
	PartImage        PartKind = "image"         // Data (or URI) is an image of MIMEType
	PartAudio        PartKind = "audio"         // Data (or URI) is audio of MIMEType
	PartFile         PartKind = "file"          // Data (or URI) is a document named Name: a PDF, a CSV
	PartResourceLink PartKind = "resource_link" // URI names a resource the client may read; nothing is embedded
	PartResource     PartKind = "resource"      // an embedded resource: URI, and its Text or its Data
)

// Part is one piece of a tool's [Result]. Which fields mean something
// depends on Kind (see the constants); the others are empty. Everything in
// a Part came from the tool and is untrusted: the layers scrub its text,
// its JSON strings, its names and URIs (never binary Data), bound its
// bytes, and describe it to logs, spans and events without its content.
type Part struct {
	Kind PartKind
	// Text is a text part's text, a JSON part's document, or an embedded
	// resource's text.
	Text string
	// Data is the bytes of an image, audio, a file or a binary resource.
	Data []byte
	// MIMEType is the media type of Data (image/png, application/pdf), or
	// of a resource.
	MIMEType string
	// URI is a resource's URI, or where an image, audio or file is when
	// Data is empty.
	URI string
	// Name is a file's or a resource link's name.
	Name string
	// Annotations are hints for the client, optional.
	Annotations *Annotations
}

// Annotations are a part's hints for the client, as MCP defines them.
type Annotations struct {
	// Audience is who the part is for: "user", "assistant", or both.
	Audience []string
	// Priority is how important the part is, from 0 to 1; nil means not
	// said.
	Priority *float64
	// LastModified is when the content last changed (ISO 8601), or "".
	LastModified string
}

// Parts returns a Result of parts, in order.
func Parts(parts ...Part) Result { return Result{}.WithParts(parts...) }

// Parts returns r's parts beside its Content, in order; nil for a text
// Result. The slice is r's: do not modify it (use WithParts).
func (r Result) Parts() []Part {
	if r.parts == nil {
		return nil
	}
	return *r.parts
}

// WithParts returns r with its parts replaced by parts (none: a text
// Result); r itself is unchanged.
func (r Result) WithParts(parts ...Part) Result {
	if len(parts) == 0 {
		r.parts = nil
		return r
	}
	r.parts = &parts
	return r
}

// TextPart returns a text part.
func TextPart(s string) Part { return Part{Kind: PartText, Text: s} }

// JSONPart encodes v as a JSON part: structured output. An encoding failure
// is a tool-result-invalid error with code result_encoding_failed.
func JSONPart(v any) (Part, error) {
	r, err := JSON(v)
	if err != nil {
		return Part{}, err
	}
	return Part{Kind: PartJSON, Text: r.Content}, nil
}

// ImagePart returns an image part of data, an image of mimeType (image/png,
// image/jpeg, …). The bytes are the caller's: do not modify them after.
func ImagePart(data []byte, mimeType string) Part {
	return Part{Kind: PartImage, Data: data, MIMEType: mimeType}
}

// AudioPart returns an audio part of data, audio of mimeType (audio/wav, …).
func AudioPart(data []byte, mimeType string) Part {
	return Part{Kind: PartAudio, Data: data, MIMEType: mimeType}
}

// FilePart returns a document part: data, a file named name of mimeType
// (application/pdf, text/csv, …).
func FilePart(name, mimeType string, data []byte) Part {
	return Part{Kind: PartFile, Name: name, MIMEType: mimeType, Data: data}
}

// ResourceLinkPart returns a link to the resource at uri, named name, of
// mimeType ("" when not known): the client may read it; nothing is
// embedded.
func ResourceLinkPart(uri, name, mimeType string) Part {
	return Part{Kind: PartResourceLink, URI: uri, Name: name, MIMEType: mimeType}
}

// ResourcePart returns an embedded text resource: text, the content of the
// resource at uri, of mimeType.
func ResourcePart(uri, mimeType, text string) Part {
	return Part{Kind: PartResource, URI: uri, MIMEType: mimeType, Text: text}
}

// BlobResourcePart returns an embedded binary resource: data, the content
// of the resource at uri, of mimeType.
func BlobResourcePart(uri, mimeType string, data []byte) Part {
	return Part{Kind: PartResource, URI: uri, MIMEType: mimeType, Data: data}
}

// AllParts returns r's parts: Parts, after a part made of Content when
// Content is not empty (a JSON part when JSON is set, else a text part). A
// text Result is one part; the empty Result is none.
func (r Result) AllParts() []Part {
	if r.Content == "" && !r.JSON {
		return r.Parts()
	}
	head := TextPart(r.Content)
	if r.JSON {
		head.Kind = PartJSON
	}
	if len(r.Parts()) == 0 {
		return []Part{head}
	}
	return append([]Part{head}, r.Parts()...)
}

// Size returns how many bytes r holds: Content and every part's [Part.Size].
func (r Result) Size() int {
	n := len(r.Content)
	for _, p := range r.Parts() {
		n += p.Size()
	}
	return n
}

// Size returns how many bytes p holds: its text, data, URI, name and MIME
// type.
func (p Part) Size() int {
	return len(p.Text) + len(p.Data) + len(p.URI) + len(p.Name) + len(p.MIMEType)
}

// Describe returns what a log line, a span or an event may say of p: its
// kind, MIME type and size — never its content, name or URI — with what
// the tool wrote held to a known vocabulary: a kind that is not one of the
// kinds of part reads "unknown", and a MIME type shows only its
// type/subtype, and only when it is well formed (RFC 6838 characters, at
// most [MaxMIMELen] bytes) and holds nothing the default scrubber finds;
// otherwise it reads "invalid-mime".
func (p Part) Describe() string {
	var b strings.Builder
	b.WriteString(p.Kind.safe())
	if p.MIMEType != "" {
		b.WriteByte(' ')
		b.WriteString(safeMIME(p.MIMEType))
	}
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(p.Size()))
	b.WriteString(" bytes")
	return b.String()
}

// MaxMIMELen is the longest MIME type [Part.Describe] and [ForModel] show:
// RFC 6838 allows 127 bytes for the type and the subtype each.
const MaxMIMELen = 255

// safe returns k, or "unknown" for a kind that is not one of the kinds of
// part.
func (k PartKind) safe() string {
	if !k.Valid() {
		return "unknown"
	}
	return string(k)
}

// safeMIME returns the type/subtype of a well-formed, clean media type, or
// "invalid-mime".
func safeMIME(m string) string {
	if i := strings.IndexByte(m, ';'); i >= 0 {
		m = strings.TrimRight(m[:i], " \t") // parameters are the tool's text: never shown
	}
	typ, sub, ok := strings.Cut(m, "/")
	if !ok || len(m) > MaxMIMELen || !restrictedName(typ) || !restrictedName(sub) || scrub.String(m) != m {
		return "invalid-mime"
	}
	return m
}

// restrictedName reports whether s is an RFC 6838 restricted-name: a
// letter or digit, then letters, digits and ! # $ & - ^ _ . +.
func restrictedName(s string) bool {
	if s == "" || !alnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !alnum(c) && !strings.ContainsRune("!#$&-^_.+", rune(c)) {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// Structured returns a JSON part's document decoded, for an API that sends
// structured output as a value; ok is false for another kind or a document
// that does not decode.
func (p Part) Structured() (v any, ok bool) {
	if p.Kind != PartJSON {
		return nil, false
	}
	if err := json.Unmarshal([]byte(p.Text), &v); err != nil {
		return nil, false
	}
	return v, true
}

// Structured returns r's structured output decoded: its content when r is
// a JSON result (a [Typed] tool's, say), else its first JSON part's; ok is
// false when it has none, or that document does not decode.
func (r Result) Structured() (v any, ok bool) {
	if r.JSON {
		return Part{Kind: PartJSON, Text: r.Content}.Structured()
	}
	for _, p := range r.Parts() {
		if p.Kind == PartJSON {
			return p.Structured()
		}
	}
	return nil, false
}

// Valid reports whether k is one of the kinds of part.
func (k PartKind) Valid() bool {
	switch k {
	case PartText, PartJSON, PartImage, PartAudio, PartFile, PartResourceLink, PartResource:
		return true
	}
	return false
}
