package fallback

import (
	"bytes"
	"encoding/json"
	"slices"
)

// canonical appends to dst args' JSON value in canonical form: object keys
// sorted (by their bytes, the last of duplicate keys kept), no spacing,
// numbers as written, strings as encoding/json writes them; absent
// arguments are null. It reports false when args are not one JSON value.
//
// The form is exactly what encoding/json makes of the value decoded with
// UseNumber: the fast path below writes it without decoding for documents
// whose strings are plain printable ASCII (the common case), and any other
// document goes through encoding/json. FuzzCanonical holds the two to the
// same output.
func canonical(dst, args []byte) ([]byte, bool) {
	if len(args) == 0 {
		return append(dst, "null"...), true
	}
	c := canonWriter{in: args, out: dst}
	if c.value(0) {
		c.space()
		if c.i == len(c.in) {
			return c.out, true
		}
	}
	return canonicalSlow(dst, args)
}

// canonicalSlow is the reference: decode with UseNumber, encode.
func canonicalSlow(dst, args []byte) ([]byte, bool) {
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return dst, false
	}
	b, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return dst, false
	}
	return append(dst, b...), true
}

// maxFastDepth is the nesting the fast path follows; deeper documents go
// through encoding/json, which has its own limit.
const maxFastDepth = 64

// canonWriter is the fast path: it gives up (false) at anything it does not
// write exactly as encoding/json would, and canonical then takes the slow
// path, so giving up is never wrong, only slower.
type canonWriter struct {
	in  []byte
	i   int
	out []byte
}

func (c *canonWriter) space() {
	for c.i < len(c.in) {
		switch c.in[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *canonWriter) value(depth int) bool {
	if depth > maxFastDepth {
		return false
	}
	c.space()
	if c.i >= len(c.in) {
		return false
	}
	switch b := c.in[c.i]; {
	case b == '{':
		return c.object(depth)
	case b == '[':
		return c.array(depth)
	case b == '"':
		return c.str()
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	case b == '-' || b >= '0' && b <= '9':
		return c.number()
	}
	return false
}

func (c *canonWriter) literal(word string) bool {
	if !bytes.HasPrefix(c.in[c.i:], []byte(word)) {
		return false
	}
	c.i += len(word)
	c.out = append(c.out, word...)
	return true
}

// str copies a string with no escapes and only printable ASCII other than
// the characters encoding/json escapes (<, >, &).
func (c *canonWriter) str() bool {
	start := c.i
	for c.i++; c.i < len(c.in); c.i++ {
		switch b := c.in[c.i]; {
		case b == '"':
			c.i++
			c.out = append(c.out, c.in[start:c.i]...)
			return true
		case b < 0x20 || b > 0x7e || b == '\\' || b == '<' || b == '>' || b == '&':
			return false
		}
	}
	return false
}

// number copies a number that matches JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (c *canonWriter) number() bool {
	in, i := c.in, c.i
	digits := func() int {
		n := 0
		for i < len(in) && in[i] >= '0' && in[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(in) && in[i] == '-' {
		i++
	}
	switch {
	case i < len(in) && in[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(in) && in[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		i++
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	c.out = append(c.out, in[c.i:i]...)
	c.i = i
	return true
}

func (c *canonWriter) array(depth int) bool {
	c.i++ // [
	c.out = append(c.out, '[')
	c.space()
	if c.i < len(c.in) && c.in[c.i] == ']' {
		c.i++
		c.out = append(c.out, ']')
		return true
	}
	for {
		if !c.value(depth + 1) {
			return false
		}
		c.space()
		if c.i >= len(c.in) {
			return false
		}
		switch c.in[c.i] {
		case ',':
			c.i++
			c.out = append(c.out, ',')
		case ']':
			c.i++
			c.out = append(c.out, ']')
			return true
		default:
			return false
		}
	}
}

// member is one written member of an object: out[start:end] is `"key":value`,
// and its key is out[start+1:keyEnd].
type member struct{ start, keyEnd, end int }

func (c *canonWriter) object(depth int) bool {
	c.i++ // {
	open := len(c.out)
	c.out = append(c.out, '{')
	c.space()
	if c.i < len(c.in) && c.in[c.i] == '}' {
		c.i++
		c.out = append(c.out, '}')
		return true
	}
	var buf [8]member
	ms := buf[:0]
	sorted := true
	for {
		c.space()
		if c.i >= len(c.in) || c.in[c.i] != '"' {
			return false
		}
		m := member{start: len(c.out)}
		if !c.str() {
			return false
		}
		m.keyEnd = len(c.out) - 1
		c.space()
		if c.i >= len(c.in) || c.in[c.i] != ':' {
			return false
		}
		c.i++
		c.out = append(c.out, ':')
		if !c.value(depth + 1) {
			return false
		}
		m.end = len(c.out)
		if n := len(ms); n > 0 && bytes.Compare(c.key(ms[n-1]), c.key(m)) >= 0 {
			sorted = false
		}
		ms = append(ms, m)
		c.space()
		if c.i >= len(c.in) {
			return false
		}
		switch c.in[c.i] {
		case ',':
			c.i++
			c.out = append(c.out, ',')
		case '}':
			c.i++
			if !sorted {
				c.reorder(open, ms)
			}
			c.out = append(c.out, '}')
			return true
		default:
			return false
		}
	}
}

func (c *canonWriter) key(m member) []byte { return c.out[m.start+1 : m.keyEnd] }

// reorder rewrites the members written after out[open] sorted by key,
// keeping the last of duplicate keys, as a Go map would.
func (c *canonWriter) reorder(open int, ms []member) {
	order := make([]int, len(ms))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return bytes.Compare(c.key(ms[a]), c.key(ms[b])) })
	body := make([]byte, 0, len(c.out)-open)
	for n, i := range order {
		if n+1 < len(order) && bytes.Equal(c.key(ms[i]), c.key(ms[order[n+1]])) {
			continue // a later duplicate wins
		}
		if len(body) > 0 {
			body = append(body, ',')
		}
		body = append(body, c.out[ms[i].start:ms[i].end]...)
	}
	c.out = append(c.out[:open+1], body...)
}
