package scrub

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// canaries are secrets planted into fuzz inputs. Each is a whole token that
// the scrubber must remove whatever surrounds it, as long as a space
// separates it from its neighbours. They all begin with a letter: a digit
// group right before a leading digit could be read as one number with it.
var canaries = []string{
	tGHP,
	"AKIAIOSFODNN7EXAMPLE",
	tSkLive,
	tXoxb,
	tJWT,
	tSkAnt,
	tAIza,
	tGlpat,
	tHF,
	tSG,
	tDOP,
	tSkProj,
	tTwSK,
	tDiscord,
	tNPM,
	tPyPI,
	tMailgun,
	tShpat,
	tXai,
	tSlackHook,
	"password=Hunter2Canary",
	"Bearer Zm9vYmFyQ2FuYXJ5MTIz",
	// Issue #13: new families and key styles.
	tYa29,
	tGocspx,
	tGldt,
	tHvs,
	tPmak,
	tAge,
	tAtlas,
	tAzureSecret,
	tMailchimp,
	"apiKey=Q7vKp2Lm9XwR4tNz",
	"X-Api-Key:Q7vKp2Lm9XwR4tNz",
}

// An evasion writes a canary so that it is harder to see: escaped,
// encoded, or with invisible characters inside.
type evasionFunc func(canary string) string

// evasions are applied to the canaries by FuzzScrub. Each keeps the
// canary one run of bytes without blanks.
var evasions = []evasionFunc{
	func(c string) string { return c },
	func(c string) string { return jsonU(c, len(c)/2) },                  // \u0041
	func(c string) string { return jsonU(c, 0, len(c)-1) },               // first and last byte
	func(c string) string { return pct(c, c[len(c)/2:len(c)/2+1]+"_=") }, // %41
	func(c string) string { return insert(c, zwsp, len(c)/3, 2*len(c)/3) },
	func(c string) string { return insert(c, shy, len(c)/2) },
	func(c string) string { return insert(c, bom, 1) },
	func(c string) string { return strings.ReplaceAll(c, "=", "&#61;") },
	func(c string) string { return pct(c, "=:") },
}

func FuzzScrub(f *testing.F) {
	for _, c := range cases {
		f.Add(c.in, uint(len(c.in)/2), uint8(len(c.in)))
	}
	for _, in := range cleanCases {
		f.Add(in, uint(0), uint8(0))
	}
	for _, in := range []string{
		"", " ", "[", "[REDACTED:", "[REDACTED:]", "[REDACTED:a", "@", "a@b.co", "://", "a://b:c@", "=", ":", "::", ":::",
		"+", "+1", "-----BEGIN ", "-----BEGIN PRIVATE KEY-----", "/home/", `\Users\`, "password=", "password=\"",
		`password=\"`, "Authorization: ", "Authorization: Bearer ", "Cookie: ", "ghp_", "eyJ", "eyJa.eyJb.", "sk-",
		"1.2.3.4", "1.2.3.4.", "::1", "fe80::", "1:2:3:4:5:6:7:8:9", "4111 1111 1111 1111 1", "GB82 WEST 1234 5698 7654 32 10",
		"+1 415 555 2671 4111111111111111", "x@y.com1.2.3.4", "1.2.3.4x@y.com", "\xff\xfe", "é@é.com", "/home/é/",
		"password: \"unterminated\nnext", "token=a\\\"b\"", strings.Repeat("a", 300) + "@b.com",
		strings.Repeat("1.", 50), strings.Repeat(":", 64), strings.Repeat("4111 ", 10),
	} {
		f.Add(in, uint(len(in)), uint8(3))
	}
	// Past findings.
	f.Add("000000A://!"+"ghs_000000000000000000000000000000@", uint(0), uint8(0))
	f.Add("AuthoriZAtion: BeArer ", uint(22), uint8(20)) // + " password=Hunter2Canary "
	f.Add("A://:0@[0@0.AA", uint(18), uint8(0))
	f.Add("a@b.co-"+tGHP, uint(0), uint8(0))
	f.Add("1.2.3.4.5555-5555-5555-4444", uint(0), uint8(0))
	f.Add("AA00 AA00 AU00000000000", uint(142), uint8(9))
	f.Add("a@b.sk-proj-x", uint(13), uint8(11))
	// Issue #13: escapes, invisible characters, dumps and lists.
	for _, in := range []string{
		`\u`, `\u00`, `\u0041`, `\ud83d\ude00`, `\ud83d`, `\\u0041`, `\"`, `\\"`, `%`, `%4`, `%41`, `%E2%80%8B`, `%E2%80`,
		"&", "&#", "&#x5f;", "&#95;", "&amp;", "\u200b", "\ufeff", "\xe2\x80", "map[", "map[Cookie:[", "[]string{\"",
		`http.Header{"Authorization":[]string{"Bearer `, `"api_keys":[`, `"api_keys":["a",`, "password: \"a\nb\"",
		"api_key=AbCd1234EfGh\nIjKl5678", "https://u:p#@", "https://u:p@h@", "--api-key ", "-u a:", "the token is ",
		"GET /home/", "/api/Users/", "key-", "ssn: ", "00:1a:2b:3c:4d:5e", "3c22.fb9a.10e4", "123-45-6789",
		"fr14 2004 1010 0505 0001 3m02 606", "hvs.", "dp.st.", "sk.eyJ", "1//0", "ya29.",
	} {
		f.Add(in, uint(len(in)), uint8(len(in)))
	}
	f.Fuzz(func(t *testing.T, in string, at uint, which uint8) {
		out := String(in)
		if again := String(out); again != out {
			t.Fatalf("not idempotent:\n   in %q\n once %q\ntwice %q", in, out, again)
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of valid input %q: %q", in, out)
		}
		checkFind(t, in)

		canary := canaries[int(which)%len(canaries)]
		written := evasions[int(which)/len(canaries)%len(evasions)](canary)
		p := int(at % uint(len(in)+1))
		planted := in[:p] + " " + written + " " + in[p:]
		got := String(planted)
		if again := String(got); again != got {
			t.Fatalf("not idempotent:\n   in %q\n once %q\ntwice %q", planted, got, again)
		}
		// The canary's value, without its key or scheme, must be gone: no
		// piece of it that the input did not already contain may survive,
		// as written or decoded. Pieces of 8 bytes every 4 bytes catch any
		// surviving run of 11 bytes or more.
		secret := canary[strings.LastIndexAny(canary, "=: ")+1:]
		gotDecoded, inDecoded := decoded(got), decoded(in)
		for k := 0; k+8 <= len(secret); k += 4 {
			piece := secret[k : k+8]
			if strings.Contains(gotDecoded, piece) && !strings.Contains(inDecoded, piece) && !strings.Contains(in, piece) {
				t.Fatalf("planted secret survives: %q in\n%q\nfrom %q", piece, got, planted)
			}
		}
	})
}

// decoded returns s as the matchers see it.
func decoded(s string) string {
	k := firstEscape(s)
	if k < 0 {
		return s
	}
	w := new(view)
	return strings.Clone(w.build(s, k, false))
}

// FuzzView checks the decoded view of any text: it holds what the text
// decodes to, and each unit maps back to the original bytes it came from.
func FuzzView(f *testing.F) {
	for _, in := range []string{"", `\u0041`, "a%41b", "&#x5f;x", "a\u200bb", "\\\\", `\"x\"`, "%E2%80%8B", `\ud83d\ude00`, "&amp;&amp"} {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		k := firstEscape(in)
		if k < 0 {
			for i := 0; i < len(in); i++ {
				if escapeLen(in, i) > 0 {
					t.Fatalf("firstEscape(%q) = -1, but an escape is at %d", in, i)
				}
			}
			return
		}
		w := new(view)
		v := w.build(in, k, false)
		// Between units the view is the original; each unit decodes to
		// its view bytes.
		vi, oi := 0, 0
		for _, u := range w.units {
			if u.v-vi != u.o-oi || v[vi:u.v] != in[oi:u.o] {
				t.Fatalf("%q: view %q: identity run before unit %+v differs", in, v, u)
			}
			got, n, _ := decodeAt(in, u.o, nil, false)
			if n != u.on || string(got) != v[u.v:u.v+u.vn] {
				t.Fatalf("%q: unit %+v decodes to %q (%d), view has %q", in, u, got, n, v[u.v:u.v+u.vn])
			}
			vi, oi = u.v+u.vn, u.o+u.on
		}
		if v[vi:] != in[oi:] {
			t.Fatalf("%q: view %q: tail differs", in, v)
		}
		// Mapping is monotone and stays within the original: view[:p]
		// ends at or before view[p:] begins.
		prevS, prevE := 0, 0
		for p := 0; p <= len(v); p++ {
			s, e := len(in), 0
			if p < len(v) {
				s = w.origStart(p)
			}
			if p > 0 {
				e = w.origEnd(p)
			}
			inside := false // p is inside a unit, which maps whole
			for _, u := range w.units {
				inside = inside || u.v < p && p < u.v+u.vn
			}
			if s < prevS || e < prevE || e > s && !inside || s > len(in) {
				t.Fatalf("%q: view %q: mapping of %d not monotone: start %d end %d", in, v, p, s, e)
			}
			prevS, prevE = s, e
		}
	})
}

// checkFind checks that Find's matches are in range, sorted and disjoint,
// and agree with String.
func checkFind(t *testing.T, in string) {
	ms := Default().Find(in)
	prev := 0
	var b strings.Builder
	for _, m := range ms {
		if m.Start < prev || m.End <= m.Start || m.End > len(in) {
			t.Fatalf("bad matches for %q: %v", in, ms)
		}
		b.WriteString(in[prev:m.Start])
		b.WriteString(r(m.Family))
		prev = m.End
	}
	b.WriteString(in[prev:])
	if got := String(in); got != b.String() {
		t.Fatalf("Find and String disagree on %q:\n%q\n%q", in, got, b.String())
	}
}
