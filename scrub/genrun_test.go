package scrub

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCountRunOracle: countRun, which counts a byte's classes from
// tables, counts as the branch-per-class loop it replaced (session 59),
// kept here as the oracle, on random runs of every alphabet generatedRun
// sees (hexadecimal, base64, base64url, words and separators, repeated
// bytes) and on the corpus' own values.
func TestCountRunOracle(t *testing.T) {
	check := func(run string) bool {
		run = run[:min(len(run), 64)]
		got, gotOK := countRun(run)
		want, wantOK := countRunOracle(run)
		if gotOK != wantOK || gotOK && got != want {
			t.Fatalf("countRun(%q) = %+v, %v; the loop it replaced counts %+v, %v", run, got, gotOK, want, wantOK)
		}
		return gotOK
	}
	r := rand.New(rand.NewPCG(59, 1))
	alphabets := []string{
		"0123456789abcdef", "0123456789ABCDEF", "0123456789abcdefABCDEF",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
		"abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789",
		"aeiouxyz-_.", "aA0_-", "0123456789", "aaaaaaab", "AbCdEf01",
	}
	words := []string{"New", "GCM", "With", "Random", "Nonce", "orders", "R_", "AARCH64", "_", "-", "x9", "Key", "id", "0x"}
	counted, generated := 0, 0
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
		if check(string(b)) {
			counted++
		}
		if generatedRun(string(b), minRandomRun) {
			generated++
		}
	}
	if counted == 0 || generated == 0 {
		t.Fatalf("%d runs counted, %d read as generated: the inputs test nothing", counted, generated)
	}
	for _, c := range corpus() {
		check(c.value)
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

// countRunOracle is countRun as generatedRun's loop counted before
// session 59: a branch for each byte's class.
func countRunOracle(run string) (rc runCounts, ok bool) {
	var n, d, u, l, hexLetters, changes, same, tokens, vowels int
	var last uint8
	seg, segLower, segHex, longest, longestHex := 0, true, true, 0, false
	snake := false // '_' between capitals and digits: a constant's name
	for k := 0; k < len(run); k++ {
		c := run[k]
		if k > 0 && c == run[k-1] {
			if same++; same >= 7 {
				return rc, false // a byte eight times over: padding, a placeholder
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
				return rc, false // a word between separators (orders-…)
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
		return rc, false // R_AARCH64_P32_ABS32, NL80211_RRF_NO_HT40PLUS
	}
	if seg > longest {
		longest, longestHex = seg, segHex
	}
	return runCounts{n: n, digits: d, upper: u, lower: l, hexLetters: hexLetters, vowels: vowels,
		tokens: tokens, changes: changes, longest: longest, longestHex: longestHex}, true
}
