// Package partinfo holds what the layers do alike with a result's parts:
// describe them to a log line, a span or an event without their content
// ([Describe], [List]), and copy a result whose parts a cache keeps
// ([Clone]).
package partinfo

import (
	"strconv"
	"strings"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/scrub"
)

// MaxMIME is the longest MIME type a description shows: RFC 6838 allows
// 127 bytes for the type and the subtype each.
const MaxMIME = 255

// Describe returns what telemetry may say of p, as toolmw.Part.Describe
// does — its kind, MIME type and size, never its content, name or URI —
// with what the tool wrote held to a known vocabulary: a kind that is not
// one of toolmw's reads "unknown", and a MIME type shows only its
// type/subtype, and only when it is well formed (RFC 6838 characters, at
// most MaxMIME bytes) and holds nothing the default scrubber finds;
// otherwise it reads "invalid-mime".
func Describe(p toolmw.Part) string {
	kind := string(p.Kind)
	if !p.Kind.Valid() {
		kind = "unknown"
	}
	var b strings.Builder
	b.WriteString(kind)
	if p.MIMEType != "" {
		b.WriteByte(' ')
		b.WriteString(mime(p.MIMEType))
	}
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(p.Size()))
	b.WriteString(" bytes")
	return b.String()
}

// MaxListed is how many parts the layers describe of one result, to a span
// or a log line.
const MaxListed = 8

// List returns the descriptions of the first max of parts ([Describe]),
// and, when parts has more, a last entry "+N more".
func List(parts []toolmw.Part, max int) []string {
	n := min(len(parts), max)
	out := make([]string, 0, n+1)
	for _, p := range parts[:n] {
		out = append(out, Describe(p))
	}
	if len(parts) > n {
		out = append(out, "+"+strconv.Itoa(len(parts)-n)+" more")
	}
	return out
}

// mime returns the type/subtype of a well-formed, clean media type, or
// "invalid-mime".
func mime(m string) string {
	if i := strings.IndexByte(m, ';'); i >= 0 {
		m = strings.TrimRight(m[:i], " \t") // parameters are the tool's text: never shown
	}
	typ, sub, ok := strings.Cut(m, "/")
	if !ok || len(m) > MaxMIME || !restricted(typ) || !restricted(sub) || scrub.String(m) != m {
		return "invalid-mime"
	}
	return m
}

// restricted reports whether s is an RFC 6838 restricted-name: a letter or
// digit, then letters, digits and ! # $ & - ^ _ . +.
func restricted(s string) bool {
	if s == "" || !alnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !alnum(c) && !strings.ContainsRune("!#$&-^_.+", rune(c)) {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// Clone returns res with its parts copied, their data and annotations too,
// so that neither the one who kept res nor the one given the copy can
// change what the other holds. A result without parts is returned as it is.
func Clone(res toolmw.Result) toolmw.Result {
	if res.Parts == nil {
		return res
	}
	parts := make([]toolmw.Part, len(res.Parts))
	for i, p := range res.Parts {
		if p.Data != nil {
			p.Data = append([]byte{}, p.Data...)
		}
		if a := p.Annotations; a != nil {
			c := *a
			if a.Audience != nil {
				c.Audience = append([]string{}, a.Audience...)
			}
			if a.Priority != nil {
				pr := *a.Priority
				c.Priority = &pr
			}
			p.Annotations = &c
		}
		parts[i] = p
	}
	res.Parts = parts
	return res
}
