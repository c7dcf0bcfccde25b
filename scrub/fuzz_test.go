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
		p := int(at % uint(len(in)+1))
		planted := in[:p] + " " + canary + " " + in[p:]
		got := String(planted)
		// The canary's value, without its key or scheme, must be gone: no
		// piece of it that the input did not already contain may survive.
		// Pieces of 8 bytes every 4 bytes catch any surviving run of 11
		// bytes or more.
		secret := canary[strings.LastIndexAny(canary, "= ")+1:]
		for k := 0; k+8 <= len(secret); k += 4 {
			piece := secret[k : k+8]
			if strings.Contains(got, piece) && !strings.Contains(in, piece) {
				t.Fatalf("planted secret survives: %q in\n%q\nfrom %q", piece, got, planted)
			}
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
