package approval

import (
	"strings"
	"testing"
)

// TestDigestArgs: arguments with the same value share a digest however
// they are spaced or ordered; different values, and arguments without a
// canonical form (digested as their bytes, marked apart), do not.
func TestDigestArgs(t *testing.T) {
	a, textA := digestArgs([]byte(`{"booking":"BK-1","reason":"asked"}`))
	b, _ := digestArgs([]byte(` { "reason" : "asked", "booking" : "BK-1" } `))
	if a != b || textA != `{"booking":"BK-1","reason":"asked"}` {
		t.Errorf("same arguments: digests differ or summary %q", textA)
	}
	apart := []string{
		`{"a":1}`, `{"a":1.0}`, `{"a":"1"}`, `{"a":[1]}`, `{"A":1}`, `{"a":1,"b":null}`, `{"a":10}`,
		`"\ud800"`, `"\ufffd"`, `"�"`, `"a"`, `"a "`, `canonical` + "\x00" + `"a"`,
	}
	seen := map[[32]byte]string{}
	for _, in := range apart {
		d, _ := digestArgs([]byte(in))
		if other, ok := seen[d]; ok {
			t.Errorf("%s and %s share a digest", in, other)
		}
		seen[d] = in
	}
	// Without a canonical form: digested as the bytes themselves.
	for _, in := range []string{`{"a":1,"a":2}`, `{"a":`, "\"\xff\"", strings.Repeat("[", 70) + strings.Repeat("]", 70), ``} {
		d, text := digestArgs([]byte(in))
		if text != in {
			t.Errorf("the summary of %q is %q", in, text)
		}
		if d2, _ := digestArgs([]byte(in + " ")); d2 == d {
			t.Errorf("%q and the same with a space share a digest", in)
		}
	}
}
