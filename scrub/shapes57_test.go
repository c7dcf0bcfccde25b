package scrub

import "testing"

// Session 57 (issue 31), from detect-secrets' test suite
// (test_data/config2.yaml): a YAML tag between a key and its value
// (password: !!binary aHVu…) was read as the value, and the value after it
// stayed. The value now follows the tag; a tag that makes the value a
// reference to a secret kept elsewhere (Home Assistant's !secret,
// CloudFormation's !Ref) leaves nothing to redact, and a password that
// begins with '!' is still a password.
func TestYAMLTags(t *testing.T) {
	red := func(f string) string { return "[REDACTED:" + f + "]" }
	cases := []struct{ in, want string }{
		{"password: !!binary aHVudGVyMkh1bnRlcg==", "password: !!binary " + red("password")},
		{"high_entropy_hex_binary_secret: !!binary MmIwMDA0MmY3NDgxYzdiMDU2YzRiNDEwZDI4ZjMzY2Y=",
			"high_entropy_hex_binary_secret: !!binary " + red("secret")},
		{"db:\n  password: !!str hunter2Hunter\n  user: app", "db:\n  password: !!str " + red("password") + "\n  user: app"},
		{"password: !!binary |\n  aHVudGVyMkh1bnRlcg==", "password: !!binary |\n  " + red("password")},
		{"password: !!binary\n  aHVudGVyMkh1bnRlcg==", "password: !!binary\n  " + red("password")},
		{"api_key: !unsafe 'sk9vQ2mLp7Rt{{x}}'", "api_key: !unsafe '" + red("secret") + "'"},
		{"password: !Passw0rd", "password: " + red("password")},
		{"password: !secret db_password", ""},
		{"MasterUserPassword: !Ref DBPassword", ""},
		{"token: !ENV ${API_TOKEN}", ""},
		{"password: !!binary", ""},
	}
	for _, c := range cases {
		want := c.want
		if want == "" {
			want = c.in
		}
		if got := String(c.in); got != want {
			t.Errorf("String(%q)\n got %q\nwant %q", c.in, got, want)
		}
		if again := String(String(c.in)); again != String(c.in) {
			t.Errorf("String(%q) is not idempotent: %q", c.in, again)
		}
	}
}
