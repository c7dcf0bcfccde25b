package approval

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds the nesting canonical follows; deeper arguments are
// digested as they are (the exact bytes must match then).
const maxDepth = 64

// digestArgs returns the digest an approval is bound to, and the text a
// reviewer is shown before scrubbing: the canonical form of args (objects
// with sorted keys, no insignificant space, strings re-escaped the one way
// encoding/json writes them, numbers as written), so an approval holds for
// the same arguments however the model spaced or ordered them. Arguments
// that are not one JSON value, hold a duplicate key (which parsers read
// differently) or nest deeper than maxDepth are digested as the exact
// bytes, marked apart, so an approval for them holds only for the same
// bytes.
func digestArgs(args []byte) ([sha256.Size]byte, string) {
	var b bytes.Buffer
	b.Grow(len(args))
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	// Invalid UTF-8 would be read as U+FFFD: two different arguments
	// with one canonical form.
	if utf8.Valid(args) && canonical(dec, &b, 0) == nil {
		if _, err := dec.Token(); err == io.EOF {
			sum := sha256.Sum256(append([]byte("canonical\x00"), b.Bytes()...))
			return sum, b.String()
		}
	}
	sum := sha256.Sum256(append([]byte("raw\x00"), args...))
	return sum, string(args)
}

// errNotCanonical stops canonical at what it does not put in canonical form.
var errNotCanonical = errors.New("approval: arguments not canonical")

// canonical writes the value the decoder reads next in canonical form.
func canonical(dec *json.Decoder, b *bytes.Buffer, depth int) error {
	if depth > maxDepth {
		return errNotCanonical
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return canonicalObject(dec, b, depth)
		case '[':
			b.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				if err := canonical(dec, b, depth+1); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // ']'
				return err
			}
			b.WriteByte(']')
			return nil
		}
		return errNotCanonical
	case string:
		writeString(b, t)
	case json.Number:
		b.WriteString(string(t))
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	}
	return nil
}

func canonicalObject(dec *json.Decoder, b *bytes.Buffer, depth int) error {
	type member struct {
		key   string
		value string
	}
	var members []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return errNotCanonical
		}
		var v bytes.Buffer
		if err := canonical(dec, &v, depth+1); err != nil {
			return err
		}
		members = append(members, member{key, v.String()})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return err
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			if members[i-1].key == m.key {
				return errNotCanonical
			}
			b.WriteByte(',')
		}
		writeString(b, m.key)
		b.WriteByte(':')
		b.WriteString(m.value)
	}
	b.WriteByte('}')
	return nil
}

// writeString writes s as encoding/json does, without HTML escaping.
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's newline
}
