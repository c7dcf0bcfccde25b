package guardrail

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// MaxDepth caps how deeply arrays and objects may nest in the arguments a
// guardrail reads, as the root's argument decoder does: deeper arguments
// end the call as tool-args-invalid (too_deep) before any check runs.
const MaxDepth = 256

// decoded is what a guardrail reads of a call's arguments or a JSON result:
// the text with every string decoded, and, when asked for, every string and
// number on its own.
type decoded struct {
	text   []byte   // the JSON with no optional escape and no white space between tokens
	values []string // every key, string value (decoded) and number (as written), in order
}

// errSyntax and errTooDeep end a reading; the layer turns them into the
// call's error.
type readError int

const (
	errSyntax readError = iota + 1
	errTooDeep
)

func (e readError) Error() string {
	if e == errTooDeep {
		return "guardrail: nested too deeply"
	}
	return "guardrail: not JSON"
}

// argsError is the call's error for arguments a guardrail cannot read.
func argsError(err error) error {
	if err == errTooDeep {
		return taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "too_deep", Loc: []any{},
			Msg: "Input should be nested at most " + strconv.Itoa(MaxDepth) + " levels deep"})
	}
	return taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "json_invalid", Loc: []any{}, Msg: "Input is not valid JSON"})
}

// tooLarge is the call's error for arguments over the spec's size cap, as
// the root reports it: they are not read.
func tooLarge(maxBytes int) error {
	return taxonomy.New(taxonomy.KindArgsInvalid, taxonomy.CodeArgsTooLarge, "arguments exceed the size cap").
		WithFields(taxonomy.FieldError{Type: "too_large", Loc: []any{}, Msg: "Input should be at most " + strconv.Itoa(maxBytes) + " bytes"})
}

// maxArgsBytes is the size cap of the call's spec, as toolmw.Wrap applies
// it.
func maxArgsBytes(call toolmw.Call) int {
	if call.Spec != nil && call.Spec.MaxArgsBytes > 0 {
		return call.Spec.MaxArgsBytes
	}
	return toolmw.DefaultMaxArgsBytes
}

// read reads one JSON document in a single pass, bounded by len(in) and
// MaxDepth. The text it returns is in itself when nothing needed changing
// (no allocation); otherwise a copy in which:
//
//   - every escape a string does not need is decoded: \/ and every \uXXXX
//     (surrogate pairs joined) become the character itself;
//   - what must stay escaped is written in one form: \" \\ \b \f \n \r \t,
//     and \u00xx (lower-case hex) for the other control characters;
//   - a lone surrogate escape and a byte that is not UTF-8 become U+FFFD,
//     the character Go's JSON decoder reads them as;
//   - white space between tokens is dropped.
//
// Keys are strings like any other. With values, every key and string value
// (decoded) and every number (as written) is also returned on its own.
func read(in []byte, values bool) (decoded, error) {
	r := reader{in: in, values: values}
	r.ws()
	if r.pos == len(in) {
		return decoded{text: in}, nil // no arguments: nothing to read
	}
	if err := r.value(0); err != nil {
		return decoded{}, err
	}
	r.ws()
	if r.pos != len(in) {
		return decoded{}, errSyntax
	}
	text := in
	if r.out != nil {
		text = r.out
	}
	return decoded{text: text, values: r.vals}, nil
}

type reader struct {
	in     []byte
	pos    int
	out    []byte // nil while the text is in[:pos] unchanged
	values bool
	vals   []string
	str    []byte // the string being decoded, when values
}

// own makes out hold a copy of in[:pos], from which on the text differs.
func (r *reader) own() {
	if r.out == nil {
		r.out = make([]byte, r.pos, len(r.in))
		copy(r.out, r.in[:r.pos])
	}
}

// keep moves past in[pos:end], kept as it is.
func (r *reader) keep(end int) {
	if r.out != nil {
		r.out = append(r.out, r.in[r.pos:end]...)
	}
	r.pos = end
}

// ws drops white space.
func (r *reader) ws() {
	start := r.pos
	for r.pos < len(r.in) {
		switch r.in[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
			continue
		}
		break
	}
	if r.pos > start && r.out == nil {
		end := r.pos
		r.pos = start
		r.own()
		r.pos = end
	}
}

func (r *reader) value(depth int) error {
	if r.pos >= len(r.in) {
		return errSyntax
	}
	switch c := r.in[r.pos]; {
	case c == '{' || c == '[':
		return r.container(depth + 1)
	case c == '"':
		return r.string()
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return r.number()
	}
	return errSyntax
}

func (r *reader) container(depth int) error {
	if depth > MaxDepth {
		return errTooDeep
	}
	closing := byte(']')
	object := r.in[r.pos] == '{'
	if object {
		closing = '}'
	}
	r.keep(r.pos + 1)
	r.ws()
	if r.pos < len(r.in) && r.in[r.pos] == closing {
		r.keep(r.pos + 1)
		return nil
	}
	for {
		if object {
			if r.pos >= len(r.in) || r.in[r.pos] != '"' {
				return errSyntax
			}
			if err := r.string(); err != nil {
				return err
			}
			r.ws()
			if r.pos >= len(r.in) || r.in[r.pos] != ':' {
				return errSyntax
			}
			r.keep(r.pos + 1)
			r.ws()
		}
		if err := r.value(depth); err != nil {
			return err
		}
		r.ws()
		if r.pos >= len(r.in) {
			return errSyntax
		}
		switch r.in[r.pos] {
		case ',':
			r.keep(r.pos + 1)
			r.ws()
		case closing:
			r.keep(r.pos + 1)
			return nil
		default:
			return errSyntax
		}
	}
}

func (r *reader) literal(word string) error {
	if len(r.in)-r.pos < len(word) || string(r.in[r.pos:r.pos+len(word)]) != word {
		return errSyntax
	}
	r.keep(r.pos + len(word))
	return nil
}

// number checks a number's grammar and keeps it as written.
func (r *reader) number() error {
	i := r.pos
	digits := func() int {
		n := 0
		for i < len(r.in) && r.in[i] >= '0' && r.in[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if r.in[i] == '-' {
		i++
	}
	if i < len(r.in) && r.in[i] == '0' {
		i++
	} else if digits() == 0 {
		return errSyntax
	}
	if i < len(r.in) && r.in[i] == '.' {
		i++
		if digits() == 0 {
			return errSyntax
		}
	}
	if i < len(r.in) && (r.in[i] == 'e' || r.in[i] == 'E') {
		i++
		if i < len(r.in) && (r.in[i] == '+' || r.in[i] == '-') {
			i++
		}
		if digits() == 0 {
			return errSyntax
		}
	}
	if r.values {
		r.vals = append(r.vals, string(r.in[r.pos:i]))
	}
	r.keep(i)
	return nil
}

// string reads a string (at the opening quote), writing it with the fewest
// escapes JSON allows.
func (r *reader) string() error {
	r.keep(r.pos + 1)
	r.str = r.str[:0]
	for {
		if r.pos >= len(r.in) {
			return errSyntax
		}
		c := r.in[r.pos]
		switch {
		case c == '"':
			r.keep(r.pos + 1)
			if r.values {
				r.vals = append(r.vals, string(r.str))
			}
			return nil
		case c < 0x20:
			return errSyntax
		case c == '\\':
			if err := r.escape(); err != nil {
				return err
			}
		case c < utf8.RuneSelf:
			r.char(rune(c))
			r.keep(r.pos + 1)
		default:
			ch, size := utf8.DecodeRune(r.in[r.pos:])
			if ch == utf8.RuneError && size == 1 {
				r.replace(r.pos+1, utf8.RuneError)
				continue
			}
			r.char(ch)
			r.keep(r.pos + size)
		}
	}
}

// char adds ch to the decoded string, when values are asked for.
func (r *reader) char(ch rune) {
	if r.values {
		r.str = utf8.AppendRune(r.str, ch)
	}
}

// replace writes ch in place of in[pos:end], in the one form read gives
// it; when in[pos:end] is that form already, the text is unchanged.
func (r *reader) replace(end int, ch rune) {
	r.char(ch)
	var buf [utf8.UTFMax + 2]byte
	enc := buf[:0]
	switch ch {
	case '"', '\\':
		enc = append(enc, '\\', byte(ch))
	case '\b':
		enc = append(enc, '\\', 'b')
	case '\f':
		enc = append(enc, '\\', 'f')
	case '\n':
		enc = append(enc, '\\', 'n')
	case '\r':
		enc = append(enc, '\\', 'r')
	case '\t':
		enc = append(enc, '\\', 't')
	default:
		if ch < 0x20 {
			const hex = "0123456789abcdef"
			enc = append(enc, '\\', 'u', '0', '0', hex[ch>>4], hex[ch&0xf])
		} else {
			enc = utf8.AppendRune(enc, ch)
		}
	}
	if r.out == nil && string(r.in[r.pos:end]) == string(enc) {
		r.pos = end
		return
	}
	r.own()
	r.out = append(r.out, enc...)
	r.pos = end
}

// escape reads one escape (at its backslash).
func (r *reader) escape() error {
	if r.pos+1 >= len(r.in) {
		return errSyntax
	}
	switch e := r.in[r.pos+1]; e {
	case '"', '\\':
		r.char(rune(e))
		r.keep(r.pos + 2)
	case 'b', 'f', 'n', 'r', 't':
		r.char(control(e))
		r.keep(r.pos + 2)
	case '/':
		r.replace(r.pos+2, '/')
	case 'u':
		ch, ok := hex4(r.in, r.pos+2)
		if !ok {
			return errSyntax
		}
		end := r.pos + 6
		if utf16.IsSurrogate(ch) {
			lo := rune(-1)
			if end+6 <= len(r.in) && r.in[end] == '\\' && r.in[end+1] == 'u' {
				if l, ok := hex4(r.in, end+2); ok {
					lo = l
				}
			}
			if pair := utf16.DecodeRune(ch, lo); pair != utf8.RuneError {
				ch, end = pair, end+6
			} else {
				ch = utf8.RuneError
			}
		}
		r.replace(end, ch)
	default:
		return errSyntax
	}
	return nil
}

// control returns the control character of a short escape (b f n r t).
func control(e byte) rune {
	switch e {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	}
	return '\t'
}

// hex4 reads the four hex digits at in[i:].
func hex4(in []byte, i int) (rune, bool) {
	if len(in)-i < 4 {
		return 0, false
	}
	var ch rune
	for _, c := range in[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			ch = ch<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			ch = ch<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			ch = ch<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return ch, true
}
