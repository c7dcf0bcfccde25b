package resultcodec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/store"
)

func results() []toolmw.Result {
	pr, nan := 0.25, math.NaN()
	return []toolmw.Result{
		{},
		toolmw.Text("3 flights from 89 EUR"),
		{Content: `{"a":1}`, JSON: true},
		toolmw.Text("\xff\xfe not UTF-8 \x00"),
		toolmw.Result{Content: "head"}.WithParts(
			toolmw.TextPart("caption"),
			toolmw.ImagePart([]byte{0x89, 'P', 'N', 'G', 0}, "image/png"),
			toolmw.FilePart("a.pdf", "application/pdf", bytes.Repeat([]byte{7}, 300)),
			toolmw.ResourceLinkPart("file:///x", "x", ""),
			toolmw.Part{Kind: toolmw.PartResource, URI: "u", Text: "t", Annotations: &toolmw.Annotations{
				Audience: []string{"user", "assistant"}, Priority: &pr, LastModified: "2026-01-01T00:00:00Z"}},
			toolmw.Part{Kind: "made_up", Annotations: &toolmw.Annotations{Priority: &nan}},
			toolmw.Part{Kind: toolmw.PartText, Annotations: &toolmw.Annotations{}},
		),
	}
}

// same reports whether a and b hold the same result, NaN priorities
// alike.
func same(a, b toolmw.Result) bool {
	if a.Content != b.Content || a.JSON != b.JSON || len(a.Parts()) != len(b.Parts()) {
		return false
	}
	for i, p := range a.Parts() {
		q := b.Parts()[i]
		pa, qa := p.Annotations, q.Annotations
		p.Annotations, q.Annotations = nil, nil
		if !reflect.DeepEqual(p, q) {
			return false
		}
		if (pa == nil) != (qa == nil) {
			return false
		}
		if pa == nil {
			continue
		}
		if !reflect.DeepEqual(pa.Audience, qa.Audience) || pa.LastModified != qa.LastModified || (pa.Priority == nil) != (qa.Priority == nil) {
			return false
		}
		if pa.Priority != nil && math.Float64bits(*pa.Priority) != math.Float64bits(*qa.Priority) {
			return false
		}
	}
	return true
}

// TestRoundTrip: every result, parts and annotations included, decodes
// to what was encoded.
func TestRoundTrip(t *testing.T) {
	rs := results()
	for i, r := range rs {
		b, err := Encode(r)
		if err != nil {
			t.Fatalf("%d: Encode: %v", i, err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%d: Decode: %v", i, err)
		}
		if !same(got, r) {
			t.Errorf("%d: decoded %+v, want %+v", i, got, r)
		}
	}
}

// TestDecodeCopies: a decoded result shares no bytes with its input.
func TestDecodeCopies(t *testing.T) {
	b, _ := Encode(toolmw.Parts(toolmw.ImagePart([]byte("png"), "image/png")))
	res, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 0
	}
	if got := string(res.Parts()[0].Data); got != "png" {
		t.Fatalf("data %q after the input was zeroed", got)
	}
}

// TestEncodeBounds: a result over a stored result's bounds is not
// encoded; one at them is.
func TestEncodeBounds(t *testing.T) {
	over := []toolmw.Result{
		toolmw.Text(strings.Repeat("x", store.MaxResultBytes)), // the header makes it longer
		toolmw.Parts(make([]toolmw.Part, MaxParts+1)...),
		toolmw.Parts(toolmw.Part{Annotations: &toolmw.Annotations{Audience: make([]string, MaxAudience+1)}}),
		toolmw.Parts(toolmw.ImagePart(make([]byte, store.MaxResultBytes/2), "a"), toolmw.ImagePart(make([]byte, store.MaxResultBytes/2), "b")),
	}
	for i, r := range over {
		if _, err := Encode(r); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%d: Encode: %v, want ErrTooLarge", i, err)
		}
	}
	at := toolmw.Text(strings.Repeat("x", store.MaxResultBytes-len(magic)-1-3-1)) // magic, flags, a length of 3 bytes, no part
	b, err := Encode(at)
	if err != nil || len(b) != store.MaxResultBytes {
		t.Fatalf("a result encoding to MaxResultBytes: %d bytes, %v", len(b), err)
	}
	if _, err := Decode(b); err != nil {
		t.Fatal(err)
	}
	if _, err := Encode(toolmw.Parts(make([]toolmw.Part, MaxParts)...)); err != nil {
		t.Fatalf("MaxParts parts: %v", err)
	}
}

// TestDecodeRefuses: bytes other than an encoding are corrupt, each with
// an error wrapping store.ErrCorrupt that quotes none of them.
func TestDecodeRefuses(t *testing.T) {
	good, _ := Encode(toolmw.Parts(toolmw.Part{Kind: "text", Text: "secret-ish", Annotations: &toolmw.Annotations{Priority: new(float64)}}))
	uv := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	cases := map[string][]byte{
		"empty":              {},
		"another version":    []byte("TMR2\x00\x00\x00"),
		"magic only":         []byte("TMR1"),
		"unknown flag":       []byte("TMR1\x02\x00\x00"),
		"trailing byte":      append(append([]byte{}, good...), 0),
		"truncated":          good[:len(good)-1],
		"long varint":        []byte("TMR1\x00\x80\x00\x00"), // 0 in two bytes
		"length past end":    cat([]byte("TMR1\x00"), uv(1<<40)),
		"varint overflow":    []byte("TMR1\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f"),
		"parts past bound":   cat([]byte("TMR1\x00\x00"), uv(MaxParts+1)),
		"parts past input":   cat([]byte("TMR1\x00\x00"), uv(100), make([]byte, 7*99)),
		"annotations flag":   cat([]byte("TMR1\x00\x00\x01"), make([]byte, 6), []byte{2}),
		"priority flag":      cat([]byte("TMR1\x00\x00\x01"), make([]byte, 6), []byte{1, 0, 2}),
		"priority truncated": cat([]byte("TMR1\x00\x00\x01"), make([]byte, 6), []byte{1, 0, 1, 0, 0}),
		"audience bound":     cat([]byte("TMR1\x00\x00\x01"), make([]byte, 6), []byte{1}, uv(MaxAudience+1), make([]byte, 40)),
		"over the bound":     cat([]byte("TMR1\x00"), uv(store.MaxResultBytes), make([]byte, store.MaxResultBytes), []byte{0}),
	}
	for name, b := range cases {
		res, err := Decode(b)
		if !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("%s: %+v, %v; want store.ErrCorrupt", name, res, err)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error quotes the bytes: %v", name, err)
		}
	}
}

// FuzzDecode: no input makes Decode panic or allocate past a bound, and
// whatever it accepts encodes back to the same bytes (one encoding per
// result: strict).
func FuzzDecode(f *testing.F) {
	for _, r := range results() {
		b, _ := Encode(r)
		f.Add(b)
	}
	f.Add([]byte("TMR1\x00\x00\x01\x00\x00\x00\x00\x00\x00\x01\x02\x01u\x01a\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := Decode(b)
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("an error not wrapping ErrCorrupt: %v", err)
			}
			return
		}
		again, err := Encode(res)
		if err != nil {
			t.Fatalf("a decoded result does not encode: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("decoded and encoded again: %q, from %q", again, b)
		}
	})
}

func BenchmarkRoundTrip(b *testing.B) {
	r := toolmw.Text(strings.Repeat("x", 512))
	b.ReportAllocs()
	for b.Loop() {
		v, _ := Encode(r)
		_, _ = Decode(v)
	}
}
