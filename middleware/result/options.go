package result

import (
	"strings"

	"github.com/toolmw/toolmw/taxonomy"
)

// The default caps. A result without binary data (text, JSON, resource
// links, text resources) is held to DefaultMaxBytes, as before parts
// existed; binary data (images, audio, files, binary resources) has room
// of its own, DefaultMaxPartBytes per part and DefaultMaxBinaryBytes for
// the whole result. [WithMaxBytes] replaces the two whole-result caps with
// one that counts every byte.
const (
	// DefaultMaxBytes is the default cap of a result's bytes other than
	// binary data — its content, and its parts' text, names, URIs and MIME
	// types: 1 MiB.
	DefaultMaxBytes = 1 << 20
	// DefaultMaxBinaryBytes is the default cap of a whole result, binary
	// data included ([toolmw.Result.Size]): 32 MiB, room for a few
	// screenshots or a document; the model APIs refuse larger images
	// anyway (Anthropic at 5 MB, OpenAI at 50 MB per request).
	DefaultMaxBinaryBytes = 32 << 20
	// DefaultMaxPartBytes is the default cap of one part
	// ([toolmw.Part.Size]): 16 MiB.
	DefaultMaxPartBytes = 16 << 20
)

// DefaultMIMETypes returns the default allow-list of the MIME types of
// image, audio, file and binary resource parts: the image formats every
// model API reads, common audio, PDF, text and JSON.
func DefaultMIMETypes() []string {
	return []string{
		"image/png", "image/jpeg", "image/gif", "image/webp",
		"audio/wav", "audio/mpeg", "audio/ogg",
		"application/pdf", "text/*", "application/json",
	}
}

// maxMIMETypeLen bounds the MIME type of a part: longer ones are refused
// unread (RFC 6838 allows 127 characters for each of type and subtype).
const maxMIMETypeLen = 255

// An Option configures [New].
type Option func(*config)

type config struct {
	maxBytes     int // 0: the defaults, DefaultMaxBytes and DefaultMaxBinaryBytes
	maxPartBytes int
	mimeTypes    []string // patterns, lower case: "image/png", "text/*", "*/*"
	invalid      []string // the options given a value they cannot use
}

func newConfig(opts []Option) *config {
	c := &config{maxPartBytes: DefaultMaxPartBytes, mimeTypes: DefaultMIMETypes()}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	return c
}

// WithMaxBytes caps the size of a whole result, [toolmw.Result.Size] (its
// content, and every part's bytes, binary data included), at n bytes. 0
// means the defaults: [DefaultMaxBytes] for everything but binary data,
// and [DefaultMaxBinaryBytes] for the whole. A negative n is ignored and
// reported by [Validate].
func WithMaxBytes(n int) Option {
	return func(c *config) {
		switch {
		case n < 0:
			c.invalid = append(c.invalid, "WithMaxBytes needs n >= 0")
		default:
			c.maxBytes = n
		}
	}
}

// WithMaxPartBytes caps the size of each part of a result,
// [toolmw.Part.Size], at n bytes. 0 means the default,
// [DefaultMaxPartBytes]; a negative n is ignored and reported by
// [Validate]. A text result is one part.
func WithMaxPartBytes(n int) Option {
	return func(c *config) {
		switch {
		case n < 0:
			c.invalid = append(c.invalid, "WithMaxPartBytes needs n >= 0")
		case n == 0:
			c.maxPartBytes = DefaultMaxPartBytes
		default:
			c.maxPartBytes = n
		}
	}
}

// WithMIMETypes sets the MIME types allowed for image, audio, file and
// binary resource parts, replacing [DefaultMIMETypes]: each pattern is a
// type/subtype ("image/png"), a type with any subtype ("text/*"), or any
// type ("*/*"), compared without case and without the part's parameters
// (charset=…). No pattern allows none: such parts are all refused. A
// pattern that is none of these is ignored and reported by [Validate].
func WithMIMETypes(patterns ...string) Option {
	return func(c *config) {
		list := make([]string, 0, len(patterns))
		for _, p := range patterns {
			p = strings.ToLower(p)
			if !validPattern(p) {
				c.invalid = append(c.invalid, "WithMIMETypes needs patterns of the form type/subtype, type/* or */*")
				return
			}
			list = append(list, p)
		}
		c.mimeTypes = list
	}
}

// validPattern reports whether p, in lower case, is a MIME type pattern.
func validPattern(p string) bool {
	typ, sub, ok := strings.Cut(p, "/")
	if !ok || !token(typ) || !token(sub) {
		return false
	}
	return typ != "*" || sub == "*"
}

// token reports whether s is a restricted name of RFC 6838 (letters,
// digits and !#$&-^_.+, at most 127), or "*".
func token(s string) bool {
	if s == "*" {
		return true
	}
	if s == "" || len(s) > 127 {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || strings.IndexByte("!#$&-^_.+", b) >= 0) {
			return false
		}
	}
	return true
}

// allowed reports whether mediaType (lower case, without parameters)
// matches one of the configured patterns.
func (c *config) allowed(mediaType string) bool {
	typ, _, _ := strings.Cut(mediaType, "/")
	for _, p := range c.mimeTypes {
		switch {
		case p == "*/*", p == mediaType:
			return true
		case strings.HasSuffix(p, "/*") && p[:len(p)-2] == typ:
			return true
		}
	}
	return false
}

// err returns the options given a value they cannot use, as one
// tool-definition-invalid/option_invalid error, or nil.
func (c *config) err() error {
	if len(c.invalid) == 0 {
		return nil
	}
	return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
		"result: "+strings.Join(c.invalid, "; "))
}

// Validate reports the options given a value they cannot use, as a
// tool-definition-invalid/option_invalid error, or nil.
func Validate(opts ...Option) error {
	return newConfig(opts).err()
}
