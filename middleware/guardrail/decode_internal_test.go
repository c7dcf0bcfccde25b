package guardrail

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// tokens returns what encoding/json reads as the strings (keys included)
// and numbers of doc, in order.
func tokens(t *testing.T, doc []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var out []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		switch v := tok.(type) {
		case string:
			out = append(out, v)
		case json.Number:
			out = append(out, string(v))
		}
	}
}

// checkRead holds read to its promise on in: it accepts exactly what
// encoding/json accepts (within MaxDepth); its text is JSON that decodes to
// what in decodes to, with no optional escape and no white space between
// tokens; its values are the strings and numbers encoding/json reads; and
// clean input comes back as it is.
func checkRead(t *testing.T, in []byte) {
	d, err := read(in, true)
	if len(bytes.TrimLeft(in, " \t\r\n")) == 0 {
		if err != nil || !bytes.Equal(d.text, in) || d.values != nil {
			t.Fatalf("%q: no arguments read as %q, %v", in, d.text, err)
		}
		return
	}
	if err == errTooDeep {
		return
	}
	if valid := json.Valid(in); valid != (err == nil) {
		t.Fatalf("%q: json.Valid %v, read %v", in, valid, err)
	}
	if err != nil {
		return
	}
	if !json.Valid(d.text) {
		t.Fatalf("%q: read as %q, not JSON", in, d.text)
	}
	want, werr := decodeAny(in)
	got, gerr := decodeAny(d.text)
	if werr != nil || gerr != nil || !reflect.DeepEqual(want, got) {
		t.Fatalf("%q: read as %q, which decodes to %v, not %v", in, d.text, got, want)
	}
	if w := tokens(t, in); !reflect.DeepEqual(w, d.values) && !(len(w) == 0 && len(d.values) == 0) {
		t.Fatalf("%q: values %q, want %q", in, d.values, w)
	}
	if !utf8.Valid(d.text) || strings.Contains(string(d.text), `\/`) {
		t.Fatalf("%q: read as %q", in, d.text)
	}
	for i := 0; i < len(d.text); i++ {
		if d.text[i] != '\\' {
			continue
		}
		i++
		switch e := d.text[i]; {
		case e == 'u':
			h := string(d.text[i+1 : i+5])
			v, err := strconv.ParseUint(h, 16, 16)
			if err != nil || h != strings.ToLower(h) || v >= 0x20 || strings.ContainsRune("\b\f\n\r\t", rune(v)) {
				t.Fatalf("%q: read as %q, an optional escape kept", in, d.text)
			}
		case !strings.ContainsRune(`"\bfnrt`, rune(e)):
			t.Fatalf("%q: read as %q, an optional escape kept", in, d.text)
		}
	}
	inString := false
	for i := 0; i < len(d.text); i++ {
		switch c := d.text[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\r' || c == '\n'):
			t.Fatalf("%q: read as %q, white space kept", in, d.text)
		}
	}
	if d2, _ := read(d.text, false); !bytes.Equal(d2.text, d.text) || &d2.text[0] != &d.text[0] {
		t.Fatalf("%q: read is not idempotent, or copies clean input: %q", d.text, d2.text)
	}
}

// decodeAny decodes doc as encoding/json does, numbers as written.
func decodeAny(doc []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

var readSeeds = []string{
	`{"text":"card \u0034556 7375 8689 9855"}`,
	`{"a":[1,-2.5e+3,true,false,null,{"b\/c":"\ud83d\ude00 \ud800 x\u0000\u001f\u000a\""}]}`,
	` [ "a" , "b\\u0034" ] `,
	`"\u00e9t\u00C9"`,
	"\"\xff\xfe\"",
	`{"k":"v","k":"w"}`,
	`12`, `-0.0e-0`, `01`, `1.`, `{"a":}`, `[1,]`, `"\x"`, `"\u12"`, `{"a" 1}`, `nul`,
	strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
	strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
	"",
	" ",
}

func TestRead(t *testing.T) {
	for _, s := range readSeeds {
		checkRead(t, []byte(s))
	}
	d, err := read([]byte(strings.Repeat("[", MaxDepth+1)+strings.Repeat("]", MaxDepth+1)), false)
	if err != errTooDeep {
		t.Fatalf("%v, %q; want too deep", err, d.text)
	}
	clean := []byte(`{"text":"card 4556 7375 8689 9855","n":[1,2]}`)
	if allocs := testing.AllocsPerRun(100, func() { _, _ = read(clean, false) }); allocs != 0 {
		t.Fatalf("clean arguments cost %v allocations", allocs)
	}
}

// FuzzRead: read accepts what encoding/json accepts, and reads it as
// encoding/json does (checkRead).
func FuzzRead(f *testing.F) {
	for _, s := range readSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkRead(t, in) })
}
