// Package canonjson writes the canonical form of a JSON value: objects
// with their keys sorted by bytes, no insignificant space, strings escaped
// the one way encoding/json writes them with HTML escaping off, numbers and
// literals as written. Two documents that hold the same value, however they
// are spaced or their keys ordered, have the same canonical form, and two
// that differ have different ones: the form is a key for caches and a
// digest for approvals.
//
// Only a document every parser reads alike has one: one valid JSON value in
// valid UTF-8, no duplicate key (parsers disagree on which one counts), no
// two keys of one object equal under Unicode simple case folding
// (encoding/json matches keys to struct fields that way, as
// strings.EqualFold does: {"To":"a","to":"b"} and {"to":"b","To":"a"}
// decode into different values, so they must not share a form), no lone
// surrogate escape (it decodes to U+FFFD, as U+FFFD itself does), and no
// nesting deeper than [MaxDepth]. A caller keys a document without one by
// its exact bytes.
package canonjson

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/toolmw/toolmw/internal/fold"
)

// MaxDepth bounds the nesting Append follows; a deeper document has no
// canonical form.
const MaxDepth = 64

// Append appends the canonical form of src to dst and reports whether src
// has one (see the package documentation); when it has none, what Append
// returns holds dst and an unspecified tail. It is safe for concurrent use.
func Append(dst, src []byte) ([]byte, bool) {
	if !utf8.Valid(src) || !json.Valid(src) {
		return dst, false
	}
	c := canonicalizer{in: src, out: dst}
	ok := c.value(0)
	return c.out, ok
}

// canonicalizer writes the canonical form of one valid JSON value (json.Valid
// has checked it, so the reading below need not).
type canonicalizer struct {
	in  []byte
	pos int
	out []byte
}

func (c *canonicalizer) space() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// value writes the next value; false: it is not put in canonical form.
func (c *canonicalizer) value(depth int) bool {
	if depth > MaxDepth {
		return false
	}
	c.space()
	switch c.in[c.pos] {
	case '{':
		return c.object(depth)
	case '[':
		c.pos++
		c.out = append(c.out, '[')
		c.space()
		if c.in[c.pos] == ']' {
			c.pos++
			c.out = append(c.out, ']')
			return true
		}
		for {
			if !c.value(depth + 1) {
				return false
			}
			c.space()
			end := c.in[c.pos] == ']'
			c.pos++
			if end {
				c.out = append(c.out, ']')
				return true
			}
			c.out = append(c.out, ',')
		}
	case '"':
		s, ok := c.str()
		c.out = appendString(c.out, s)
		return ok
	default: // a number, true, false or null: as written
		start := c.pos
		for c.pos < len(c.in) && !strings.ContainsRune(" \t\n\r,]}", rune(c.in[c.pos])) {
			c.pos++
		}
		c.out = append(c.out, c.in[start:c.pos]...)
		return true
	}
}

// str reads a string literal and returns its value: a slice of the input
// when the literal has no escape (no allocation), else the decoded value.
func (c *canonicalizer) str() ([]byte, bool) {
	start := c.pos
	c.pos++ // the opening quote
	escaped := false
	for {
		switch c.in[c.pos] {
		case '\\':
			escaped = true
			c.pos += 2
			continue
		case '"':
			c.pos++
			lit := c.in[start:c.pos]
			if !escaped {
				return lit[1 : len(lit)-1], true
			}
			var s string
			if err := json.Unmarshal(lit, &s); err != nil {
				return nil, false
			}
			// A lone surrogate escape (\ud800) decodes to U+FFFD, as the
			// character U+FFFD itself does: two strings, one value.
			return []byte(s), !strings.ContainsRune(s, utf8.RuneError)
		}
		c.pos++
	}
}

type member struct {
	key   []byte
	value []byte
}

// object writes the next value, an object. Most objects come with their
// keys in order (one key, or a model that writes them sorted): they are
// written as they are read, without allocating; an object whose keys are
// out of order is read again and sorted.
func (c *canonicalizer) object(depth int) bool {
	start, mark := c.pos, len(c.out)
	if ok, inOrder := c.objectInOrder(depth); inOrder {
		return ok
	}
	c.pos, c.out = start, c.out[:mark]
	return c.objectSorted(depth)
}

// objectInOrder writes an object whose keys are in strictly increasing
// order; inOrder is false as soon as a key is not, with what was written
// to be discarded.
func (c *canonicalizer) objectInOrder(depth int) (ok, inOrder bool) {
	c.pos++ // '{'
	c.out = append(c.out, '{')
	var prev []byte
	var keys foldSet
	for first := true; ; first = false {
		c.space()
		if c.in[c.pos] == '}' {
			c.pos++
			c.out = append(c.out, '}')
			return true, true
		}
		key, ok := c.str()
		if !ok {
			return false, true
		}
		if !first {
			switch cmp := bytes.Compare(prev, key); {
			case cmp == 0:
				return false, true // a duplicate key: no canonical form
			case cmp > 0:
				return false, false
			}
			c.out = append(c.out, ',')
		}
		if keys.add(key) {
			return false, true // two keys equal under case folding
		}
		prev = key
		c.out = appendString(c.out, key)
		c.out = append(c.out, ':')
		c.space()
		c.pos++ // ':'
		if !c.value(depth + 1) {
			return false, true
		}
		c.space()
		if c.in[c.pos] == ',' {
			c.pos++
		}
	}
}

// objectSorted writes an object whose keys are out of order, sorted.
func (c *canonicalizer) objectSorted(depth int) bool {
	c.pos++ // '{'
	var members []member
	var keys foldSet
	for {
		c.space()
		if c.in[c.pos] == '}' {
			c.pos++
			break
		}
		key, ok := c.str()
		if !ok || keys.add(key) {
			return false
		}
		c.space()
		c.pos++ // ':'
		out := c.out
		c.out = nil
		ok = c.value(depth + 1)
		members = append(members, member{key, c.out})
		c.out = out
		if !ok {
			return false
		}
		c.space()
		if c.in[c.pos] == ',' {
			c.pos++
		}
	}
	slices.SortFunc(members, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	c.out = append(c.out, '{')
	for i, m := range members {
		if i > 0 {
			if bytes.Equal(members[i-1].key, m.key) {
				return false
			}
			c.out = append(c.out, ',')
		}
		c.out = appendString(c.out, m.key)
		c.out = append(c.out, ':')
		c.out = append(c.out, m.value...)
	}
	c.out = append(c.out, '}')
	return true
}

// foldSet holds the keys of one object, to find two that are equal under
// Unicode simple case folding (bytes.EqualFold, the equality encoding/json
// uses to match a key to a struct field), exact duplicates included. A
// small object compares its keys in place, without allocating.
type foldSet struct {
	few  [8][]byte
	n    int
	many map[string]struct{} // folded keys, once there are more than len(few)
}

// add records key and reports whether a key equal to it under case folding
// was already there.
func (f *foldSet) add(key []byte) bool {
	if f.many == nil {
		for _, have := range f.few[:f.n] {
			if bytes.EqualFold(have, key) {
				return true
			}
		}
		if f.n < len(f.few) {
			f.few[f.n] = key
			f.n++
			return false
		}
		f.many = make(map[string]struct{}, 2*len(f.few))
		for _, have := range f.few {
			f.many[string(fold.Append(nil, have))] = struct{}{}
		}
	}
	k := string(fold.Append(nil, key))
	if _, dup := f.many[k]; dup {
		return true
	}
	f.many[k] = struct{}{}
	return false
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way encoding/json writes it
// with HTML escaping off: an injective encoding, so two strings share a
// canonical form only when they are equal.
func appendString(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	last := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[last:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			last = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[last:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			last = i
			continue
		}
		i += size
	}
	dst = append(dst, s[last:]...)
	return append(dst, '"')
}
