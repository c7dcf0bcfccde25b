package scrub

import (
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// This file holds the decoder that lets the matchers see through the ways
// a message may wrap what it carries: JSON string escapes (\u0041, \", \\,
// \/), \xNN escapes, percent-encoding (%41), HTML character references
// (&amp;, &#65;, &#x41;), invisible format characters (zero-width spaces
// and joiners, the byte order mark, soft hyphens, bidirectional marks, tag
// characters), and look-alike separators (no-break and other Unicode
// spaces, Unicode dashes, fullwidth forms), which it reads as the ASCII
// they imitate.
//
// An invisible character is ambiguous: inside a token (gh\u200bp_…) it
// hides the token unless it is left out; glued to one (token\u200bghp_…)
// it hides the token's start unless it is read as a break between words.
// So a message with one is matched twice, in a view that leaves invisible
// characters out and in one that reads each as a blank, and the findings
// of both are redacted.
//
// A message without any of them, which is almost every message, is
// matched as it is: finding that out costs a few memchr-fast searches.
// Otherwise the matchers run once over a decoded view of the message, and
// each finding is mapped back to the original bytes it came from: the
// placeholder replaces the whole original span, escapes included. Escapes
// are decoded once, not repeatedly (\\u0025 is %, not a percent escape),
// but for a percent-encoded percent sign before two hexadecimal digits:
// %255F, encoded twice, is '_'.
//
// Decoding changes what a delimiter means. A value written plainly,
// password=correct%20horse or "p\"ss", goes on across an escaped blank or
// quote: its writer escaped it so that it would. A value opened by an
// escaped separator or quote (%22password%22%3A%22…%22, {\"token\":\"…\"})
// ends at an escaped delimiter too. escMarks tells the matchers which
// bytes were escaped.

// escMarks marks the bytes of a view that were decoded from an escape: bit
// i is set when view byte i was written escaped in the original. It is nil
// for a message matched as it is.
type escMarks []uint64

// at reports whether view byte i was written escaped.
func (m escMarks) at(i int) bool {
	return m != nil && uint(i>>6) < uint(len(m)) && m[i>>6]&(1<<(uint(i)&63)) != 0
}

// A unit is one escape or invisible character of the original and what it
// decodes to: original bytes [o, o+on) became view bytes [v, v+vn). vn is
// 0 for an invisible character, which the view leaves out, or 1 in the
// view that reads it as a blank.
type unit struct{ v, o, vn, on int }

// A view is the decoded text of a message and what it takes to map a
// finding in it back to the original. Views are pooled: a message with
// escapes but without a finding costs no allocation either.
type view struct {
	buf       []byte
	units     []unit
	esc       escMarks
	invisible bool // the message has an invisible character (raw or escaped)
}

var views = sync.Pool{New: func() any { return new(view) }}

// maxPooled is the largest buffer a pooled view keeps for reuse.
const maxPooled = 1 << 20

// release returns w to the pool. The view's text must not be used after.
func (w *view) release() {
	if cap(w.buf) > maxPooled {
		*w = view{}
	}
	views.Put(w)
}

// firstEscape returns the index of the first escape or invisible
// character in in, or -1 if there is none.
func firstEscape(in string) int {
	first := len(in)
	for _, c := range [...]byte{'\\', '%', '&'} {
		from := 0
		for {
			k := strings.IndexByte(in[from:first], c)
			if k < 0 {
				break
			}
			if i := from + k; escapeLen(in, i) > 0 {
				first = i
				break
			} else {
				from = i + 1
			}
		}
	}
	for i := nonASCII(in, 0, first); i >= 0; i = nonASCII(in, i+1, first) {
		if specialLen(in, i) > 0 {
			first = i
			break
		}
	}
	if first == len(in) {
		return -1
	}
	return first
}

// mayEscape reports whether s holds a byte an escape or an invisible
// character may begin with.
func mayEscape(s string) bool {
	return strings.IndexByte(s, '\\') >= 0 || strings.IndexByte(s, '%') >= 0 || strings.IndexByte(s, '&') >= 0 ||
		nonASCII(s, 0, len(s)) >= 0
}

// nonASCII returns the index of the first byte of in[from:to] that is not
// ASCII, or -1. It looks at eight bytes at a time.
func nonASCII(in string, from, to int) int {
	if from >= to {
		return -1
	}
	s := in[from:to]
	i := 0
	for ; i+8 <= len(s); i += 8 {
		b := s[i : i+8]
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if w&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			return from + i
		}
	}
	return -1
}

// build decodes in into w and returns the view's text, which aliases w's
// buffer. in[:from] holds no escape. With split, each invisible character
// is read as a blank (not marked as escaped: it breaks a value as a blank
// does); otherwise it is left out.
func (w *view) build(in string, from int, split bool) string {
	w.buf = append(w.buf[:0], in[:from]...)
	w.units = w.units[:0]
	w.invisible = false
	words := (len(in) + 63) / 64
	if cap(w.esc) < words {
		w.esc = make(escMarks, words)
	}
	w.esc = w.esc[:words]
	clear(w.esc)
	for i := from; i < len(in); {
		// Copy the run of bytes that begin no escape at once.
		j := i
		for j < len(in) && chars[in[j]]&cEscape == 0 {
			j++
		}
		w.buf = append(w.buf, in[i:j]...)
		if i = j; i == len(in) {
			break
		}
		v := len(w.buf)
		var on int
		var kind unitKind
		if w.buf, on, kind = decodeAt(in, i, w.buf, split); on == 0 {
			w.buf = append(w.buf, in[i])
			i++
			continue
		}
		w.invisible = w.invisible || kind == decodedInvisible
		if kind == decodedEscape {
			for k := v; k < len(w.buf); k++ {
				w.esc[k>>6] |= 1 << (uint(k) & 63)
			}
		}
		w.units = append(w.units, unit{v, i, len(w.buf) - v, on})
		i += on
	}
	return unsafe.String(unsafe.SliceData(w.buf), len(w.buf))
}

// mapHits maps findings in the view, sorted and disjoint, to the original
// in place, and returns them: each covers the whole escapes its bytes came
// from. Two findings that then touch one escape are merged.
func (w *view) mapHits(hits []hit) []hit {
	out := hits[:0]
	for _, h := range hits {
		h.start, h.end = w.origStart(h.start), w.origEnd(h.end)
		if n := len(out); n > 0 && h.start < out[n-1].end {
			out[n-1].end = max(out[n-1].end, h.end)
			continue
		}
		out = append(out, h)
	}
	return out
}

// lastUnitAt returns the index of the last unit that begins at or before
// view byte p, or -1.
func (w *view) lastUnitAt(p int) int {
	lo, hi := 0, len(w.units)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if w.units[m].v <= p {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// origStart returns where view byte p begins in the original.
func (w *view) origStart(p int) int {
	k := w.lastUnitAt(p)
	if k < 0 {
		return p
	}
	u := w.units[k]
	if p < u.v+u.vn {
		return u.o
	}
	return u.o + u.on + p - (u.v + u.vn)
}

// origEnd returns where view byte p-1 ends in the original.
func (w *view) origEnd(p int) int {
	k := w.lastUnitAt(p - 1)
	if k < 0 {
		return p
	}
	u := w.units[k]
	if p-1 < u.v+u.vn {
		return u.o + u.on
	}
	return u.o + u.on + p - (u.v + u.vn)
}

// escapeLen returns the length of the escape or invisible character at
// in[i], or 0.
func escapeLen(in string, i int) int {
	var scratch [utf8.UTFMax]byte
	_, n, _ := decodeAt(in, i, scratch[:0], false)
	return n
}

// unitKind says what a unit of the view was in the original.
type unitKind uint8

const (
	decodedEscape    unitKind = iota + 1 // an escape: its view bytes are marked as escaped
	decodedInvisible                     // an invisible character, raw or escaped
	decodedLookAlike                     // a look-alike separator written raw, read as its ASCII
)

// decodeAt appends what the escape, invisible character or look-alike
// separator at in[i] stands for to dst and returns its length in the
// original and what it was, or dst and 0 if there is none at i. An
// invisible character (raw or escaped) stands for nothing, or for a blank
// with split.
func decodeAt(in string, i int, dst []byte, split bool) ([]byte, int, unitKind) {
	switch c := in[i]; c {
	case '\\':
		if i+1 >= len(in) {
			return dst, 0, 0
		}
		switch in[i+1] {
		case '"', '\\', '/', '\'':
			return append(dst, in[i+1]), 2, decodedEscape
		case 'u':
			r, n := jsonRune(in, i)
			if n == 0 {
				return dst, 0, 0
			}
			dst, kind := appendRead(dst, r, split)
			return dst, n, kind
		case 'x':
			if b, ok := hexByte(in, i+2); ok {
				return append(dst, b), 4, decodedEscape
			}
		}
	case '%':
		return decodePercent(in, i, dst, split)
	case '&':
		r, n := entity(in, i)
		if n == 0 {
			return dst, 0, 0
		}
		dst, kind := appendRead(dst, r, split)
		return dst, n, kind
	default:
		if c >= utf8.RuneSelf && specialLead[c] {
			r, n := utf8.DecodeRuneInString(in[i:])
			if invisible(r) {
				if split {
					dst = append(dst, ' ')
				}
				return dst, n, decodedInvisible
			}
			if a, ok := lookAlike(r); ok {
				return append(dst, a), n, decodedLookAlike
			}
		}
	}
	return dst, 0, 0
}

// hexByte decodes the two hexadecimal digits at in[i].
func hexByte(in string, i int) (byte, bool) {
	if i+2 > len(in) || chars[in[i]]&cHex == 0 || chars[in[i+1]]&cHex == 0 {
		return 0, false
	}
	return byte(hexVal(in[i])<<4 | hexVal(in[i+1])), true
}

// hex4 decodes the four hexadecimal digits at in[i].
func hex4(in string, i int) (rune, bool) {
	hi, ok1 := hexByte(in, i)
	lo, ok2 := hexByte(in, i+2)
	return rune(hi)<<8 | rune(lo), ok1 && ok2
}

// jsonRune decodes the JSON escape \uXXXX at in[i], or a surrogate pair
// of two. A lone surrogate is not decoded.
func jsonRune(in string, i int) (rune, int) {
	r, ok := hex4(in, i+2)
	switch {
	case !ok:
		return 0, 0
	case r < 0xd800 || r > 0xdfff:
		return r, 6
	case r <= 0xdbff && strings.HasPrefix(in[i+6:], `\u`):
		if r2, ok := hex4(in, i+8); ok && 0xdc00 <= r2 && r2 <= 0xdfff {
			return 0x10000 + (r-0xd800)<<10 + (r2 - 0xdc00), 12
		}
	}
	return 0, 0
}

// decodePercent decodes %XX at in[i]. The bytes of a multi-byte UTF-8
// character are decoded together, so that an encoded invisible character
// or look-alike is read like a raw one.
func decodePercent(in string, i int, dst []byte, split bool) ([]byte, int, unitKind) {
	b, ok := hexByte(in, i+1)
	if !ok {
		return dst, 0, 0
	}
	if b == '%' {
		// Encoded twice: %255F is %5F is '_'.
		if c, ok := hexByte(in, i+3); ok && c < 0x80 {
			return append(dst, c), 5, decodedEscape
		}
	}
	if b < 0xc0 {
		return append(dst, b), 3, decodedEscape
	}
	var seq [utf8.UTFMax]byte
	seq[0] = b
	n, j := 1, i+3
	for n < len(seq) && j+3 <= len(in) && in[j] == '%' {
		c, ok := hexByte(in, j+1)
		if !ok || c&0xc0 != 0x80 {
			break
		}
		seq[n] = c
		n++
		j += 3
		if utf8.FullRune(seq[:n]) {
			break
		}
	}
	r, size := utf8.DecodeRune(seq[:n])
	if r == utf8.RuneError || size != n {
		return append(dst, b), 3, decodedEscape
	}
	dst, kind := appendRead(dst, r, split)
	return dst, j - i, kind
}

// entities are the named HTML character references worth decoding: those
// that stand for delimiters.
var entities = [...]struct {
	name string
	r    rune
}{{"&amp;", '&'}, {"&nbsp;", 0xa0}, {"&quot;", '"'}, {"&apos;", '\''}, {"&lt;", '<'}, {"&gt;", '>'}, {"&sol;", '/'}, {"&colon;", ':'}, {"&equals;", '='}, {"&commat;", '@'}, {"&lowbar;", '_'}}

// entity decodes the HTML character reference at in[i]: a named one of
// entities, &#DDD; or &#xHHH;.
func entity(in string, i int) (rune, int) {
	rest := in[i:]
	if len(rest) < 4 {
		return 0, 0
	}
	if rest[1] != '#' {
		// Every name ends in ';' by its eighth byte: most '&' (a query's
		// &page=4) are ruled out by that alone.
		if !isLower(rest[1]) || strings.IndexByte(rest[2:min(len(rest), len("&lowbar;"))], ';') < 0 {
			return 0, 0
		}
		for _, e := range entities {
			if strings.HasPrefix(rest, e.name) {
				return e.r, len(e.name)
			}
		}
		return 0, 0
	}
	j, base := 2, rune(10)
	if rest[2] == 'x' || rest[2] == 'X' {
		j, base = 3, 16
	}
	var r rune
	k := j
	for ; k < len(rest) && k-j < 7; k++ {
		c := rest[k]
		switch {
		case isDigit(c):
			r = r*base + rune(c-'0')
		case base == 16 && chars[c]&cHex != 0:
			r = r*base + rune(hexVal(c))
		default:
			goto done
		}
	}
done:
	if k == j || k >= len(rest) || rest[k] != ';' || r > utf8.MaxRune || !utf8.ValidRune(r) {
		return 0, 0
	}
	return r, k + 1
}

// appendRead appends what the escaped character r is read as to dst: an
// invisible character nothing (a blank with split), a look-alike separator
// its ASCII, anything else itself; and what r was.
func appendRead(dst []byte, r rune, split bool) ([]byte, unitKind) {
	if invisible(r) {
		if split {
			dst = append(dst, ' ')
		}
		return dst, decodedInvisible
	}
	if a, ok := lookAlike(r); ok {
		// A look-alike separator, even escaped, separates as the ASCII
		// it imitates does: it is not an escaped delimiter, which a value
		// written plainly would go on across.
		return append(dst, a), decodedLookAlike
	}
	return utf8.AppendRune(dst, r), decodedEscape
}

// specialLead marks the first bytes of the UTF-8 encodings of the
// invisible characters and the look-alike separators, so that other text
// costs one lookup per byte.
var specialLead = func() (t [256]bool) {
	for _, c := range []byte{0xc2, 0xcd, 0xd8, 0xe1, 0xe2, 0xe3, 0xef, 0xf0, 0xf3} {
		t[c] = true
	}
	return t
}()

// specialLen returns the length of the invisible character or look-alike
// separator at in[i], or 0.
func specialLen(in string, i int) int {
	if !specialLead[in[i]] {
		return 0
	}
	r, n := utf8.DecodeRuneInString(in[i:])
	if invisible(r) {
		return n
	}
	if _, ok := lookAlike(r); ok {
		return n
	}
	return 0
}

// lookAlike returns the ASCII character that r, a separator or a
// fullwidth form, imitates closely enough that a reader takes it for that
// character: Unicode spaces (no-break, en, em, thin, narrow, ideographic
// …) for a blank, line and paragraph separators for a line break, Unicode
// hyphens, dashes and the minus sign for '-', the fullwidth forms of
// ASCII (U+FF01 to U+FF5E: letters, digits and punctuation) for their
// ASCII, and the small, ideographic and other look-alikes of '.', ':',
// '=', '@', '/' and '_'.
func lookAlike(r rune) (byte, bool) {
	switch {
	case r < 0x85:
		return 0, false
	case 0xff01 <= r && r <= 0xff5e:
		return byte(r - 0xfee0), true
	case r == 0xa0, r == 0x1680, 0x2000 <= r && r <= 0x200a, r == 0x202f, r == 0x205f, r == 0x3000:
		return ' ', true
	case r == 0x85, r == 0x2028, r == 0x2029:
		return '\n', true
	case 0x2010 <= r && r <= 0x2015, r == 0x2212, r == 0xfe58, r == 0xfe63:
		return '-', true
	case r == 0x2024, r == 0x3002, r == 0xfe52, r == 0xff61:
		return '.', true
	case r == 0x2236, r == 0xfe13, r == 0xfe55:
		return ':', true
	case r == 0xfe66:
		return '=', true
	case r == 0xfe6b:
		return '@', true
	case r == 0x2044, r == 0x2215:
		return '/', true
	case 0xfe4d <= r && r <= 0xfe4f:
		return '_', true
	}
	return 0, false
}

// invisible reports whether r is a format or filler character that
// renders as nothing and that the matchers ignore: zero-width spaces and
// joiners, bidirectional marks and controls, the byte order mark, soft
// hyphens, variation selectors, tag characters and fillers.
func invisible(r rune) bool {
	switch {
	case r == 0xad, r == 0x34f, r == 0x61c, r == 0x115f, r == 0x1160, r == 0x17b4, r == 0x17b5,
		0x180b <= r && r <= 0x180f, 0x200b <= r && r <= 0x200f, 0x202a <= r && r <= 0x202e,
		0x2060 <= r && r <= 0x2064, 0x2066 <= r && r <= 0x206f, r == 0x3164,
		0xfe00 <= r && r <= 0xfe0f, r == 0xfeff, r == 0xffa0,
		0x1d173 <= r && r <= 0x1d17a, 0xe0000 <= r && r <= 0xe007f, 0xe0100 <= r && r <= 0xe01ef:
		return true
	}
	return false
}

// Encoded secrets. A run of base64 (standard or URL-safe, padded or not)
// or hexadecimal characters that decodes to printable text with a
// finding inside, such as base64("password=hunter2"), is redacted whole
// as the family of that finding. A run wrapped into lines of equal length
// (MIME's 76 columns) is one run.
//
// The work is bounded. A run is tried once, when the scanner meets its
// first word of 8 bytes or more that no matcher takes, and only if it is
// minEncoded to maxEncoded bytes long. Its bytes are decoded a few at a
// time and the attempt stops at the first byte that is not printable
// ASCII, which is where binary data (hashes, digests, random ids) stops,
// almost always within the first few bytes. Only text is decoded whole,
// into a pooled buffer, and scanned like a message (escapes included);
// inside it, encodings are read again up to maxDecodeDepth levels deep.
// Each level is at most three quarters of the length of the one around
// it, so a message costs at most a few times a scan of its length.
const (
	minEncoded     = 16   // shortest run decoded
	maxEncoded     = 4096 // longest run decoded
	maxDecodeDepth = 2    // encodings inside decoded text read
	minWrapLine    = 60   // shortest line of a wrapped run
)

// depthShift places the decoding depth of a scan in the bits of its
// seen that no byte class uses.
const (
	depthShift        = 29
	depthMask  uint32 = 3 << depthShift
)

// b64Val maps base64 characters of both alphabets to their values, and
// every other byte to 0xff.
var b64Val = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	for i := 0; i < len(std); i++ {
		t[std[i]] = byte(i)
	}
	t['+'], t['-'] = 62, 62
	t['/'], t['_'] = 63, 63
	return t
}()

// printable marks the bytes decoded text may hold: printable ASCII and
// tabs and line breaks.
var printable = func() (t [256]bool) {
	for c := ' '; c <= '~'; c++ {
		t[c] = true
	}
	t['\t'], t['\n'], t['\r'] = true, true, true
	return t
}()

// encodedBufs pools the buffers decoded text is written to.
var encodedBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// An encodedRun is a run of encoded characters: in[start:end], made of
// lines of the same length when it was wrapped, and its padding.
type encodedRun struct {
	start, end int
	hex        bool
}

// findEncodedRun returns the run of encoded characters around the word
// in[ws:we], not before from, and where a scan may try the next one.
func findEncodedRun(in string, ws, we, from, limit int) (r encodedRun, next int, ok bool) {
	s := ws
	for s > from && ws-s < maxEncoded && b64Val[in[s-1]] != 0xff {
		s--
	}
	// Binary data stops being text in its first bytes: a look at the
	// first four characters, read as base64 and as hexadecimal, rules
	// out almost every run before it is read further.
	if s+4 > limit || !textStart(in[s:s+4]) {
		return encodedRun{}, we, false
	}
	// (u: in from the word up to where the scan must stop, with j counting
	// up from 0, so that the compiler checks no read; four bytes at one
	// look while all four are encoded characters, whose values have the
	// high bit clear.)
	u, j := in[ws:max(ws, min(limit, s+maxEncoded+1))], 0
	for j < len(u)-3 && (b64Val[u[j]]|b64Val[u[j+1]]|b64Val[u[j+2]]|b64Val[u[j+3]])&0x80 == 0 {
		j += 4
	}
	for j < len(u) && b64Val[u[j]] != 0xff {
		j++
	}
	e := ws + j
	n := e - s
	// The lines of a wrapped run: all as long as the first or, when the
	// first has something else before it on its line, as the second; the
	// last no longer. A line break right after a full line joins them.
	width := 0
	if n >= minWrapLine {
		width = n
	}
	for e-s <= maxEncoded {
		b := lineBreak(in, e)
		if b == 0 || e+b >= limit || b64Val[in[e+b]] == 0xff {
			break
		}
		f := e + b
		g := f
		for g < limit && g-f <= max(width, maxEncoded) && b64Val[in[g]] != 0xff {
			g++
		}
		m := g - f
		if width == 0 {
			if m < minWrapLine || lineBreak(in, g) == 0 {
				break
			}
			width = m
		} else if m > width {
			break
		}
		e, n = g, n+m
		if m < width {
			break
		}
	}
	next = e
	for p := e; p < limit && p-e < 2 && in[p] == '='; p++ {
		next = p + 1
	}
	if n < minEncoded || e-s > maxEncoded || s > from && chars[in[s-1]]&cWord != 0 {
		return encodedRun{}, next, false
	}
	r = encodedRun{start: s, end: next}
	r.hex = n%2 == 0 && n >= 32 && hexLines(in[s:e])
	return r, next, true
}

// hexLines reports whether s holds hexadecimal digits and line breaks
// alone.
func hexLines(s string) bool {
	k := 0
	for k < len(s)-3 && hexOrBreak[s[k]]&hexOrBreak[s[k+1]]&hexOrBreak[s[k+2]]&hexOrBreak[s[k+3]] != 0 {
		k += 4
	}
	for k < len(s) && hexOrBreak[s[k]] != 0 {
		k++
	}
	return k == len(s)
}

// hexOrBreak is 1 for hexadecimal digits and line breaks.
var hexOrBreak = func() (t [256]uint8) {
	for c := range t {
		if chars[c]&cHex != 0 || c == '\n' || c == '\r' {
			t[c] = 1
		}
	}
	return t
}()

// textStart reports whether the four characters q begin base64 or
// hexadecimal that decodes to printable text.
func textStart(q string) bool {
	a, b, c, d := b64Val[q[0]], b64Val[q[1]], b64Val[q[2]], b64Val[q[3]]
	if a|b|c|d != 0xff && a != 0xff && b != 0xff && c != 0xff && d != 0xff {
		n := uint32(a)<<18 | uint32(b)<<12 | uint32(c)<<6 | uint32(d)
		if printable[byte(n>>16)] && printable[byte(n>>8)] && printable[byte(n)] {
			return true
		}
	}
	x, ok1 := hexByte(q, 0)
	y, ok2 := hexByte(q, 2)
	return ok1 && ok2 && printable[x] && printable[y]
}

// decodeRun decodes the run into dst if all of it decodes to printable
// text, and reports whether it did. With dst nil it only checks. The run
// holds encoded characters, line breaks between its lines and padding at
// its end; hexadecimal is read in pairs from each line's start (an odd
// last digit of a line is dropped), base64 across its lines.
func decodeRun(in string, r encodedRun, dst *[]byte) bool {
	t := in[:r.end] // (reads the compiler does not check)
	if r.hex {
		for k := r.start; k < len(t); {
			if b64Val[t[k]] == 0xff || k+1 == len(t) || b64Val[t[k+1]] == 0xff {
				k++ // a line break, the padding, or a line's odd last digit
				continue
			}
			c := byte(hexVal(t[k])<<4 | hexVal(t[k+1])) // (hexadecimal digits: r.hex)
			if !printable[c] {
				return false
			}
			if dst != nil {
				*dst = append(*dst, c)
			}
			k += 2
		}
		return true
	}
	var acc uint32
	bits := 0
	for k := r.start; k < len(t); k++ {
		v := b64Val[t[k]]
		if v == 0xff {
			continue // a line break or the padding
		}
		acc = acc<<6 | uint32(v)
		if bits += 6; bits >= 8 {
			bits -= 8
			c := byte(acc >> bits)
			if !printable[c] {
				return false
			}
			if dst != nil {
				*dst = append(*dst, c)
			}
		}
	}
	return true
}

// matchEncoded matches the run of encoded characters around the word
// in[ws:we] if it decodes to text with a finding inside, and returns
// where a scan may try the next run. depth is how deep in decoded text
// the scan already is.
func (s *Scrubber) matchEncoded(in string, ws, we, from, limit int, depth uint32) (hit, int, bool) {
	r, next, ok := findEncodedRun(in, ws, we, from, limit)
	if !ok || !decodeRun(in, r, nil) {
		return hit{}, next, false
	}
	bp := encodedBufs.Get().(*[]byte)
	*bp = (*bp)[:0]
	decodeRun(in, r, bp)
	text := unsafe.String(unsafe.SliceData(*bp), len(*bp))
	f, found := s.findingIn(text, depth+1)
	if !found && !r.hex && s.on[famBasicAuth] && basicCredentials(text) {
		f, found = famBasicAuth, true
	}
	if cap(*bp) <= maxPooled {
		encodedBufs.Put(bp)
	}
	if !found {
		return hit{}, next, false
	}
	return hit{r.start, r.end, f}, next, true
}

// findingIn returns the family of the first finding in text, decoded
// text at this depth, which it does not keep.
func (s *Scrubber) findingIn(text string, depth uint32) (family, bool) {
	seen := depth << depthShift
	h, ok := s.next(text, nil, 0, len(text), &seen, nil)
	if !ok && seen&escapeFound != 0 {
		if k := firstEscape(text); k >= 0 {
			w := views.Get().(*view)
			v := w.build(text, k, false)
			h, ok = s.next(v, w.esc, 0, len(v), &seen, nil)
			w.release()
		}
	}
	return h.fam, ok
}

// basicCredentials reports whether text, decoded from base64, is
// user:password and nothing else: the credentials of HTTP Basic
// authentication without their scheme (YWRtaW46cGFzc3dvcmQ=, a
// Kubernetes Secret's value, curl's header). The user name is a name (1
// to 64 letters, digits, '.', '_', '-', '@', '+'); the password 6 to 128
// printable bytes without a blank or another ':', not digits alone (a
// cursor's offset:100 is no password).
func basicCredentials(text string) bool {
	c := strings.IndexByte(text, ':')
	if c < 1 || c > 64 || len(text)-c-1 < 6 || len(text)-c-1 > 128 {
		return false
	}
	for k := 0; k < c; k++ {
		if b := text[k]; b >= 0x80 || chars[b]&cUser == 0 && b != '@' && b != '+' {
			return false
		}
	}
	digits := true
	for k := c + 1; k < len(text); k++ {
		b := text[k]
		if b <= ' ' || b > '~' || b == ':' {
			return false
		}
		digits = digits && isDigit(b)
	}
	return !digits
}
