package approval

import (
	"crypto/sha256"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/toolmw/toolmw/middleware/internal/canonjson"
)

// digestArgs returns the digest an approval is bound to, and the text a
// reviewer is shown before scrubbing: the canonical form of args (objects
// with sorted keys, no insignificant space, strings escaped the one way
// encoding/json writes them without HTML escapes, numbers as written), so
// an approval holds for the same arguments however the model spaced or
// ordered them. Arguments that are not one valid JSON value in valid UTF-8,
// hold a duplicate key (which parsers read differently) or nest deeper
// than canonjson.MaxDepth are digested as the exact bytes, marked apart, so an
// approval for them holds only for the same bytes.
func digestArgs(args []byte) ([sha256.Size]byte, string) {
	out := make([]byte, 0, len(args)+len(canonicalTag))
	if out, ok := canonjson.Append(append(out, canonicalTag...), args); ok {
		return sha256.Sum256(out), string(out[len(canonicalTag):])
	}
	h := sha256.New()
	h.Write([]byte(rawTag))
	h.Write(args)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum, string(args)
}

// The tags that keep a canonical form and raw bytes from ever sharing a
// digest.
const (
	canonicalTag = "canonical\x00"
	rawTag       = "raw\x00"
)

// reveal returns s, the text of a summary, with every character that could
// pass for another, or for nothing, written as a JSON \u escape, so a
// reviewer reads what the tool will receive rather than what it looks
// like: anywhere, control and format characters (zero-width spaces, bidi
// overrides), combining marks, private-use characters and every space but
// U+0020 (a no-break space inside a number); and within a string (a key or
// a value) that holds an ASCII letter or digit, every other letter or
// digit except the accented Latin letters of U+00C0 to U+017F (Cyrillic а
// in "аlice", Greek ο, fullwidth ｌ, the Kelvin sign, Arabic-Indic digits),
// and of those the dotless ı, the kra ĸ and the long ſ. Text in one other
// script ("山田", "Αθήνα") and Latin with its usual accents ("Zürich")
// read as written. s is returned as is when it is ASCII.
func reveal(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || s[i] < 0x20 || s[i] == 0x7f {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	// Split s at the quotes that open and close JSON strings; each part is
	// judged on its own.
	start, inString := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case inString && s[i] == '\\':
			i++ // an escaped character, a quote included
		case s[i] == '"':
			revealPart(&b, s[start:i])
			b.WriteByte('"')
			start, inString = i+1, !inString
		}
	}
	if start < len(s) {
		revealPart(&b, s[start:])
	}
	return b.String()
}

// revealPart writes part, a string's contents or the text between
// strings, to b with the characters reveal names escaped.
func revealPart(b *strings.Builder, part string) {
	mixed := false
	for i := 0; i < len(part); i++ {
		c := part[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			mixed = true
			break
		}
	}
	for _, r := range part {
		if !passesForAnother(r, mixed) {
			b.WriteRune(r)
			continue
		}
		var buf [2]uint16
		units := utf16.AppendRune(buf[:0], r)
		for _, u := range units {
			b.WriteString(`\u`)
			b.WriteString(hexDigits[u>>12&0xf : u>>12&0xf+1])
			b.WriteString(hexDigits[u>>8&0xf : u>>8&0xf+1])
			b.WriteString(hexDigits[u>>4&0xf : u>>4&0xf+1])
			b.WriteString(hexDigits[u&0xf : u&0xf+1])
		}
	}
}

const hexDigits = "0123456789abcdef"

// passesForAnother reports whether reveal escapes r, in a string that
// holds an ASCII letter or digit when mixed.
func passesForAnother(r rune, mixed bool) bool {
	switch {
	case r == utf8.RuneError:
		return false // invalid UTF-8, or U+FFFD itself: shows as what it is
	case r == ' ':
		return false
	case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs, unicode.Mn, unicode.Me, unicode.Zs, unicode.Zl, unicode.Zp):
		return true
	case r < utf8.RuneSelf || !mixed:
		return false
	case !unicode.IsLetter(r) && !unicode.IsNumber(r):
		return false
	case r >= 0xc0 && r <= 0x17f:
		return r == 0x131 || r == 0x138 || r == 0x17f // ı ĸ ſ
	}
	return true
}
