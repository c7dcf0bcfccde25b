package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// canonicalBytes is Append's canonical form, or nil when there is none.
func canonicalBytes(args []byte) []byte {
	out, ok := Append(nil, args)
	if !ok {
		return nil
	}
	return out
}

// reference is a second, slower canonical form built on encoding/json's
// tokens, to check the first against.
func reference(args []byte) []byte {
	if !utf8.Valid(args) {
		return nil
	}
	var b bytes.Buffer
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if refValue(dec, &b, 0) != nil {
		return nil
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil
	}
	return b.Bytes()
}

var errRef = errors.New("not canonical")

func refValue(dec *json.Decoder, b *bytes.Buffer, depth int) error {
	if depth > MaxDepth {
		return errRef
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			b.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				if err := refValue(dec, b, depth+1); err != nil {
					return err
				}
			}
			_, err := dec.Token()
			b.WriteByte(']')
			return err
		}
		type kv struct {
			k string
			v []byte
		}
		var ms []kv
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			var v bytes.Buffer
			if err := refValue(dec, &v, depth+1); err != nil {
				return err
			}
			ms = append(ms, kv{tok.(string), v.Bytes()})
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		for i := range ms {
			for j := range i {
				if strings.EqualFold(ms[i].k, ms[j].k) {
					return errRef // keys equal under case folding
				}
			}
		}
		slices.SortFunc(ms, func(a, b kv) int { return strings.Compare(a.k, b.k) })
		b.WriteByte('{')
		for i, m := range ms {
			if i > 0 {
				if ms[i-1].k == m.k {
					return errRef
				}
				b.WriteByte(',')
			}
			refString(b, m.k)
			b.WriteByte(':')
			b.Write(m.v)
		}
		b.WriteByte('}')
	case string:
		refString(b, t)
	case json.Number:
		b.WriteString(string(t))
	case bool:
		b.WriteString(map[bool]string{true: "true", false: "false"}[t])
	case nil:
		b.WriteString("null")
	}
	return nil
}

func refString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1)
}

func TestCanonical(t *testing.T) {
	same := [][]string{
		{`{"a":1,"b":[true,null,"x"]}`, ` { "b" : [ true , null , "x" ] , "a" : 1 } `, "{\"b\":[true,null,\"\\u0078\"],\"a\":1}\n"},
		{`"é"`, `"\u00e9"`, `"\u00E9"`},
		{`{"k":"a\nb"}`, `{"k":"a\u000ab"}`},
		{`{}`, `{ }`}, {`[]`, "[\n]"},
		{`{"a":{"x":1,"y":[{"p":1,"q":2}]},"b":2}`, `{"b":2,"a":{"y":[{"q":2,"p":1}],"x":1}}`, `{"a":{"x":1,"y":[{"q":2,"p":1}]},"b":2}`},
		{`"<&>"`, `"\u003c\u0026\u003e"`},
	}
	for _, group := range same {
		want := canonicalBytes([]byte(group[0]))
		for _, in := range group {
			got := canonicalBytes([]byte(in))
			if got == nil || !bytes.Equal(got, want) {
				t.Errorf("canonical(%q) = %q, want %q", in, got, want)
			}
		}
	}
	apart := []string{
		`{"a":1}`, `{"a":1.0}`, `{"a":"1"}`, `{"a":[1]}`, `{"A":1}`, `{"a":1,"b":null}`, `{"a":10}`,
		`"\ud800"`, `"\ufffd"`, `"�"`, `"a"`, `"a "`,
	}
	seen := map[string]string{}
	for _, in := range apart {
		c := canonicalBytes([]byte(in))
		if c == nil {
			continue // no canonical form: only the same bytes match
		}
		if other, ok := seen[string(c)]; ok {
			t.Errorf("%s and %s share a canonical form", in, other)
		}
		seen[string(c)] = in
	}
	for _, in := range []string{
		`{"a":1,"a":2}`, `{"b":1,"a":2,"b":3}`, `{"a":{"y":1,"x":2,"y":3}}`, `{"a":1} {}`, `{"a":`, "\"\xff\"", `"\ud800"`,
		strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2),
		``, `nul`,
	} {
		if got := canonicalBytes([]byte(in)); got != nil {
			t.Errorf("canonical(%q) = %q, want none", in, got)
		}
	}
	if c := canonicalBytes([]byte(strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1))); c == nil {
		t.Error("the deepest nesting allowed is not canonical")
	}
	if out, ok := Append([]byte("tag:"), []byte(` {"b":1, "a":2}`)); !ok || string(out) != `tag:{"a":2,"b":1}` {
		t.Errorf("Append after a prefix: %q, %v", out, ok)
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[true,null,"x"]}`, `{"b":{"d":[],"c":"\u2028\b\f\u0001"},"a":-1.5e3}`,
		`"\ud83d\ude00"`, `{"a":1,"a":2}`, `[1,[2,[3]]]`, `{"":""}`, "\"\x7f\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got := canonicalBytes(in)
		want := reference(in)
		if got == nil {
			return // raw bytes: the exact bytes must match, which is stricter
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("canonical(%q) = %q, reference %q", in, got, want)
		}
		if again := canonicalBytes(got); !bytes.Equal(again, got) {
			t.Fatalf("not idempotent: %q -> %q", got, again)
		}
		var a, b any
		da, db := json.NewDecoder(bytes.NewReader(in)), json.NewDecoder(bytes.NewReader(got))
		da.UseNumber()
		db.UseNumber()
		if da.Decode(&a) != nil || db.Decode(&b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("canonical(%q) = %q reads as another value", in, got)
		}
	})
}

// TestCaseFoldedKeysHaveNoCanonicalForm: encoding/json matches object
// keys to struct fields case-insensitively (Unicode simple folding, as
// strings.EqualFold), so an object with two keys equal under folding reads
// as one field or the other depending on their order. Such an object has
// no canonical form: its key is its exact bytes, and reordering it makes
// another key. (Issue 26, item 1.)
func TestCaseFoldedKeysHaveNoCanonicalForm(t *testing.T) {
	many := `"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9`
	for _, in := range []string{
		`{"Destination":"mallory","destination":"alice"}`,
		`{"destination":"alice","Destination":"mallory"}`,
		`{"deſtination":"mallory","destination":"alice"}`, // ſ (U+017F) folds to s
		`{"destination":"alice","deſtination":"mallory"}`,
		`{"K":1,"\u212a":2}`,  // the Kelvin sign folds to k
		`{"A":1,"B":2,"a":3}`, // in byte order, the colliding keys not adjacent
		`{"pay":{"to":"alice","TO":"mallory"}}`,
		`[1,{"x":{"Ab":1,"aB":2}}]`,
		`{` + many + `,"K9":10}`, // past the small-object path
		`{"K9":10,` + many + `}`,
	} {
		if got := canonicalBytes([]byte(in)); got != nil {
			t.Errorf("canonical(%s) = %s, want none: its keys collide under case folding", in, got)
		}
		if ref := reference([]byte(in)); ref != nil {
			t.Errorf("reference(%s) = %s, want none", in, ref)
		}
	}
	// Keys that differ otherwise keep their canonical form.
	for in, want := range map[string]string{
		`{"b":1,"a":2}`:                     `{"a":2,"b":1}`,
		`{"destination":"alice"}`:           `{"destination":"alice"}`,
		`{"a":{"x":1},"b":{"x":2}}`:         `{"a":{"x":1},"b":{"x":2}}`,         // the same key in two objects
		`{"ss":1,"ß":2}`:                    `{"ss":1,"ß":2}`,                    // not a simple fold
		`{"dеstination":1,"destination":2}`: `{"destination":2,"dеstination":1}`, // Cyrillic е: another key to encoding/json too
	} {
		if got := canonicalBytes([]byte(in)); string(got) != want {
			t.Errorf("canonical(%s) = %s, want %s", in, got, want)
		}
	}
}
