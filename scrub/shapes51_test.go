package scrub

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Session 51 (issue 31), from Trivy's and secretlint's test suites: a
// vendor token whose prefix the word before it runs into
// (ourgithub_pat_…, tokenxoxb-…, x_glpat-…), as gitleaks' rules for these
// vendors and Trivy's for GitHub's fine-grained tokens match it, and the
// words Trivy's tests keep (Sogho_ICANVAS…: a short prefix keeps its
// boundary); a JWT after a '_'; GitHub's token as a URL's user name
// before x-oauth-basic; Shopify tokens of letters and digits; and a URL
// with no credentials as the value of a secret-ish key.

// gluedBody returns n bytes of alphabet, the same for the same seed.
func gluedBody(seed uint64, alphabet string, n int) string {
	r := rand.New(rand.NewPCG(seed, 51))
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

const (
	alnum51  = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	hex51    = "0123456789abcdef"
	digits51 = "0123456789"
)

// gluedTokens are one token of each kind of prefix read glued: a '_'
// inside the word (matchGlued), a '-' that ends it (matchPunct).
var gluedTokens = map[string]string{
	"github fine-grained": "github_pat_" + gluedBody(1, alnum51, 22) + "_" + gluedBody(2, alnum51, 59),
	"gitlab pat":          "glpat-" + gluedBody(3, alnum51, 20),
	"gitlab deploy":       "gldt-" + gluedBody(4, alnum51, 20),
	"slack bot":           "xoxb-" + gluedBody(5, digits51, 12) + "-" + gluedBody(6, digits51, 13) + "-" + gluedBody(7, alnum51, 24),
	"slack user":          "xoxp-" + gluedBody(8, digits51, 11) + "-" + gluedBody(9, digits51, 12) + "-" + gluedBody(10, digits51, 13) + "-" + gluedBody(11, hex51, 32),
	"shopify":             "shpat_" + gluedBody(12, hex51, 32),
	"linear":              "lin_api_" + gluedBody(13, alnum51, 40),
}

func TestGlued51(t *testing.T) {
	for what, tok := range gluedTokens {
		if got := String(tok); got == tok || strings.Contains(got, tok[len(tok)/2:]) {
			t.Fatalf("%s: %q is not found alone: %q", what, tok, got)
		}
		for _, head := range []string{"our", "x_", "9", "Token", "id_v2"} {
			in := "rejected " + head + tok + " (401)"
			got := String(in)
			if !strings.HasPrefix(got, "rejected "+head+"[REDACTED:") || !strings.HasSuffix(got, "] (401)") {
				t.Errorf("%s after %q:\n   in %q\n  got %q", what, head, in, got)
			}
			if String(got) != got {
				t.Errorf("%s after %q: not idempotent: %q", what, head, got)
			}
		}
	}
}

var shapes51 = []shapeCase{
	// Trivy's "secret inside another word" (testdata/wrapped-secrets.txt):
	// short prefixes, or bodies that are no token's.
	{"gho_ ending a word", "Sogho_ICANVASRENDERINGVIACONTEXT2D3D5D7D8D", "Sogho_ICANVASRENDERINGVIACONTEXT2D3D5D7D8D"},
	{"ghu_ ending a word", "Soghu_ICANVASRENDERINGVIACONTEXT2D3D5D7D8D", "Soghu_ICANVASRENDERINGVIACONTEXT2D3D5D7D8D"},
	{"FLWSECK_TEST- inside a word", "ABCDFLWSECK_TEST-CANVASRENDERCONTEXT2DCANVASRENDA", "ABCDFLWSECK_TEST-CANVASRENDERCONTEXT2DCANVASRENDA"},
	{"xoxb- with a short body", "abcdexoxb-1234567890", "abcdexoxb-1234567890"},
	{"sk_live_ ending a word", "ask_live_superlive1", "ask_live_superlive1"},
	{"task_test_", "see task_test_ofggaq9xt073q6ji54tzlfgrp7xbac here", "see task_test_ofggaq9xt073q6ji54tzlfgrp7xbac here"},
	// A glued prefix whose body is a placeholder or a word.
	{"a placeholder body", "ourglpat-xxxxxxxxxxxxxxxxxxxxxxxx", "ourglpat-xxxxxxxxxxxxxxxxxxxxxxxx"},
	{"a word after the prefix", "catalog_item_shpat_configuration_default_value", "catalog_item_shpat_configuration_default_value"},

	// A JWT after a '_'.
	{"JWT after a '_'", "ghs_12345_eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpYXQiOjE3NDU1NjgwMDB9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c done", "[REDACTED:github_token] done"}, // (the whole installation token: session 59)
	// GitHub's token as the user name.
	{"x-oauth-basic", `"dep": "git+https://9f3a1c0b7d2e4f6a8b0c1d2e3f4a5b6c7d8e9f0a:x-oauth-basic@github.com/org/repo.git"`, `"dep": "git+https://[REDACTED:url_password]@github.com/org/repo.git"`},
	// Shopify: 32 hexadecimal digits, or 32 to 64 letters and digits
	// that look generated (secretlint's samples).
	{"Shopify, letters and digits", "shpat_r8TRc9ZXAvcVvcrmtr7qoVw69WeeY1ex", "[REDACTED:shopify_token]"},
	{"Shopify, a word", "shpat_configurationdefaultvaluesforstore", "shpat_configurationdefaultvaluesforstore"},
	// A URL with no credentials names an address (secretlint's
	// ok.valid: mongodb://localhost:27017/database).
	{"URL after a secret-ish key", `const MONGO_NO_AUTH = "mongodb://localhost:27017/database";`, `const MONGO_NO_AUTH = "mongodb://localhost:27017/database";`},
	{"token endpoint", `"token": "https://api.example.com/v1/token"`, `"token": "https://api.example.com/v1/token"`},
	{"URL with a generated part", "secret: https://hooks.example.com/hook/8f3kd92JdkQ0sPz1", "secret: [REDACTED:secret]"},
	{"URL with credentials", `DB_AUTH = "postgres://app:Xk29fj3LmQ@db.internal:5432/app"`, `DB_AUTH = "[REDACTED:secret]"`},
	// Base64's padding goes with the value after a vaguer key, which
	// '=' otherwise ends (secretlint's ANY_KEY = ZHVtbXk…YQ==).
	{"padding after KEY =", "ANY_KEY = ZHVtbXkgdGV4dCBkYXRhIGRhdGEgZGF0YQ==", "ANY_KEY = [REDACTED:secret]"},
	{"one '=' of padding", "attempt=3 key=QUJDREVGRzEyMzQ1Njc4OWFiY2Q= duration=1.2s", "attempt=3 key=[REDACTED:secret] duration=1.2s"},
	{"'=' before a token byte", "key: QUJDREVGRzEyMzQ1Njc4OWFiY2Q=x", "key: [REDACTED:secret]"},
	// A value in prose that runs into a finding of a first pass after
	// punctuation it ends with (FuzzScrub, c8c7942ae3ef9ca6): the second
	// pass rejects it as the first did the whole run.
	{"prose value into a placeholder", "token 0A://000:0@000", "token 0A://000:[REDACTED:url_password]@000"},
	{"prose value before a colon and a placeholder", "token 9fK2mQ8xZ:[REDACTED:secret] was sent", "token 9fK2mQ8xZ:[REDACTED:secret] was sent"},
	// Digits after a network address's '/' that begin another address
	// are no prefix length (FuzzScrub, bbd14d7bdb805b04): both addresses
	// go, in the first pass as in the second.
	{"IPv6 after '/'", "1::000/20::00", "[REDACTED:ip]/[REDACTED:ip]"},
	{"IPv4 after '/'", "route 10.0.0.0/8.8.8.8 x", "route [REDACTED:ip]/[REDACTED:ip] x"},
	{"a prefix length before ':'", "10.0.0.0/8: ok", "10.0.0.0/8: ok"},
	{"a prefix length before '.'", "blocked 192.168.0.0/16.", "blocked 192.168.0.0/16."},
}

func TestShapes51(t *testing.T) { checkShapes(t, shapes51) }
