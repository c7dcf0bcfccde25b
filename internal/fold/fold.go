// Package fold is the one rule by which two JSON object keys are the same
// key to Go's encoding/json, which matches a key to a struct field under
// Unicode simple case folding (as strings.EqualFold does): "to", "TO" and
// "To" are one key, as are "s", "S" and "ſ", or "k" and the Kelvin sign.
// The canonical form of arguments (middleware/internal/canonjson) and Typed's decoder
// (internal/jsonarg) both decide with it, so what an approval or a cache
// entry is keyed by and what a tool decodes never disagree about it.
package fold

import (
	"unicode"
	"unicode/utf8"
)

// Append appends to dst the folded form of s: each character replaced by
// the smallest character of its simple case-folding orbit, so that two keys
// are equal under folding exactly when their folded forms are equal bytes.
// Bytes that are not UTF-8 are kept as U+FFFD, as encoding/json reads them.
func Append[S ~string | ~[]byte](dst []byte, s S) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := decode(s[i:])
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				r = next
				break
			}
			r = next
		}
		dst = utf8.AppendRune(dst, r)
		i += n
	}
	return dst
}

// decode decodes the first character of s, as utf8.DecodeRune does.
func decode[S ~string | ~[]byte](s S) (rune, int) {
	var buf [utf8.UTFMax]byte
	n := copy(buf[:], s[:min(len(s), utf8.UTFMax)])
	return utf8.DecodeRune(buf[:n])
}
