package scrub

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Neighbours of secrets: invisible characters and confusable separators
// glued to a secret or put inside it. A reader (a model) sees through them;
// so must the scrubber.

// invisibles are format characters that render as nothing.
var invisibles = []string{
	"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u200f", "\u202a", "\u202e",
	"\u2066", "\u2069", "\ufe0f", "\U000e0020", "\u180e", "\u034f", "\u061c", "\u2063",
}

// blanks are Unicode spaces a reader takes for a space.
var blanks = []string{"\u00a0", "\u2002", "\u2003", "\u2009", "\u200a", "\u202f", "\u205f", "\u3000", "\u1680"}

// spaces are blanks and line breaks (line and paragraph separators, next
// line): noise that separates words.
var spaces = append(append([]string(nil), blanks...), "\u2028", "\u2029", "\u0085")

// escapedNoise are invisible characters and look-alike blanks written as
// escapes: JSON, percent-encoded, HTML references.
var escapedNoise = []string{
	`\u200b`, `\uFEFF`, `\u2060`, `\u00ad`, `\udb40\udc20`, "%E2%80%8B", "%EF%BB%BF", "%C2%AD", "&#x200b;", "&#8203;", "&#xFEFF;",
	`\u00a0`, "%C2%A0", "&nbsp;", "&#x3000;",
}

// confusables map ASCII separators to look-alikes a reader takes for them.
var confusables = map[byte][]string{
	' ': blanks,
	'-': {"\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2212", "\ufe63", "\uff0d"},
	':': {"\uff1a", "\ufe55", "\u2236"},
	'=': {"\uff1d", "\ufe66"},
	'@': {"\uff20", "\ufe6b"},
	'.': {"\uff0e", "\u3002", "\uff61", "\u2024"},
	'/': {"\uff0f", "\u2215", "\u2044"},
	'_': {"\uff3f"},
}

// samples are one value of each kind of secret and identifier; key and
// tail are the context that stays (a key, a scheme, a host), body what
// must not survive.
type sample struct{ key, body, tail string }

var samples = func() []sample {
	var out []sample
	for _, c := range canaries {
		k := strings.LastIndexAny(c, "=: ") + 1
		out = append(out, sample{c[:k], c[k:], ""})
	}
	return append(out,
		sample{"", "jane.canary@example.com", ""},
		sample{"", "4556 7375 8689 9855", ""},
		sample{"", "4556737586899855", ""},
		sample{"", "GB82 WEST 1234 5698 7654 32", ""},
		sample{"", "+44 20 7946 0958", ""},
		sample{"", "123e4567-e89b-12d3-a456-426614174000", ""},
		sample{"", "10.20.30.41", ""},
		sample{"postgres://", "app:Zx9pass77", "@db.internal:5432/app"},
		sample{"token: ", tGHP, ""},
		sample{"", tSkAnt, ""},
	)
}()

// seen returns s as a reader takes it: invisible characters left out,
// look-alike separators read as the ASCII they imitate.
func seen(s string) string {
	s = decoded(s)
	var b strings.Builder
	for _, r := range s {
		if invisible(r) {
			continue
		}
		if a, ok := takenFor(r); ok {
			b.WriteByte(a)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// takenFor returns the ASCII separator r imitates, per the table above.
func takenFor(r rune) (byte, bool) {
	for a, xs := range confusables {
		for _, x := range xs {
			if x == string(r) {
				return a, true
			}
		}
	}
	return 0, false
}

// survives returns a piece of body (8 bytes, every 4) that the output
// still shows as a reader takes it, or "".
func survives(out, body string) string {
	got := seen(out)
	b := seen(body)
	for k := 0; k+8 <= len(b); k += 4 {
		if strings.Contains(got, b[k:k+8]) {
			return b[k : k+8]
		}
	}
	if len(b) < 8 && strings.Contains(got, b) {
		return b
	}
	return ""
}

// withNoise returns the ways of writing s.key+s.body with noise glued to
// the value or put inside it.
// A blank inside a value splits it in two, so only invisible noise is put
// inside.
func withNoise(s sample, noise string, inside bool) []string {
	v := s.key + s.body + s.tail
	n := len(s.body)
	out := []string{
		"token" + noise + v + " next",     // glued before
		"see " + v + noise + "word",       // glued after
		"x" + noise + v + noise + "y",     // both
		`{"k":"` + "a" + noise + v + `"}`, // in JSON
		"id=" + noise + v,                 // after a separator
	}
	if inside {
		out = append(out,
			s.key+insertAt(s.body, noise, n/3)+s.tail,      // inside
			s.key+insertAt(s.body, noise, n/2, n-2)+s.tail, // inside, twice
		)
	}
	return out
}

// insertAt puts mark before the bytes of s at the positions in at (moved
// forward to a character boundary).
func insertAt(s, mark string, at ...int) string {
	var b strings.Builder
	prev := 0
	for _, p := range at {
		for p < len(s) && !utf8.RuneStart(s[p]) {
			p++
		}
		if p <= prev || p >= len(s) {
			continue
		}
		b.WriteString(s[prev:p])
		b.WriteString(mark)
		prev = p
	}
	b.WriteString(s[prev:])
	return b.String()
}

// lookAlikes returns s with each ASCII separator that has look-alikes
// replaced by the k-th of them.
func lookAlikes(s string, k int) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if xs, ok := confusables[s[i]]; ok {
			b.WriteString(xs[k%len(xs)])
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestNeighbours: every sample, with every invisible character and every
// look-alike space glued to it or put inside it, and with its separators
// written as look-alikes: nothing of it survives, and scrubbing stays
// idempotent.
func TestNeighbours(t *testing.T) {
	var noises []string
	noises = append(noises, invisibles...)
	noises = append(noises, escapedNoise[:11]...) // the invisible ones
	inside := len(noises)
	noises = append(noises, spaces...)
	noises = append(noises, escapedNoise[11:]...)
	failed := 0
	check := func(in, body string) {
		t.Helper()
		out := String(in)
		if again := String(out); again != out {
			t.Errorf("not idempotent:\n   in %q\n once %q\ntwice %q", in, out, again)
			failed++
		}
		if piece := survives(out, body); piece != "" {
			failed++
			if failed < 40 {
				t.Errorf("%q survives in %q", piece, out)
			}
		}
	}
	for _, s := range samples {
		for k, noise := range noises {
			for _, in := range withNoise(s, noise, k < inside) {
				check(in, s.body)
			}
		}
		for k := range 8 {
			check(lookAlikes(s.key+s.body+s.tail, k), s.body)
			check("token"+invisibles[k]+lookAlikes(s.key+s.body+s.tail, k), s.body)
		}
	}
	if failed > 0 {
		t.Errorf("%d cases leak", failed)
	}
}

// TestLookAlikesInCleanText: text that uses look-alike separators and
// fullwidth forms as they are meant (French spacing, CJK punctuation and
// numbers, typographic dashes) and invisible characters inside words comes
// back unchanged.
func TestLookAlikesInCleanText(t *testing.T) {
	for _, in := range []string{
		"mot de passe\u00a0: invalide",
		"価格：１２３円 (tax 10\u00a0%)",
		"ＡＢＣ株式会社の住所：東京都",
		"２０２５年６月１日　会議",
		"ｈｔｔｐｓ：／／ｅｘａｍｐｌｅ．ｃｏｍ／ｈｏｍｅ",
		"file – name — dash, pages 10‒12, −5 °C",
		"version\u00a01.2.3 of 10\u2009000 items",
		"zero\u200bwidth space in a sentence is fine",
		"a\u200bb c\u2060d e\u00adf invisible\ufeffmarks in\u200dwords",
		"token\u200bexpired, pass\u00adword invalid",
	} {
		if out := String(in); out != in {
			t.Errorf("%q became %q", in, out)
		}
	}
}

// neighbourNoise are the noises FuzzNeighbours plants: invisible
// characters and look-alike blanks, raw and escaped.
var neighbourNoise = func() []string {
	var out []string
	out = append(out, invisibles...)
	out = append(out, escapedNoise...)
	return append(out, spaces...)
}()

// FuzzNeighbours plants every sample, with invisible characters and
// look-alike separators next to it or inside it, into fuzzed text: nothing
// of the sample survives (as a reader takes the output), and scrubbing
// stays idempotent.
func FuzzNeighbours(f *testing.F) {
	for _, c := range cases {
		f.Add(c.in, uint(len(c.in)/2), uint8(len(c.in)), uint16(len(c.in)))
	}
	for _, in := range []string{"", " ", "token", "x", `{"k":"`, "id=", "password=", "\u200b", "%E2", "&#", "\u00a0"} {
		f.Add(in, uint(len(in)), uint8(3), uint16(7))
	}
	f.Fuzz(func(t *testing.T, in string, at uint, which uint8, how uint16) {
		s := samples[int(which)%len(samples)]
		noise := neighbourNoise[int(how)%len(neighbourNoise)]
		blank := int(how)%len(neighbourNoise) >= len(invisibles)+11
		mode := int(how) / len(neighbourNoise) % 8
		v := s.key + s.body + s.tail
		var written string
		switch mode {
		case 0:
			written = "token" + noise + v
		case 1:
			written = v + noise + "word"
		case 2:
			written = "x" + noise + v + noise + "y"
		case 3, 4:
			if blank {
				written = noise + v + noise
				break
			}
			n := len(s.body)
			written = s.key + insertAt(s.body, noise, n/3, n/3+(mode-3)*n/2) + s.tail
		case 5:
			written = lookAlikes(v, int(how))
		case 6:
			written = "a" + noise + lookAlikes(v, int(how)/3)
		case 7:
			written = `"` + noise + v + `"`
		}
		p := int(at % uint(len(in)+1))
		planted := in[:p] + " " + written + " " + in[p:]
		out := String(planted)
		if again := String(out); again != out {
			t.Fatalf("not idempotent:\n   in %q\n once %q\ntwice %q", planted, out, again)
		}
		if utf8.ValidString(planted) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of valid input %q: %q", planted, out)
		}
		// A piece that the text around the sample spells, with the
		// blanks it is planted between, is the text's, not the sample's.
		around := in[:p] + " \x00 " + in[p:]
		if piece := survives(out, s.body); piece != "" && !strings.Contains(seen(in), piece) && !strings.Contains(around, piece) {
			t.Fatalf("planted %q survives: %q in\n%q\nfrom %q", s.body, piece, out, planted)
		}
	})
}
