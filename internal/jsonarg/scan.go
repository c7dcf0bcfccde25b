package jsonarg

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/toolmw/toolmw/internal/fold"
)

// MaxDepth caps how deeply arrays and objects may nest in the arguments:
// deeper input is rejected before it can exhaust the stack of the decoder
// or of a schema validator.
const MaxDepth = 256

// errSyntax aborts a decode when the input is not JSON; it never leaves
// the package.
type syntaxError struct{}

// scanner reads one JSON document from data. Syntax errors panic with
// syntaxError{}, recovered by the entry points; every other problem is a
// field error at the current location, so the walk goes on and reports
// them all.
type scanner struct {
	data  []byte
	pos   int
	depth int
	loc   []any
	errs  []fieldErr
	nerrs int
}

// fieldErr is a field error before its location is copied out.
type fieldErr struct {
	typ, msg string
	loc      []any
}

func (s *scanner) fail(typ, msg string) {
	s.nerrs++
	if len(s.errs) >= MaxFieldErrors {
		return
	}
	s.errs = append(s.errs, fieldErr{typ: typ, msg: msg, loc: append([]any{}, s.loc...)})
}

func (s *scanner) push(elem any) { s.loc = append(s.loc, elem) }
func (s *scanner) pop()          { s.loc = s.loc[:len(s.loc)-1] }

func (s *scanner) syntax() { panic(syntaxError{}) }

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

func (s *scanner) expect(c byte) {
	if s.peek() != c {
		s.syntax()
	}
	s.pos++
}

func (s *scanner) literal(word string) {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		s.syntax()
	}
	s.pos += len(word)
}

func (s *scanner) enter() {
	s.depth++
	if s.depth > MaxDepth {
		s.fail("too_deep", "Input should be nested at most "+strconv.Itoa(MaxDepth)+" levels deep")
		panic(tooDeep{})
	}
}

func (s *scanner) leave() { s.depth-- }

// tooDeep aborts a decode whose input nests deeper than MaxDepth.
type tooDeep struct{}

// more reads the separator after a member or element: true when another
// follows, false at the closing byte.
func (s *scanner) more(closing byte) bool {
	switch s.peek() {
	case ',':
		s.pos++
		return true
	case closing:
		s.pos++
		return false
	}
	s.syntax()
	return false
}

// first reports whether an array or object just opened has a first
// element, consuming the closing byte when it has none.
func (s *scanner) first(closing byte) bool {
	if s.peek() == closing {
		s.pos++
		return false
	}
	return true
}

// str reads a string and returns its content as written (escapes
// included), whether it holds escapes, and whether it is valid Unicode:
// UTF-8 throughout and no lone surrogate escape.
func (s *scanner) str() (raw []byte, escaped, valid bool) {
	if s.peek() != '"' {
		s.syntax()
	}
	s.pos++
	start := s.pos
	valid = true
	for {
		if s.pos >= len(s.data) {
			s.syntax()
		}
		c := s.data[s.pos]
		switch {
		case c == '"':
			raw = s.data[start:s.pos]
			s.pos++
			return raw, escaped, valid
		case c == '\\':
			escaped = true
			s.pos++
			if s.pos >= len(s.data) {
				s.syntax()
			}
			switch s.data[s.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos++
			case 'u':
				r := s.hex4()
				if utf16.IsSurrogate(r) {
					// A high surrogate must be followed by a low one.
					if r >= 0xDC00 || s.pos+1 >= len(s.data) || s.data[s.pos] != '\\' || s.data[s.pos+1] != 'u' {
						valid = false
						continue
					}
					s.pos++
					if r2 := s.hex4(); r2 < 0xDC00 || r2 > 0xDFFF {
						valid = false
					}
				}
			default:
				s.syntax()
			}
		case c < 0x20:
			s.syntax()
		case c < utf8.RuneSelf:
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.data[s.pos:])
			if r == utf8.RuneError && size == 1 {
				valid = false
			}
			s.pos += size
		}
	}
}

// hex4 reads the four hex digits after "\u" (s.pos at the u).
func (s *scanner) hex4() rune {
	if len(s.data)-s.pos < 5 {
		s.syntax()
	}
	var r rune
	for _, c := range s.data[s.pos+1 : s.pos+5] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			s.syntax()
		}
	}
	s.pos += 5
	return r
}

// unquote returns the string a str content stands for.
func unquote(raw []byte, escaped bool) string {
	if !escaped {
		return string(raw)
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hexRune(raw[i+1 : i+5])
			i += 5
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2 = hexRune(raw[i+2 : i+6])
				}
				if dr := utf16.DecodeRune(r, r2); dr != utf8.RuneError {
					r = dr
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, raw[i])
		}
		i++
	}
	return string(out)
}

func hexRune(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		default:
			r = r<<4 | rune(c-'A'+10)
		}
	}
	return r
}

// number reads a number and returns its text.
func (s *scanner) number() []byte {
	start := s.pos
	d := s.data
	i := s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		s.syntax()
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			s.syntax()
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			s.syntax()
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	s.pos = i
	return d[start:i]
}

const numberBoundsMsg = "Input should be a number of at most 64 characters, with at most 3 exponent digits, within ±1.7976931348623157e+308"

// checkNumber applies the bounds every number meets (see MaxNumberLen),
// reporting a number_bounds error; it returns whether they hold.
func (s *scanner) checkNumber(lit []byte) bool {
	if !numberInBounds(lit) {
		s.fail("number_bounds", numberBoundsMsg)
		return false
	}
	return true
}

func numberInBounds(lit []byte) bool {
	if len(lit) > MaxNumberLen {
		return false
	}
	for i, c := range lit {
		if c == 'e' || c == 'E' {
			exp := lit[i+1:]
			if len(exp) > 0 && (exp[0] == '+' || exp[0] == '-') {
				exp = exp[1:]
			}
			for len(exp) > 1 && exp[0] == '0' {
				exp = exp[1:]
			}
			if len(exp) > MaxExponentDigits {
				return false
			}
			break
		}
	}
	return within(lit, maxFloat64, MaxFloat64Text)
}

// within reports whether |lit| ≤ bound exactly, where top is bound
// rounded to a float64.
func within(lit []byte, top float64, bound string) bool {
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil && !math.IsInf(f, 0) {
		return false
	}
	switch a := math.Abs(f); {
	case a < top:
		return true
	case a > top:
		return false
	}
	x, ok := new(big.Rat).SetString(string(lit))
	b, _ := new(big.Rat).SetString(bound)
	return ok && x.Abs(x).Cmp(b) <= 0
}

// skip reads any value, applying the checks every value gets (Unicode,
// number bounds, duplicate keys, depth), and returns its text.
func (s *scanner) skip() []byte {
	s.ws()
	start := s.pos
	s.anyValue(false, false)
	return s.data[start:s.pos]
}

// anyValue reads any value with the checks of skip. When build is true it
// returns the value as encoding/json decodes into an empty interface:
// map[string]any, []any, string, bool, nil, and numbers as float64 (or as
// json.Number when numbers is true).
func (s *scanner) anyValue(build, numbers bool) any {
	switch c := s.peek(); {
	case c == '{':
		s.pos++
		s.enter()
		var obj map[string]any
		if build {
			obj = map[string]any{}
		}
		var seen keySet
		for more := s.first('}'); more; more = s.more('}') {
			raw, esc, valid := s.str()
			s.expect(':')
			key := unquote(raw, esc)
			s.push(Placeholder)
			if !valid {
				s.fail("string_unicode", "Key should be valid UTF-8 without lone surrogates")
			}
			if seen.add(key) {
				s.fail("duplicate_key", "Keys should be unique within an object")
			}
			v := s.anyValue(build, numbers)
			s.pop()
			if build {
				obj[key] = v
			}
		}
		s.leave()
		if build {
			return obj
		}
		return nil
	case c == '[':
		s.pos++
		s.enter()
		var arr []any
		if build {
			arr = []any{}
		}
		i := 0
		for more := s.first(']'); more; more = s.more(']') {
			s.push(i)
			v := s.anyValue(build, numbers)
			s.pop()
			if build {
				arr = append(arr, v)
			}
			i++
		}
		s.leave()
		if build {
			return arr
		}
		return nil
	case c == '"':
		raw, esc, valid := s.str()
		if !valid {
			s.fail("string_unicode", "Input should be valid UTF-8 without lone surrogates")
		}
		if build {
			return unquote(raw, esc)
		}
	case c == 't':
		s.literal("true")
		return true
	case c == 'f':
		s.literal("false")
		return false
	case c == 'n':
		s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		lit := s.number()
		ok := s.checkNumber(lit)
		if build {
			if numbers {
				return json.Number(lit)
			}
			if !ok {
				return 0.0
			}
			f, _ := strconv.ParseFloat(string(lit), 64)
			return f
		}
	default:
		s.syntax()
	}
	return nil
}

// keySet records the keys of one object to find duplicates: keys equal
// as they are, and keys equal under Unicode simple case folding
// (strings.EqualFold: "To" and "to", "ſ" and "s", the Kelvin sign and
// "k"), which encoding/json matches to the same struct field, so that
// whichever comes last would win in a tool that decodes the object with
// it. Small objects never allocate a map.
type keySet struct {
	few  [8]string
	n    int
	many map[string]struct{} // folded keys, once there are more than len(few)
}

// add records key and reports whether a key equal to it, or equal under
// case folding, was already there.
func (k *keySet) add(key string) bool {
	if k.many == nil {
		for _, have := range k.few[:k.n] {
			if have == key || strings.EqualFold(have, key) {
				return true
			}
		}
		if k.n < len(k.few) {
			k.few[k.n] = key
			k.n++
			return false
		}
		k.many = make(map[string]struct{}, 2*len(k.few))
		for _, have := range k.few {
			k.many[folded(have)] = struct{}{}
		}
	}
	f := folded(key)
	if _, dup := k.many[f]; dup {
		return true
	}
	k.many[f] = struct{}{}
	return false
}

// folded returns the case folding of s (internal/fold: the rule
// canonjson decides with too).
func folded(s string) string {
	return string(fold.Append(make([]byte, 0, len(s)), s))
}

// Placeholder stands in a location for an object key that came from the
// input (a map key, a key that matches no field): keys are input, and
// input never appears in an error.
const Placeholder = "*"
