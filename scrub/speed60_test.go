package scrub

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// randomText returns n random strings drawn from alphabet (bytes and
// runes mixed), of up to 40 bytes each.
func randomText(r *rand.Rand, alphabet []string, n int) []string {
	out := make([]string, n)
	for k := range out {
		var b strings.Builder
		for m := r.IntN(12); m > 0; m-- {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		out[k] = b.String()
	}
	return out
}

// The byte-reading helpers give the answers of the library calls and
// loops they replace.
func TestSpeedHelpersAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(60, 1))
	alphabet := []string{"*", "x", "X", "#", ".", "•", "\xe2", "\xe2\x80", "–", "a", "Z", "0", "9", "_", "\n", "\r", " ", "\xff", "é", "@"}
	for _, s := range randomText(r, alphabet, 200000) {
		if got, want := masked(s), strings.Trim(s, "*xX#.•") == ""; got != want {
			t.Fatalf("masked(%q) = %v, strings.Trim says %v", s, got, want)
		}
		if got, want := indexLineBreak(s), strings.IndexAny(s, "\r\n"); got != want {
			t.Fatalf("indexLineBreak(%q) = %d, strings.IndexAny says %d", s, got, want)
		}
		var d, u, l bool
		for i := 0; i < len(s); i++ {
			d = d || '0' <= s[i] && s[i] <= '9'
			u = u || 'A' <= s[i] && s[i] <= 'Z'
			l = l || 'a' <= s[i] && s[i] <= 'z'
		}
		if got, want := randomish(s), d && (u || l) || u && l; got != want {
			t.Fatalf("randomish(%q) = %v, want %v", s, got, want)
		}
		if got, want := mixed(s), d && u && l; got != want {
			t.Fatalf("mixed(%q) = %v, want %v", s, got, want)
		}
		if got, want := hasUpperAndLower(s), u && l; got != want {
			t.Fatalf("hasUpperAndLower(%q) = %v, want %v", s, got, want)
		}
	}
}
