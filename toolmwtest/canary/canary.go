package canary

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolmw/toolmw/taxonomy"
)

// A Secret is a planted value and the part of it that must not survive:
// its body without the vendor prefix, so a partly scrubbed secret is caught
// too.
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

// Hidden returns the ways a tool can fail with secret where no layer may
// show it anywhere, the model included: untyped errors, and the causes and
// wrappers of typed errors.
func Hidden(secret string) map[string]error {
	return map[string]error{
		"untyped":          fmt.Errorf("dial upstream with %s: refused", secret),
		"wrapped untyped":  fmt.Errorf("outer: %w", fmt.Errorf("inner %s", secret)),
		"typed cause":      taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "supplier is down").WithCause(fmt.Errorf("auth %s rejected", secret)),
		"wrapping typed":   fmt.Errorf("call with %s: %w", secret, taxonomy.Refusal("booking_not_cancellable", "non-refundable")),
		"timeout cause":    taxonomy.Timeout(taxonomy.CodeTimeout, "too slow", true).WithCause(fmt.Errorf("waited on %s", secret)),
		"cancelled, cause": fmt.Errorf("stopped while holding %s: %w", secret, context.Canceled),
	}
}

// HiddenText are words of the texts Hidden's errors carry outside typed
// messages: none may appear where the secret may not.
var HiddenText = []string{"dial upstream", "inner ", "auth ", "call with", "waited on", "stopped while"}

// InMessages returns typed errors whose own messages carry secret. The
// model is shown a typed error's message (the redact layer scrubs it);
// telemetry never shows it.
func InMessages(secret string) map[string]error {
	return map[string]error{
		"typed own message": taxonomy.Failure("ledger_rejected", "ledger refused key "+secret),
		"field error":       taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "value_error", Loc: []any{secret}, Msg: secret}),
		"not permitted":     taxonomy.NotPermitted(taxonomy.CodeNotPermitted, "user "+secret+" may not"),
		"timeout message":   taxonomy.Timeout(taxonomy.CodeTimeout, "slow for "+secret, true),
	}
}

// MessageText are words of typed messages, Hidden's and InMessages': none
// may appear in telemetry.
var MessageText = []string{"supplier is down", "non-refundable", "too slow", "refused key", "may not", "slow for"}

// All returns Hidden and InMessages together.
func All(secret string) map[string]error {
	all := Hidden(secret)
	for name, err := range InMessages(secret) {
		all[name] = err
	}
	return all
}

// Fragments returns the secret and pieces of it distinctive enough that
// finding one means the secret leaked, even cut.
func Fragments(secret string) []string {
	out := []string{secret}
	if len(secret) > 16 {
		out = append(out, secret[len(secret)-12:], secret[4:16])
	}
	return out
}

// Find returns the family of the first canary found in text, and what of it
// was found: its value, one of its [Fragments] or its body. It returns "",
// "" when text holds none. It is safe for concurrent use.
func Find(text string) (family, found string) {
	for _, s := range Secrets {
		for _, frag := range append(Fragments(s.Value), s.Body) {
			if strings.Contains(text, frag) {
				return s.Family, frag
			}
		}
	}
	return "", ""
}
