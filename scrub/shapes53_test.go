package scrub

import "testing"

// Session 53 (issue 31): near, which finds whether a word of a token68 run
// may be credentials after an Authorization scheme, first looks whether
// the text holds "bearer" or "basic" at all. These cases read credentials
// whose word the scanner reaches inside the run (abc.def.ghi123: from
// ghi123), with the scheme in any case, after an earlier finding (the scan
// then starts after it), and texts with a 'b' where no scheme begins.
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
