package scrub

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestGeneratedRunOracle: generatedRun, which counts a byte's classes
// from tables, answers as the branch-per-class loop it replaced (session
// 59), kept here as the oracle, on random runs of every alphabet it sees
// (hexadecimal, base64, base64url, words and separators, repeated bytes)
// and on the corpus' own runs.
func TestGeneratedRunOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(59, 1))
	alphabets := []string{
		"0123456789abcdef", "0123456789ABCDEF", "0123456789abcdefABCDEF",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
		"abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789",
		"aeiouxyz-_.", "aA0_-", "0123456789", "aaaaaaab", "AbCdEf01",
	}
	words := []string{"New", "GCM", "With", "Random", "Nonce", "orders", "R_", "AARCH64", "_", "-", "x9", "Key", "id", "0x"}
	n := 0
	for range 200000 {
		var b []byte
		switch r.IntN(3) {
		case 0:
			a := alphabets[r.IntN(len(alphabets))]
			for range r.IntN(70) {
				b = append(b, a[r.IntN(len(a))])
			}
		case 1:
			for len(b) < r.IntN(70) {
				b = append(b, words[r.IntN(len(words))]...)
			}
		default:
			for range r.IntN(70) {
				b = append(b, byte(r.IntN(128)))
			}
		}
		s := string(b)
		for _, min := range []int{8, minRandomHead, minRandomRun} {
			if got, want := generatedRun(s, min), generatedRunOracle(s, min); got != want {
				t.Fatalf("generatedRun(%q, %d) = %v, the loop it replaced says %v", s, min, got, want)
			}
			if generatedRunOracle(s, min) {
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no run read as generated: the inputs test nothing")
	}
	for _, c := range corpus() {
		for _, min := range []int{8, minRandomRun} {
			if got, want := generatedRun(c.value, min), generatedRunOracle(c.value, min); got != want {
				t.Fatalf("generatedRun(%q, %d) = %v, the loop it replaced says %v", c.value, min, got, want)
			}
		}
	}
}

// TestCodeWordTrigrams: the trigram filter before isCodeWord's search
// turns away no code word, in any case, and isCodeWord agrees with a set
// of codeWords on random letters.
func TestCodeWordTrigrams(t *testing.T) {
	set := map[string]bool{}
	for _, w := range codeWords {
		set[w] = true
		if !isCodeWord(w) || !isCodeWord(strings.ToUpper(w)) {
			t.Fatalf("isCodeWord(%q) = false", w)
		}
	}
	r := rand.New(rand.NewPCG(59, 2))
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0_"
	found := 0
	for range 300000 {
		b := make([]byte, 1+r.IntN(13))
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		if r.IntN(4) == 0 { // a code word's start and random letters after it
			w := codeWords[r.IntN(len(codeWords))]
			b = append([]byte(w[:min(len(w), len(b))]), b[min(len(w), len(b)):]...)
		}
		w := string(b)
		want := len(w) <= 12 && set[strings.ToLower(w)] && strings.ToLower(w) == string(bytes.Map(func(r rune) rune { return r | 0x20 }, b))
		if got := isCodeWord(w); got != want {
			t.Fatalf("isCodeWord(%q) = %v, want %v", w, got, want)
		}
		if want {
			found++
		}
	}
	if found == 0 {
		t.Fatal("no code word among the inputs: the test tests nothing")
	}
}

// generatedRunOracle is generatedRun as it was before session 59.
func generatedRunOracle(run string, minLen int) bool {
	run = run[:min(len(run), 64)]
	var n, d, u, l, hexLetters, changes, same, tokens, vowels int
	var last uint8
	seg, segLower, segHex, longest, longestHex := 0, true, true, 0, false
	snake := false // '_' between capitals and digits: a constant's name
	for k := 0; k < len(run); k++ {
		c := run[k]
		if k > 0 && c == run[k-1] {
			if same++; same >= 7 {
				return false // a byte eight times over: padding, a placeholder
			}
		} else {
			same = 0
		}
		var cl uint8
		switch {
		case isDigit(c):
			cl, d = 1, d+1
		case isUpper(c):
			cl, u = 2, u+1
		case isLower(c):
			cl, l = 3, l+1
			if vowelBits>>(c-'a')&1 != 0 {
				vowels++
			}
		default:
			if seg >= 4 && segLower {
				return false // a word between separators (orders-…)
			}
			if c == '_' && l == 0 && n > 0 {
				snake = true
			}
			if seg > longest {
				longest, longestHex = seg, segHex
			}
			seg, segLower, segHex = 0, true, true
			continue
		}
		if cl != 3 {
			segLower = false
		}
		// Tokens as a name is read: digits, a capital and small letters,
		// capitals (GCM in NewGCMWithRandomNonce).
		switch {
		case n == 0 || cl == 1 && last != 1 || cl == 3 && last == 1:
			tokens++
		case cl == 2 && (last != 2 || k+1 < len(run) && isLower(run[k+1])):
			tokens++
		}
		segHex = segHex && chars[c]&cHex != 0
		seg++
		if chars[c]&cHex != 0 && cl != 1 {
			hexLetters++
		}
		if n > 0 && cl != last {
			changes++
		}
		last = cl
		n++
	}
	if seg >= 4 && segLower && seg < n || snake && l == 0 {
		return false // R_AARCH64_P32_ABS32, NL80211_RRF_NO_HT40PLUS
	}
	if seg > longest {
		longest, longestHex = seg, segHex
	}
	mixedHex := u >= 3 && l >= 3 && hexLetters == u+l // 6d2FabeB6ADd…: no hash is written so
	if !mixedHex && (longestHex && longest*2 >= n || u+l-hexLetters <= 3) {
		return false // hexadecimal in one case, maybe after a short prefix or with a letter off (key-5d41…, i-0f9a…, a UUID)
	}
	short := n < 20
	if u > 0 && l > 0 && (n*2 >= tokens*7 || short && n >= tokens*3) {
		return false // read as words: 3.5 bytes a token or more, 3 in a short run (random base62 has about 2.2)
	}
	if n < minLen || d == n || short && d < 2 {
		return false
	}
	if camelCase(run) || inWords(run) {
		return false
	}
	if u > 0 && l > 0 {
		return changes*3 >= n-1
	}
	if short {
		return d*8 >= n && changes*3 >= n-1 // (chacha20poly1305 changes 3 times in 16)
	}
	// One case: digits spread among the letters (random base36 has one
	// byte in four a digit), or a long run with a digit whose letters have
	// few vowels (random letters have one in five; words two in five).
	return d*8 >= n && changes*5 >= n-1 || n >= 24 && d > 0 && vowels*10 < (u+l)*3 && u == 0
}
