package canary

import "strings"

// A Secret is a planted value and the part of it that must not survive:
// its body without the vendor prefix, so a partly scrubbed secret is caught
// too.
//
// It is a plain value, safe to read from many goroutines; do not modify one that is shared.
type Secret struct {
	Family string // what it imitates
	Value  string // the planted value
	Body   string // the distinctive part to look for
}

// Secrets are canaries of several families. The values are made up.
var Secrets = []Secret{
	{"github_token", "ghp_" + body("aB3dE5gH7k", 3) + "Zq9Xw2", body("aB3dE5gH7k", 3)},
	{"aws_access_key_id", "AKIA" + "QWERTYUIOPASDFGH", "QWERTYUIOPASDFGH"},
	{"anthropic_key", "sk-ant-api03-" + body("Xy7_Kp2-Lm9Qr4", 6) + "AA", body("Xy7_Kp2-Lm9Qr4", 2)},
	{"jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjYW5hcnkifQ.c2lnbmF0dXJlLW9mLXRoZS1jYW5hcnktdG9rZW4tMTIzNDU2Nzg",
		"c2lnbmF0dXJlLW9mLXRoZS1jYW5hcnktdG9rZW4tMTIzNDU2Nzg"},
	{"email", "jane.canary@example.com", "jane.canary"},
	{"card", "4556 7375 8689 9855", "8689 9855"},
}

func body(s string, n int) string { return strings.Repeat(s, n) }

// Values returns the planted values.
func Values() []string {
	out := make([]string, len(Secrets))
	for i, s := range Secrets {
		out[i] = s.Value
	}
	return out
}

// Leaked returns the family of the first canary whose body appears in text,
// or "".
func Leaked(text string) string {
	for _, s := range Secrets {
		if strings.Contains(text, s.Body) {
			return s.Family
		}
	}
	return ""
}
