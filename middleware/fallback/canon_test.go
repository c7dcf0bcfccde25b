package fallback

import (
	"bytes"
	"strings"
	"testing"
)

var canonSeeds = []string{
	``, `null`, `true`, `false`, `0`, `-0`, `1.50`, `-12e+3`, `1E9`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
	`"a"`, `"a\"b"`, `"\u0061"`, `"<b>&"`, `"é"`, "\"\x01\"", `"\ud800"`, "\"\xff\"",
	`{}`, `[]`, `[ ]`, `{ }`, `[1,2,3]`, `[1,,2]`, `[1,]`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{1:2}`,
	`{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"b":{"d":1,"c":2},"a":[{"z":0,"y":1}]}`,
	`{"a":1,"b":2,"a":3}`, `{"a":{"x":1,"x":2},"a":{"y":3}}`, `{"\u0062":1,"a":2}`, `{"b":1,"\u0061":2}`,
	` {"from" : "OSL" , "to":"LHR" } `, `{} {}`, `{}x`, `nul`, `tru`, `[[[[[[[[[[1]]]]]]]]]]`,
	strings.Repeat("[", 100) + strings.Repeat("]", 100),
	`{"k":"v","K":"w","_":"x","~":"y"," ":"z"}`,
}

// FuzzCanonical: the fast path and encoding/json agree. Whatever the fast
// path writes is what encoding/json writes; where it gives up, canonical
// still answers as encoding/json does.
func FuzzCanonical(f *testing.F) {
	for _, s := range canonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, ok := canonical(nil, in)
		var want []byte
		wantOK := true
		if len(in) == 0 {
			want = []byte("null")
		} else {
			want, wantOK = canonicalSlow(nil, in)
		}
		if ok != wantOK || ok && !bytes.Equal(got, want) {
			t.Fatalf("%q: %q %v, encoding/json %q %v", in, got, ok, want, wantOK)
		}
	})
}

// TestCanonicalFastPath: plain documents do not fall back.
func TestCanonicalFastPath(t *testing.T) {
	for _, in := range []string{`{"to":"LHR","from":"OSL","n":[1,2.5e3,{"b":null,"a":true}]}`, `{"a":1,"a":2}`} {
		c := canonWriter{in: []byte(in)}
		if !c.value(0) {
			t.Errorf("%s: the fast path gave up", in)
		}
	}
	got, _ := canonical(nil, []byte(`{"to":"LHR","from":"OSL","n":[1,2.5e3,{"b":null,"a":true}],"to":"CDG"}`))
	if want := `{"from":"OSL","n":[1,2.5e3,{"a":true,"b":null}],"to":"CDG"}`; string(got) != want {
		t.Fatalf("%s, want %s", got, want)
	}
}

func BenchmarkCanonical(b *testing.B) {
	in := []byte(`{"to":"LHR","from":"OSL","date":"2026-12-01","passengers":2}`)
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		buf, _ = canonical(buf[:0], in)
	}
}
