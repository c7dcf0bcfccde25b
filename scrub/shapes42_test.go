package scrub

import (
	"encoding/base64"
	"strings"
	"testing"
)

// Session 42 (issue 31, bare values and values in tool-error templates):
// classes of secrets that stand without a key or whose key is vague, and
// the near misses each class must leave alone. The values are made up
// here, not taken from a scanner's samples.

// shapes42 are messages and what each must become.
var shapes42 = []shapeCase{
	// Random letters of both cases, no digit, after a vague key or a
	// secret word in prose (mixedGenerated).
	{"vague key, letters only", "upstream refused key=hQXWkRZpVt duration=1s",
		"upstream refused key=[REDACTED:secret] duration=1s"},
	{"JSON vague key, 8 bytes", `{"metadata":{"key":"hPqXwZkV"}}`, `{"metadata":{"key":"[REDACTED:secret]"}}`},
	{"prose, letters only", "credential tRmQpXwZkL was rejected", "credential [REDACTED:secret] was rejected"},
	{"vague key, one of each class", "key=QX7PRmWk duration=1s", "key=[REDACTED:secret] duration=1s"},
	// A bare user:password pair (matchBarePair).
	{"bare pair", "init with deploy:qRzTkWpXnVbLmHcY: unexpected", "init with [REDACTED:password]: unexpected"},
	{"bare pair, symbols", "login as ops:W4x!kQ9@zR failed", "login as [REDACTED:password] failed"},
	{"bare pair quoted", `auth "j.doe:Rq7Xw2Kp#9Lz" rejected`, `auth "[REDACTED:password]" rejected`},
	{"curl's -u keeps the user name", `curl --user "j.doe:Rq7Xw2Kp#9Lz" -X GET`, `curl --user "j.doe:[REDACTED:password]" -X GET`},
	{"bare pair, quoted password", `auth kevin:'Zp4QW8rt2XK6' denied`, `auth [REDACTED:password] denied`},
	{"bare pair, base36 password", "init with svc0:k3j9x2m7q4z8w1n5 failed", "init with [REDACTED:password] failed"},
	{"an e-mail address after a label is no pair", `sans: []string{"email:alice@example.org"},`,
		`sans: []string{"email:[REDACTED:email]"},`},
	{"bare pair after an e-mail address", "auth alice@example.org:Zp4QW8rt2XK6 failed",
		"auth [REDACTED:email]:[REDACTED:password] failed"},
	{"quoted pair, no user", `curl -u ":W4x!kQ9@zR7" https://x`, `curl -u ":[REDACTED:password]" https://x`},
	{"quoted pair, no password", `curl -u "Zp4QW8rt2XK6Lm:" https://x`, `curl -u "[REDACTED:password]:" https://x`},
	// Sidekiq's credentials (hexPair).
	{"Sidekiq pair", "bundle config gems.contribsys.com 3f9ac0b1:e07d4a2c",
		"bundle config gems.contribsys.com [REDACTED:password]"},
	// Base64 of user:password (basicCredentials).
	{"base64 of user:password", "init with " + base64.StdEncoding.EncodeToString([]byte("deploy:hunter22x")) + ": x",
		"init with [REDACTED:basic_auth]: x"},
	// Session cookies (weakKey).
	{"session cookie", "Cookie laravel_session=x7Kq2Rw9Zp4Lm8Tn3Vb6 rejected",
		"Cookie laravel_session=[REDACTED:secret] rejected"},
	// Short generated runs with no word beside them (shortRandom).
	{"12 to 15 bytes, both cases", "init with Qx7pW2mZr9Kt: unexpected", "init with [REDACTED:high_entropy]: unexpected"},
	{"12 to 15 bytes, base36", "init with k3j9x2m7q4z8w1: unexpected", "init with [REDACTED:high_entropy]: unexpected"},
	// A value with '=' inside whose head begins with a digit.
	{"digit-led run with '='", "init with 00aZ7kQ2xW9pL-R=tB4nM8vC3yH6-jK1sD5fG2hP0: x", "init with [REDACTED:high_entropy]: x"},
	// A generated value at the end of an error-chain link.
	{"chain colon", "init with password: Rq7Xw2KpT9Lz4Nb: unexpected EOF",
		"init with password: [REDACTED:password]: unexpected EOF"},
	// '&' inside a value that is no form's.
	{"'&' in a password", "dsn: sslmode=require password=Rq7&Xw2K!p9 connect_timeout=5",
		"dsn: sslmode=require password=[REDACTED:password] connect_timeout=5"},
	{"'&' between a form's pairs", "body password=Rq7Xw2Kp9&user=bob&x=1", "body password=[REDACTED:password]&user=bob&x=1"},
	// A password's symbols glued to a generated run.
	{"a fragment after a run stays", "see Qx7pW2mZr9KtLm4Vb#L42 ok", "see [REDACTED:high_entropy]#L42 ok"},
	{"symbols after a run", "init with sk_Rq7Xw2Kp9Lz4Nb3T#p4&@*Wq$zE: x", "init with [REDACTED:high_entropy]: x"},
	// A label, then a generated value, after a key.
	{"label then value", "dsn password=key: UyFQXwZkdHpEc2J9 connect_timeout=5",
		"dsn password=[REDACTED:password] connect_timeout=5"},
	// A long value in prose goes on to its end.
	{"long prose value", "credential " + strings.Repeat("Rq7Xw2Kp+9Lz/4Nb", 20) + " was rejected",
		"credential [REDACTED:secret] was rejected"},
	// Slack tokens whose ids repeat a digit.
	{"Slack ids of one digit", "xoxa-2-511111111-31111111111-3111111111111-9f3a7c2e8b1d4f6a0c5e",
		"[REDACTED:slack_token]"},
}

// A shapeCase is a message and what scrubbing makes of it.
type shapeCase struct{ what, in, want string }

// checkShapes checks what scrubbing makes of each case, and that
// scrubbing that again changes nothing.
func checkShapes(t *testing.T, cases []shapeCase) {
	t.Helper()
	for _, c := range cases {
		got := String(c.in)
		if got != c.want {
			t.Errorf("%s:\n   in %q\n  got %q\n want %q", c.what, c.in, got, c.want)
		}
		if String(got) != got {
			t.Errorf("%s: not idempotent on %q", c.what, c.in)
		}
	}
}

func TestShapes42(t *testing.T) { checkShapes(t, shapes42) }

// nearMisses42 look like the classes above and must come back unchanged.
var nearMisses42 = []string{
	// Words after a vague key or a secret word.
	"unknown key=OAuthToken", "missing key=XMLHttpRequest", "key=NoSuchKey", "credential ExpiredToken was rejected",
	// Pairs that are no credentials.
	"pulled redis:7.2.4-alpine and nginx:1.25.3", "listening on localhost:8080", "user:alice", "user:admin123",
	"arn:aws:iam::123456789012:role/Admin", "error:0A000086:SSL routines::certificate verify failed",
	"pod:web-7d9f8b6c5-x2x9k", "region:us-east-1 zone:europe-west1-b", "Content-Type:application/json",
	"host:db1.internal:5432", "git@github.com:org/repo.git", "error:SomethingBad status:Failed",
	"minisat-master-keying:x64-uwp=fail", "sha512:Zp4QW8rt2XK6Lm9n", `{"a":"b","key":"x"}`,
	// Hexadecimal that is no Sidekiq pair.
	"0000cafe:00001234", "deadbeef:deadbeef", "range 7f3c9a1e..deadbeef", "cafebabe:deadbeef0",
	// Base64 of text that is no user:password.
	"cursor=YXJyYXljb25uZWN0aW9uOjE= next=b2Zmc2V0OjEwMA==",
	// Session words.
	"session=closed state=ok session=expired",
	// Short runs that are names.
	"IPv4Addr2x GetUTF8Len2 utf16LittleEnd ReadUint16At v1beta1alpha2 user123abc456 deadbeef1234 ip-10-0-1-23",
	"copy(p, v4InV6Prefix)", "uint16(xArgXmm2M128),", "v.reset(OpAMD64LEAL2)", "v.reset(OpS390XORload)",
	"AVLSSEG2E16V, AVLSSEG3E16V", "case OpOrInt16x16, OpOrInt32x16:", `"xvbf16ger2nn",`,
	// Pairs in code and text that are no credentials.
	`{"type:*complex128", 0},`, `fmt.Fprintf(&types, "%*sTypes:", indent+2, "")`,
	`pattern := "^Reality:" + Rdate`, "// https:opaque?x=1&y=2#anchor",
	// '&' that begins a value.
	"auth := &socksUsernamePassword{", "password=$(cat f) && next",
}

func TestNearMisses42(t *testing.T) {
	for _, in := range nearMisses42 {
		if got := String(in); got != in {
			t.Errorf("changed:\n   in %q\n  out %q", in, got)
		}
	}
}
