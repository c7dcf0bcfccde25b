// Package resultcodec writes a toolmw.Result, its parts included, as the
// bytes a store.Results keeps, and reads them back. Stored bytes are
// hostile — a broken or malicious writer may have left anything — so
// Decode is strict and bounded: it reads one version of the format
// exactly, refuses every byte it does not expect (a trailing byte, a
// length past the end, a varint written longer than needed, a flag it
// does not know), and allocates at most a small multiple of its input,
// which is at most store.MaxResultBytes.
//
// The format, version 1 (integers are unsigned varints, minimal; a string
// is its length and its bytes):
//
//	"TMR1"                  magic and version
//	flags                   one byte: 1 when Content is JSON
//	Content                 string
//	count                   the number of parts, at most MaxParts
//	each part:
//	  Kind Text Data MIMEType URI Name   six strings (empty Data decodes as nil)
//	  annotations           one byte: 0 none, 1 some, then:
//	    count               the audience, at most MaxAudience strings
//	    each audience       string
//	    priority            one byte: 0 none, 1 then 8 bytes, the float64's bits, little-endian
//	    LastModified        string
package resultcodec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/store"
)

// The bounds of an encoded result.
const (
	// MaxParts bounds the parts of a result kept in a store: a result
	// with more is not kept, and a value with more does not decode.
	MaxParts = 4096
	// MaxAudience bounds the audience of one part's annotations.
	MaxAudience = 16
)

const magic = "TMR1"

// ErrTooLarge is returned by Encode for a result whose encoding would be
// over store.MaxResultBytes, or that has more than MaxParts parts or a
// part with more than MaxAudience audiences: such a result is not kept in
// a store.
var ErrTooLarge = errors.New("resultcodec: the result is over the bounds of a stored result")

// Encode returns res as the bytes a store keeps, or ErrTooLarge.
func Encode(res toolmw.Result) ([]byte, error) {
	parts := res.Parts()
	if len(parts) > MaxParts || res.Size() > store.MaxResultBytes {
		return nil, ErrTooLarge
	}
	b := make([]byte, 0, 16+res.Size()+16*len(parts))
	b = append(b, magic...)
	var flags byte
	if res.JSON {
		flags = 1
	}
	b = append(b, flags)
	b = appendString(b, res.Content)
	b = binary.AppendUvarint(b, uint64(len(parts)))
	for _, p := range parts {
		b = appendString(b, string(p.Kind))
		b = appendString(b, p.Text)
		b = appendBytes(b, p.Data)
		b = appendString(b, p.MIMEType)
		b = appendString(b, p.URI)
		b = appendString(b, p.Name)
		a := p.Annotations
		if a == nil {
			b = append(b, 0)
			continue
		}
		if len(a.Audience) > MaxAudience {
			return nil, ErrTooLarge
		}
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(len(a.Audience)))
		for _, s := range a.Audience {
			b = appendString(b, s)
		}
		if a.Priority == nil {
			b = append(b, 0)
		} else {
			b = append(b, 1)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(*a.Priority))
		}
		b = appendString(b, a.LastModified)
		if len(b) > store.MaxResultBytes {
			return nil, ErrTooLarge
		}
	}
	if len(b) > store.MaxResultBytes {
		return nil, ErrTooLarge
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b []byte, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Decode reads a result Encode wrote. Any other bytes — over
// store.MaxResultBytes, another version, truncated, with a byte to spare
// or one out of place — are an error wrapping store.ErrCorrupt, which
// says where, never what the bytes held.
func Decode(b []byte) (toolmw.Result, error) {
	if len(b) > store.MaxResultBytes {
		return toolmw.Result{}, corrupt("%d bytes, over the bound of %d", len(b), store.MaxResultBytes)
	}
	if len(b) < len(magic) || string(b[:len(magic)]) != magic {
		return toolmw.Result{}, corrupt("not a result of version 1")
	}
	d := decoder{b: b, pos: len(magic)}
	var res toolmw.Result
	switch d.byte() {
	case 0:
	case 1:
		res.JSON = true
	default:
		return toolmw.Result{}, d.fail("flags")
	}
	res.Content = d.string()
	n := d.count(MaxParts, 7) // a part takes at least seven bytes
	if d.err == nil && n > 0 {
		parts := make([]toolmw.Part, n)
		for i := range parts {
			parts[i] = d.part()
		}
		res = res.WithParts(parts...)
	}
	if d.err == nil && d.pos != len(d.b) {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return toolmw.Result{}, d.err
	}
	return res, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("resultcodec: "+format+": %w", append(args, store.ErrCorrupt)...)
}

// decoder reads one value; its first error stops it.
type decoder struct {
	b   []byte
	pos int
	err error
}

// fail records that what was read at the position is not as it must be.
func (d *decoder) fail(what string) error {
	if d.err == nil {
		d.err = corrupt("%s at byte %d", what, d.pos)
	}
	return d.err
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.pos >= len(d.b) {
		d.fail("truncated")
		return 0
	}
	c := d.b[d.pos]
	d.pos++
	return c
}

// uvarint reads a varint written in as few bytes as it takes.
func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.pos:])
	if n <= 0 {
		d.fail("a bad length")
		return 0
	}
	if n != len(binary.AppendUvarint(nil, v)) {
		d.fail("a length not written minimally")
		return 0
	}
	d.pos += n
	return v
}

// count reads a count of at most max items of at least min bytes each.
func (d *decoder) count(max, min int) int {
	v := d.uvarint()
	if d.err != nil {
		return 0
	}
	if v > uint64(max) || v*uint64(min) > uint64(len(d.b)-d.pos) {
		d.fail("a count past its bound")
		return 0
	}
	return int(v)
}

// raw reads a length and as many bytes, which are d.b's.
func (d *decoder) raw() []byte {
	v := d.uvarint()
	if d.err != nil {
		return nil
	}
	if v > uint64(len(d.b)-d.pos) {
		d.fail("a length past the end")
		return nil
	}
	s := d.b[d.pos : d.pos+int(v)]
	d.pos += int(v)
	return s
}

func (d *decoder) string() string { return string(d.raw()) }

// bytes reads a length and a copy of as many bytes; none is nil.
func (d *decoder) bytes() []byte {
	s := d.raw()
	if len(s) == 0 {
		return nil
	}
	return append([]byte(nil), s...)
}

func (d *decoder) part() toolmw.Part {
	p := toolmw.Part{Kind: toolmw.PartKind(d.string()), Text: d.string(), Data: d.bytes(),
		MIMEType: d.string(), URI: d.string(), Name: d.string()}
	switch d.byte() {
	case 0:
		return p
	case 1:
	default:
		d.fail("annotations flag")
		return p
	}
	a := &toolmw.Annotations{}
	if n := d.count(MaxAudience, 1); n > 0 {
		a.Audience = make([]string, n)
		for i := range a.Audience {
			a.Audience[i] = d.string()
		}
	}
	switch d.byte() {
	case 0:
	case 1:
		if len(d.b)-d.pos < 8 {
			d.fail("truncated")
			break
		}
		pr := math.Float64frombits(binary.LittleEndian.Uint64(d.b[d.pos:]))
		d.pos += 8
		a.Priority = &pr
	default:
		d.fail("priority flag")
	}
	a.LastModified = d.string()
	p.Annotations = a
	return p
}
