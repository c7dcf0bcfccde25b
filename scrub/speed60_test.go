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

// collect skips the search for escapes after a raw scan that found
// nothing and read every byte an escape may begin with: the search would
// have found none. Messages of fragments that put escapes, invisible
// characters and look-alikes inside non-ASCII runs, inside allowed
// values and next to tokens check it, and with them String's output.
func TestScanReadsEveryEscape(t *testing.T) {
	allowed, err := New(WithAllow("ghp_16C7e42F292c6912E7710c838347Ae178B4a", "Xq7%41zzY9wq"))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(60, 2))
	fragments := []string{"café", "é", "\u200b", "é\u200b", "ü\u2060", "\u00a0", "ー", "\uff1a", "\\u200b", "\\n", "\\x41", "%20", "%41", "&amp;", "&#58;",
		"C:\\Program Files\\app", " ", "token", "=", ":", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "/", "a", "Z9", "'", "\"", "password=Xq7%41zzY9wq"}
	for _, m := range randomText(r, fragments, 200000) {
		for _, s := range []*Scrubber{std, allowed} {
			var seen uint32
			if hits := s.scan(nil, m, nil, &seen); len(hits) == 0 && seen&(escapeFound|escapeUnread) == 0 {
				if k := firstEscape(m); k >= 0 {
					t.Fatalf("%q: the scan found nothing and read every escape's first byte, but firstEscape finds one at %d", m, k)
				}
			}
		}
	}
}
