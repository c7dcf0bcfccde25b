package scrub

import (
	"strings"
	"testing"
)

// Session 53 (issue 31): checks of the shortcuts that made the scan faster
// without changing what it finds. TestSchemeGate: near, which finds whether
// a word of a token68 run may be credentials after an Authorization
// scheme, first looks whether the text holds "bearer" or "basic" at all;
// the cases read credentials whose word the scanner reaches inside the
// run (abc.def.ghi123: from ghi123), with the scheme in any case, after an
// earlier finding (the scan then starts after it), and texts with a 'b'
// where no scheme begins. TestEndsWithTerm and checkPunctGate (run by
// TestWordGate and FuzzWordGate) check endsWithTerm's buckets and the
// scan's gate in front of matchPunct.
func TestSchemeGate(t *testing.T) {
	red := func(f string) string { return "[REDACTED:" + f + "]" }
	cases := []struct{ in, want string }{
		{"retrying with bearer abc.def.ghi123 now", "retrying with bearer " + red("bearer_token") + " now"},
		{"retrying with bearer abc~d3fGh9kLmNp now", "retrying with bearer " + red("bearer_token") + " now"},
		{"retrying with bearer abc+d3f/ghijKL9 now", "retrying with bearer " + red("bearer_token") + " now"},
		{"retrying with bearer abc.dXNlcjpodW50ZXIy now", "retrying with bearer " + red("bearer_token") + " now"},
		{"retrying with bEaReR abc.def.ghi123 now", "retrying with bEaReR " + red("bearer_token") + " now"},
		{"sent as basic dXNlcjpodW50ZXIy.more9 here", "sent as basic " + red("basic_auth") + ".more9 here"},
		{"sent as Basic dXNlcjpodW50ZXIy", "sent as Basic " + red("basic_auth")},
		{"password=Xk9vQ2mLp7Rt then bearer abc.def.ghi123", "password=" + red("password") + " then bearer " + red("bearer_token")},
		{"by bob: abc.def.ghi123 b", "by bob: abc.def.ghi123 b"},
		{"a basics abc.def.ghi123", "a basics abc.def.ghi123"},
		{"b", "b"},
		{"bea", "bea"},
	}
	for _, c := range cases {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
		if again := String(String(c.in)); again != String(c.in) {
			t.Errorf("String(%q) is not idempotent: %q", c.in, again)
		}
	}
}

// TestEndsWithTerm checks endsWithTerm, which reads a key's last bytes and
// the terms of their bucket only, against its definition: the key,
// normalized, ends with one of keyTerms. The keys are terms and pieces of
// them in both cases, with separators, digits and other words around.
func TestEndsWithTerm(t *testing.T) {
	g := newGen(53)
	pieces := []string{"_", "-", ".", "x", "ID", "db", "2", "Key", "ed", "er", "ss"}
	for _, k := range keyTerms {
		pieces = append(pieces, k.term, strings.ToUpper(k.term), k.term[len(k.term)-3:], k.term[:len(k.term)-1])
	}
	var buf [maxKey]byte
	for n := 0; n < 200000; n++ {
		var b strings.Builder
		for p := 1 + g.r.IntN(4); p > 0; p-- {
			b.WriteString(pieces[g.r.IntN(len(pieces))])
		}
		key := b.String()
		if len(key) > maxKey {
			continue
		}
		norm, _ := normalizeKey(key, &buf)
		want := false
		for _, k := range keyTerms {
			want = want || strings.HasSuffix(string(norm), k.term)
		}
		if got := endsWithTerm(key); got != want {
			t.Fatalf("endsWithTerm(%q) = %v; its normalized form %q ends with a term: %v", key, got, norm, want)
		}
	}
}

// checkPunctGate fails t for each '/' and '(' of in that punctMayMatch
// turns away and matchPunct would find something at.
func checkPunctGate(t *testing.T, in string) {
	t.Helper()
	for i := 0; i < len(in); i++ {
		if in[i] != '/' && in[i] != '(' {
			continue
		}
		for _, lo := range []int{0, i} {
			if punctMayMatch(in, i, lo) {
				continue
			}
			if h, ok := std.matchPunct(in, nil, i, lo); ok {
				t.Errorf("the scan skips %q at %d (lo %d) in %q, where matchPunct finds %s %q",
					in[i], i, lo, in, familyNames[h.fam], in[h.start:h.end])
			}
		}
	}
}
