package scrub

import (
	"strings"
	"testing"
)

// Session 43 (issue 31, speed): the cheap looks that now come before the
// costly ones (passAhead, afterProseKey, entity's ';', mayRun,
// vendorPairs) must not change what is found. These are the edges of each.
var shapes43 = []shapeCase{
	// passAhead: a bare pair's password needs 8 bytes.
	{"pair, password of 8", "login as ops:W4x!kQ9@ failed", "login as [REDACTED:password] failed"},
	{"pair, password of 7", "login as ops:W4x!kQ9 failed", "login as ops:W4x!kQ9 failed"},
	{"pair, quoted password of 8", `login as ops:"W4x!kQ9@" failed`, `login as [REDACTED:password] failed`},
	// The look back from a word of credentials to "bearer",
	// across a run of words, and again for a second run.
	{"bearer, run of words", "sent bearer abcdefgh.Qx7pW2mZr9Kt.Rq7Xw2Kp9Lz4 then", "sent bearer [REDACTED:bearer_token] then"},
	{"bearer, run of 54 bytes", "sent bearer " + strings.Repeat("abcdefgh.", 6) + "Qx7pW2mZr9Kt then",
		"sent bearer [REDACTED:bearer_token] then"},
	{"bearer, then a second run with no scheme", "sent bearer abc.Qx7pW2mZr9Kt then abc.Rq7Xw2Kp9Lz4",
		"sent bearer [REDACTED:bearer_token] then abc.Rq7Xw2Kp9Lz4"},
	// afterProseKey: a secret-ish word, or a link word after one.
	{"prose, secret word", "rejected token Qx7pW2mZr9Kt here", "rejected token [REDACTED:secret] here"},
	{"prose, link word", "the token is Qx7pW2mZr9Kt here", "the token is [REDACTED:secret] here"},
	{"prose, quoted", `the token is "Qx7pW2mZr9Kt" here`, `the token is "[REDACTED:secret]" here`},
	// entity: a named character reference as the separator.
	{"entity separator", "password&equals;Rq7Xw2Kp9Lz4 x", "password&equals;[REDACTED:password] x"},
	// mayRun: a short word that a '/' or '+' joins to more is judged
	// with its run (base64's '/' and '+').
	{"run joined by '+'", "init with Qx7pW2+mZr9KtLm4Vb: x", "init with [REDACTED:high_entropy]: x"},
}

func TestShapes43(t *testing.T) { checkShapes(t, shapes43) }

// nearMisses43 must come back unchanged.
var nearMisses43 = []string{
	"GET /search?q=orders&page=4&limit=100: 200 OK", "a &amp; b &lt;c&gt; &#x41; &nbsp;",
	"Client Version: version.Info{Major:\"1\", Minor:\"27\", GitVersion:\"v1.29.6\"}",
	"java.lang.IllegalStateException: orders not initialised\n\tat com.example.OrderService.place(OrderService.java:41)",
	"failed: connection refused: fatal: undefined", "sent bearer of bad news: abc.def",
}

func TestNearMisses43(t *testing.T) {
	for _, in := range nearMisses43 {
		if got := String(in); got != in {
			t.Errorf("changed:\n   in %q\n  out %q", in, got)
		}
	}
}
