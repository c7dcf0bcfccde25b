package scrub

import (
	"math/bits"
	"strings"
)

// This file holds the matchers for vendor tokens: secrets recognisable by a
// fixed prefix and a body of a known alphabet and length. Each is called at a
// word start and looks only forward.

// hit is one finding: in[start:end] belongs to family fam.
type hit struct {
	start, end int
	fam        family
}

// awsPrefixes begin AWS access key ids (long-term AKIA, temporary ASIA, and
// the ids of other IAM resources).
var awsPrefixes = [...]string{
	"AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA",
	"AIPA", "ANPA", "ANVA", "APKA", "AROA",
}

// exact matches a prefix of length p at in[i:], already checked by the caller,
// followed by exactly n bytes of set and then no letter or digit. The body
// may be wrapped across line breaks (see wrapEnd); a placeholder body
// (xxxx…) is no token.
func exact(in string, i, p int, set uint32, n int, f family) (hit, bool) {
	j := i + p
	e, got := wrapEnd(in, j, set, n, n+1)
	if got != n || is(in, e, cAlnum) || dummy(in[j:e]) {
		return hit{}, false
	}
	return hit{i, e, f}, true
}

// lowerHexWord reports whether in[j:j+n] is n lower-case hexadecimal
// digits, with a letter (hexWord) and a digit, that end a word, and no
// placeholder.
func lowerHexWord(in string, j, n int) bool {
	if j+n > len(in) || is(in, j+n, cWord) {
		return false
	}
	w := in[j : j+n]
	return hexWord(w) && hasDigit(w) && !dummy(w)
}

// atLeast is like exact but accepts a body of min or more bytes, and at
// most maxToken: it reads no more, so that a prefix written over and over
// (npm_npm_npm_…) costs a bounded read each.
func atLeast(in string, i, p int, set uint32, min int, f family) (hit, bool) {
	j := i + p
	e, n := wrapEnd(in, j, set, min, maxToken+1)
	if n < min || n > maxToken || is(in, e, cAlnum) || dummy(in[j:e]) {
		return hit{}, false
	}
	return hit{i, e, f}, true
}

// randomAtLeast is atLeast for prefixes short enough to begin ordinary
// identifiers ("sk-", "xai-"): the body must also look random, which its
// first 64 bytes decide.
func randomAtLeast(in string, i, p int, set uint32, min int, f family) (hit, bool) {
	j := i + p
	if !mixed(in[j:skipMax(in, j, set, 64)]) {
		return hit{}, false
	}
	return atLeast(in, i, p, set, min, f)
}

// randomToken is atLeast for prefixes that test names and other
// identifiers begin with too (sk_test_configuration, gsk_…): the body
// must also look generated (see randomBody).
func randomToken(in string, i, p int, set uint32, min int, f family) (hit, bool) {
	h, ok := atLeast(in, i, p, set, min, f)
	return h, ok && randomBody(in[i+p:h.end])
}

// matchToken matches a vendor token or an Authorization scheme at in[i],
// a word start. lo is the end of the previous finding.
func matchToken(in string, i, lo int) (hit, bool) {
	rest := in[i:]
	if h, ok := matchUnprefixed(in, i, lo); ok {
		return h, true
	}
	switch in[i] {
	case 'A':
		if len(rest) >= 4 && (isAWSPrefix(rest[:4]) || rest[:3] == "A3T" && is(in, i+3, cUpperDigit)) {
			if h, ok := exact(in, i, 4, cUpperDigit, 16, famAWSAccessKey); ok {
				return h, true
			}
		}
		if strings.HasPrefix(rest, "A3-") {
			return matchOnePasswordKey(in, i)
		}
		if strings.HasPrefix(rest, "AIza") {
			return exact(in, i, 4, cB64URL, 35, famGoogleAPIKey)
		}
		if strings.HasPrefix(rest, "AC") {
			if h, ok := exact(in, i, 2, cHex, 32, famTwilioKey); ok {
				return h, true
			}
		}
	case 'S':
		if strings.HasPrefix(rest, "SG.") {
			return matchSendGrid(in, i)
		}
		if strings.HasPrefix(rest, "SK") {
			return exact(in, i, 2, cHex, 32, famTwilioKey)
		}
	case 'B', 'b':
		// Telegram's Bot API puts the token right after "bot" in its URLs.
		if strings.HasPrefix(rest, "bot") && is(in, i+3, cDigit) {
			if d := skip(in, i+3, cDigit); d-i-3 >= 8 && d-i-3 <= 10 && d < len(in) && in[d] == ':' {
				return matchTelegram(in, i+3, d)
			}
		}
		if h, ok := matchAuthScheme(in, i); ok {
			return h, true
		}
	case 'M', 'N', 'O':
		if h, ok := matchDiscordToken(in, i); ok {
			return h, true
		}
	case 'a', 'e', 's':
		if h, ok := matchAuthress(in, i); ok {
			return h, true
		}
	}
	switch in[i] {
	case 'd':
		switch {
		case strings.HasPrefix(rest, "dop_v1_"), strings.HasPrefix(rest, "doo_v1_"), strings.HasPrefix(rest, "dor_v1_"):
			return exact(in, i, 7, cHex, 64, famDigitalOceanToken)
		case strings.HasPrefix(rest, "dapi"):
			return matchDatabricks(in, i)
		case strings.HasPrefix(rest, "discord"):
			return matchDiscordWebhook(in, i)
		}
	case 'e':
		// Inside a run of base64url, every word starts after a '-'. Not
		// starting a JWT there keeps a long run from being read again
		// from each of its words.
		if prev(in, i, lo) == '-' {
			return hit{}, false
		}
		if h, ok := matchJWT(in, i); ok {
			return h, true
		}
	case 'g':
		switch {
		case len(rest) > 4 && rest[0:2] == "gh" && strings.IndexByte("pousr", rest[2]) >= 0 && rest[3] == '_':
			if h, ok := atLeast(in, i, 4, cAlnum, 30, famGitHubToken); ok {
				return h, true
			}
			// An installation token of the longer format: ghs_<app id>_<JWT>.
			if d := skip(in, i+4, cDigit); d > i+4 && d < len(in) && in[d] == '_' {
				if h, ok := matchJWT(in, d+1); ok {
					return hit{i, h.end, famGitHubToken}, true
				}
			}
			return hit{}, false
		case strings.HasPrefix(rest, "github_pat_"):
			return atLeast(in, i, 11, cWord, 22, famGitHubToken)
		case strings.HasPrefix(rest, "glpat-"):
			if prev(in, i, lo) == '-' {
				return hit{}, false // inside a run of base64url, as for a JWT
			}
			h, ok := atLeast(in, i, 6, cB64URL, 20, famGitLabToken)
			if ok {
				h.end = routingSuffix(in, h.end)
			}
			return h, ok
		case strings.HasPrefix(rest, "gsk_"):
			return randomToken(in, i, 4, cAlnum, 20, famGroqKey)
		}
	case 'h':
		if strings.HasPrefix(rest, slackHost) {
			return matchSlackWebhook(in, i)
		}
		if strings.HasPrefix(rest, zapierHooks) {
			return matchZapierWebhook(in, i)
		}
	case 'k':
		// Mailgun's private API keys: "key-" and 32 lower-case letters
		// and digits (hexadecimal digits in the keys of recent years).
		if strings.HasPrefix(rest, "key-") {
			h, ok := exact(in, i, 4, cLowerDigit, 32, famMailgunKey)
			return h, ok && !is(in, h.end, cWord)
		}
	case 'n':
		if strings.HasPrefix(rest, "npm_") {
			return atLeast(in, i, 4, cAlnum, 36, famNPMToken)
		}
	case 'p':
		if strings.HasPrefix(rest, pypiPrefix) && prev(in, i, lo) != '-' {
			return atLeast(in, i, len(pypiPrefix), cB64URL, 20, famPyPIToken)
		}
		if strings.HasPrefix(rest, testPyPIPrefix) && prev(in, i, lo) != '-' {
			return atLeast(in, i, len(testPyPIPrefix), cB64URL, 20, famPyPIToken)
		}
		if strings.HasPrefix(rest, "pat") {
			if h, ok := matchAirtable(in, i); ok {
				return h, true
			}
		}
	case 'r':
		if strings.HasPrefix(rest, "rk_") && stripeMode(rest[3:]) {
			return randomToken(in, i, 8, cAlnum, 10, famStripeKey)
		}
	case 's':
		switch {
		case strings.HasPrefix(rest, "sk-") && prev(in, i, lo) == '-':
			// Inside a run of base64url (sk-sk-sk-…), as for a JWT: the
			// first "sk-" of the run is read on, the others not again.
			return hit{}, false
		case strings.HasPrefix(rest, "sk-ant-"):
			return atLeast(in, i, 7, cB64URL, 20, famAnthropicKey)
		case strings.HasPrefix(rest, "sk-or-v1-"):
			return atLeast(in, i, 9, cHex, 32, famOpenRouterKey)
		case strings.HasPrefix(rest, "sk-"):
			if strings.HasPrefix(rest, "sk-lf-") {
				// Langfuse's secret keys: a UUID after the prefix.
				if h, ok := matchUUID(in, i+len("sk-lf-")); ok && h.end == i+len("sk-lf-")+36 {
					return hit{i, h.end, famLangfuseKey}, true
				}
			}
			if h, ok := matchOpenAIWatermark(in, i); ok {
				return h, true
			}
			if lowerHexWord(in, i+3, 32) {
				// The keys of OpenAI-compatible APIs that write sk- and
				// 32 lower-case hexadecimal digits (DeepSeek, DashScope).
				return hit{i, i + 3 + 32, famOpenAIKey}, true
			}
			return randomAtLeast(in, i, 3, cB64URL, 20, famOpenAIKey)
		case strings.HasPrefix(rest, "sntrys_eyJ"):
			return matchSentryOrg(in, i, lo)
		case strings.HasPrefix(rest, "sk_") && stripeMode(rest[3:]):
			return randomToken(in, i, 8, cAlnum, 10, famStripeKey)
		case strings.HasPrefix(rest, "sk_") && lowerHexWord(in, i+3, 48):
			// ElevenLabs: sk_ and 48 lower-case hexadecimal digits.
			return hit{i, i + 3 + 48, famElevenLabsKey}, true
		case len(rest) > 6 && rest[:3] == "shp" && rest[5] == '_' &&
			(rest[3:5] == "at" || rest[3:5] == "ss" || rest[3:5] == "ca" || rest[3:5] == "pa"):
			return matchShopify(in, i)
		}
	case 'w':
		if strings.HasPrefix(rest, "whsec_") {
			return randomToken(in, i, 6, cAlnum, 20, famStripeKey)
		}
		if strings.HasPrefix(rest, teamsHost) {
			return matchTeamsWebhook(in, i)
		}
	case 'x':
		switch {
		case len(rest) > 5 && rest[:3] == "xox" && strings.IndexByte("abeoprs", rest[3]) >= 0 && rest[4] == '-':
			return slackToken(in, i, 5, 8, lo)
		case strings.HasPrefix(rest, "xapp-"):
			return slackToken(in, i, 5, 10, lo)
		case strings.HasPrefix(rest, "xoxe.xox") && len(rest) > 10 && rest[9] == '-':
			return slackToken(in, i, 10, 10, lo)
		case strings.HasPrefix(rest, "xai-"):
			return randomAtLeast(in, i, 4, cAlnum, 20, famXAIKey)
		}
	}
	return matchVendor(in, i, lo)
}

// matchShopify matches a Shopify access token or shared secret (shpat_,
// shpca_, shppa_, shpss_): 32 hexadecimal digits as Shopify issues them
// (gitleaks' rules), or 32 to 64 letters and digits that look generated,
// as other scanners take them (secretlint's rule).
func matchShopify(in string, i int) (hit, bool) {
	if h, ok := exact(in, i, 6, cHex, 32, famShopifyToken); ok {
		return h, true
	}
	h, ok := randomToken(in, i, 6, cAlnum, 32, famShopifyToken)
	return h, ok && h.end-i-6 <= 64
}

// slackToken matches a Slack token whose prefix of length p is at in[i]:
// at least min bytes of base64url that look random (numbers and a random
// secret, not xoxb-my-bot-token or xoxe.xoxp-1-RANDOMSTRINGHERE).
// The numbers before the secret are ids (a team's, a user's, an app's),
// which fake tokens write with one digit over and over
// (xoxa-2-511111111-31111111111-…-e039d02840a0b9379c): the test for a
// placeholder body (dummy) reads the secret after the last '-' only.
func slackToken(in string, i, p, min, lo int) (hit, bool) {
	if chars[prev(in, i, lo)]&cB64URL != 0 {
		// Right after a byte of a body (xoxb-xoxb-…): as in matchVendor,
		// only the first prefix of a run is read on, so that every byte
		// is read a bounded number of times.
		return hit{}, false
	}
	j := i + p
	e, n := wrapEnd(in, j, cB64URL, min, maxToken+1)
	if n < min || n > maxToken || is(in, e, cAlnum) {
		return hit{}, false
	}
	body := in[j:e]
	secret := body
	if k := strings.LastIndexByte(body, '-'); k > 0 && k+1 < len(body) && strings.Trim(body[:k], "0123456789-") == "" {
		secret = body[k+1:]
	}
	if dummy(secret) || !randomBody(body) {
		return hit{}, false
	}
	return hit{i, e, famSlackToken}, true
}

// matchSentryOrg matches a Sentry organisation auth token at in[i]:
// "sntrys_", the base64 of a JSON object ("eyJ", '+', '/' and '=' inside),
// '_' and the base64 of the secret: 50 bytes or more of that alphabet. As
// in matchVendor, it does not begin right after a byte of its body (but
// '='), and reads no more than maxToken bytes of it.
func matchSentryOrg(in string, i, lo int) (hit, bool) {
	const set = cB64 | cEquals | cUnderscore
	if p := prev(in, i, lo); p != '=' && chars[p]&set != 0 {
		return hit{}, false
	}
	j := i + len("sntrys_")
	e, n := wrapEnd(in, j, set, 50, maxToken+1)
	if n < 50 || n > maxToken || is(in, e, cAlnum) || dummy(in[j:min(e, j+64)]) {
		return hit{}, false
	}
	return hit{i, e, famSentryToken}, true
}

// stripeMode reports whether s begins with the mode part of a Stripe
// key's prefix: test_, live_ or prod_.
func stripeMode(s string) bool {
	return len(s) >= 5 && s[4] == '_' && (s[:4] == "test" || s[:4] == "live" || s[:4] == "prod")
}

// matchHexToken matches the tokens that begin with a run of hexadecimal
// digits at in[i]: Mailchimp API keys (32 hex digits, "-us" and a data
// centre number) and Mailgun's newer keys (32-8-8 hex digits).
func matchHexToken(in string, i int) (hit, bool) {
	h := skipMax(in, i, cHex, 33)
	if h-i != 32 || h+3 >= len(in) || in[h] != '-' {
		return hit{}, false
	}
	if strings.HasPrefix(in[h:], "-us") && is(in, h+3, cDigit) {
		e := skipMax(in, h+3, cDigit, 3)
		if e-h-3 <= 2 && !is(in, e, cWord) {
			return hit{i, e, famMailchimpKey}, true
		}
		return hit{}, false
	}
	e1 := skipMax(in, h+1, cHex, 9)
	if e1-h-1 != 8 || e1 >= len(in) || in[e1] != '-' {
		return hit{}, false
	}
	e2 := skipMax(in, e1+1, cHex, 9)
	if e2-e1-1 != 8 || is(in, e2, cWord) {
		return hit{}, false
	}
	return hit{i, e2, famMailgunKey}, true
}

// matchShapedToken matches the tokens without a prefix of their own that
// begin at the word start in[i]: Azure AD client secrets and Terraform
// Cloud tokens.
func matchShapedToken(in string, i int) (hit, bool) {
	switch {
	case i+5 < len(in) && in[i+5] == '~':
		return matchAzureSecret(in, i)
	case i+14 < len(in) && in[i+14] == '.':
		return matchTerraform(in, i)
	}
	return hit{}, false
}

// matchAzureSecret matches an Azure AD (Entra ID) client secret at the
// word start in[i]: three bytes, a digit, "Q~" and 31 to 34 more.
func matchAzureSecret(in string, i int) (hit, bool) {
	return matchAzureSecretAt(in, i, i)
}

// azureSet holds the bytes of an Azure AD client secret: base64url, '.'
// and '~'.
const azureSet = cB64URL | cDotted | cTilde

// matchAzureSecretAt matches an Azure AD client secret at in[i], which
// need not be a word start: its first three bytes may be '.', '~' or '_'
// too (.IQ8Q~…, ~Gg8Q~…). It does not begin inside a longer run of its
// bytes. lo is as for matchToken.
func matchAzureSecretAt(in string, i, lo int) (hit, bool) {
	if i+6 > len(in) || !isDigit(in[i+3]) || in[i+4] != 'Q' || in[i+5] != '~' ||
		skip(in[:i+3], i, cWord|cDotted|cTilde) != i+3 || i > lo && chars[in[i-1]]&azureSet != 0 {
		return hit{}, false
	}
	e := skipMax(in, i+6, azureSet, 35)
	for e > i+6 && in[e-1] == '.' {
		e--
	}
	if n := e - i - 6; n < 31 || n > 34 || is(in, e, cAlnum) || dummy(in[i+6:e]) {
		return hit{}, false
	}
	return hit{i, e, famAzureClientSecret}, true
}

// matchTerraform matches a Terraform Cloud token at the word start in[i]:
// 14 letters and digits, ".atlasv1." and 60 or more base64url bytes.
func matchTerraform(in string, i int) (hit, bool) {
	w := skipMax(in, i, cAlnum, 15)
	if w-i != 14 || !strings.HasPrefix(in[w:], ".atlasv1.") {
		return hit{}, false
	}
	h, ok := atLeast(in, w, len(".atlasv1."), cB64URL|cEquals, 60, famTerraformToken)
	h.start = i
	return h, ok
}

// tokenPrefixes are the prefixes that matchToken looks for itself, before
// the vendor table, and those of the matchers it calls by a token's first
// byte (matchAuthScheme, matchAuthress, matchJWT, matchAirtable): a word
// that begins with none of them, nor with a prefix of the table, starts
// no token there (see startPairs). The AWS prefixes are in awsPrefixes.
var tokenPrefixes = [...]string{
	"A3T", "A3-", "AIza", "AC", "SG.", "SK", "bot", "bearer", "basic",
	"sc_", "ext_", "authress_", "dop_", "doo_", "dor_", "dapi", "discord",
	"eyJ", "gh", "github_pat_", "glpat-", "gsk_", slackHost, "key-", "npm_",
	pypiPrefix, testPyPIPrefix, "pat", "rk_", "sk-", "sk_", "sntrys_", "shp", "whsec_",
	teamsHost, "xox", "xapp-", "xai-",
}

// startPairs holds the first two bytes of every prefix matchToken may
// find at a word start: those of tokenPrefixes and awsPrefixes, in both
// cases for the Authorization schemes, and those of the vendor table.
var startPairs = func() (t pairSet) {
	t = vendorPairs
	for _, p := range tokenPrefixes {
		t.add(p[0], p[1])
	}
	for _, p := range awsPrefixes {
		t.add(p[0], p[1])
	}
	for _, p := range [...]string{"be", "ba"} {
		for _, a := range [...]byte{p[0], p[0] &^ 0x20} {
			for _, b := range [...]byte{p[1], p[1] &^ 0x20} {
				t.add(a, b)
			}
		}
	}
	return t
}()

// startTriples holds the first three bytes of the prefixes of startPairs
// that have three or more, and wildPairs the pairs of those that have two
// (AC, SK, gh), which any byte may follow: most words that begin with a
// prefix's pair do not go on with its third byte (shelf: shp_…; sketch:
// sk-…, sk_…), and mayMatchWord rules them out at this look.
var startTriples, wildPairs = func() (t tripleSet, wild pairSet) {
	add := func(p string) {
		if len(p) == 2 {
			wild.add(p[0], p[1])
			return
		}
		t.add(p[0], p[1], p[2])
	}
	for _, v := range vendors {
		add(v.prefix)
	}
	for _, p := range tokenPrefixes {
		add(p)
	}
	for _, p := range awsPrefixes {
		add(p)
	}
	// The Authorization schemes, which matchAuthScheme reads in any case.
	for _, p := range [...]string{"bea", "bas"} {
		for k := range 8 {
			q := []byte(p)
			for n := range q {
				if k&(1<<n) != 0 {
					q[n] &^= 0x20
				}
			}
			add(string(q))
		}
	}
	return t, wild
}()

// tripleSet is a set of triples of bytes, hashed into 1<<16 bits: a
// triple it holds is always in it, others rarely (the prefixes set 160
// bits).
type tripleSet [1 << 10]uint64

// tripleBit returns the bit of the triple a, b, c in a tripleSet.
func tripleBit(a, b, c byte) uint32 {
	return (uint32(a)<<16 | uint32(b)<<8 | uint32(c)) * 0x9e3779b1 >> 16
}

// add puts the triple a, b, c in the set.
func (t *tripleSet) add(a, b, c byte) {
	k := tripleBit(a, b, c)
	t[k>>6] |= 1 << (k & 63)
}

// at reports whether the three bytes at in[i] may be a triple of the set.
func (t *tripleSet) at(in string, i int) bool {
	if i+2 >= len(in) {
		return false
	}
	k := tripleBit(in[i], in[i+1], in[i+2])
	return t[k>>6]&(1<<(k&63)) != 0
}

const (
	slackHost = "hooks.slack.com/"
	teamsHost = "webhook.office.com/"
	// teamsLegacyHost is the host of Teams webhooks made before 2021.
	teamsLegacyHost = "outlook.office.com"
	pypiPrefix      = "pypi-AgEIcHlwaS5vcmc" // "pypi-" and the base64 of the macaroon's "pypi.org"
	// Test PyPI's (test.pypi.org) tokens: the macaroon's location is
	// "test.pypi.org".
	testPyPIPrefix = "pypi-AgENdGVzdC5weXBpLm9yZw"
)

func isAWSPrefix(p string) bool {
	if len(p) != 4 || p[0] != 'A' || p[3] != 'A' {
		return false // every one is A??A: most words are ruled out at a look
	}
	for _, q := range awsPrefixes {
		if p == q {
			return true
		}
	}
	return false
}

// matchSendGrid matches SG.<16-32>.<20+> (the key id and the secret), or
// "SG." and 66 random-looking bytes of the key's alphabet.
func matchSendGrid(in string, i int) (hit, bool) {
	j := i + 3
	e := skipMax(in, j, cB64URL, 33)
	if e-j < 16 || e-j > 32 || e >= len(in) || in[e] != '.' {
		e := skipMax(in, j, vB64URLAll, 68)
		for e > j && in[e-1] == '.' {
			e--
		}
		if e-j == 66 && !is(in, e, cAlnum) && randomBody(in[j:e]) && !dummy(in[j:e]) {
			return hit{i, e, famSendGridKey}, true
		}
		return hit{}, false
	}
	h, ok := atLeast(in, e, 1, cB64URL, 20, famSendGridKey)
	h.start = i
	return h, ok
}

// matchDatabricks matches dapi<32 hex>, with an optional -<digits> suffix.
func matchDatabricks(in string, i int) (hit, bool) {
	h, ok := exact(in, i, 4, cHex, 32, famDatabricksToken)
	if !ok {
		return h, false
	}
	if h.end+1 < len(in) && in[h.end] == '-' && isDigit(in[h.end+1]) {
		h.end = skip(in, h.end+1, cDigit)
	}
	return h, true
}

// matchJWT matches a compact JWS: eyJ<header>.eyJ<payload>.<signature>.
// The signature may be empty (alg "none"), or left off with its dot: the
// header and the claims alone are a token too, and the claims as
// sensitive. A payload that is not JSON (a JWS of other content, or a
// JWE, whose parts after the header are encrypted) is matched by
// matchOpaqueJOSE.
func matchJWT(in string, i int) (hit, bool) {
	if !strings.HasPrefix(in[i:], "eyJ") {
		return hit{}, false
	}
	e1 := skip(in, i, cB64URL)
	if e1-i < 10 || e1 >= len(in) || in[e1] != '.' {
		return hit{}, false
	}
	if !strings.HasPrefix(in[e1+1:], "eyJ") {
		return matchOpaqueJOSE(in, i, e1)
	}
	e2 := skip(in, e1+1, cB64URL)
	if e2-e1-1 < 10 {
		return hit{}, false
	}
	if e2 >= len(in) || in[e2] != '.' {
		return hit{i, e2, famJWT}, true
	}
	return hit{i, skip(in, e2+1, cB64URL), famJWT}, true
}

// joseHeaders are the base64url of the first member of a JOSE header as
// libraries write it: {"alg":, {"typ":, {"kid":, {"enc":, {"cty":, {"zip":.
var joseHeaders = [...]string{"eyJhbGciOi", "eyJ0eXAiOi", "eyJraWQiOi", "eyJlbmMiOi", "eyJjdHkiOi", "eyJ6aXAiOi"}

// matchOpaqueJOSE matches, after a JOSE header in[i:e1] (one of
// joseHeaders' starts), the parts of a compact serialization whose
// payload is not JSON (RFC 7515, 7516): a JWS, <header>.<payload>.<signature>
// with a signature of 16 bytes or more (22 base64url characters), or a
// JWE, <header>.<encrypted key>.<iv>.<ciphertext>.<tag>, the key empty
// for direct encryption, the IV and the tag 16 characters or more (12
// bytes: AES-GCM's IV; tags are 16 bytes). The parts must end the run:
// another dot or base64url byte after them is some other dotted word.
func matchOpaqueJOSE(in string, i, e1 int) (hit, bool) {
	if e1-i < 20 {
		return hit{}, false
	}
	known := false
	for _, h := range joseHeaders {
		known = known || strings.HasPrefix(in[i:], h)
	}
	if !known {
		return hit{}, false
	}
	var ends [4]int
	n, p := 0, e1
	for n < len(ends) && p < len(in) && in[p] == '.' {
		p = skip(in, p+1, cB64URL)
		ends[n] = p
		n++
	}
	if p < len(in) && in[p] == '.' && is(in, p+1, cB64URL) {
		return hit{}, false // a sixth part (skip stopped at a byte that is no part's)
	}
	part := func(k int) int { // the length of part k+1 (0: the one after the header)
		if k == 0 {
			return ends[0] - e1 - 1
		}
		return ends[k] - ends[k-1] - 1
	}
	switch {
	case n == 2 && part(0) >= 2 && part(1) >= 22:
		return hit{i, ends[1], famJWT}, true
	case n == 4 && part(1) >= 16 && part(2) >= 2 && part(3) >= 16:
		return hit{i, ends[3], famJWT}, true
	}
	return hit{}, false
}

// matchDiscordToken matches a bot token: the base64 of the bot's id
// (24-28 bytes, starting with M, N or O), a 6-7 byte timestamp and a 27-40
// byte HMAC, separated by dots.
func matchDiscordToken(in string, i int) (hit, bool) {
	e1 := skipMax(in, i, cAlnum, 29)
	if e1-i < 24 || e1-i > 28 || e1 >= len(in) || in[e1] != '.' || !hasDigit(in[i:e1]) {
		return hit{}, false
	}
	e2 := skipMax(in, e1+1, cB64URL, 8)
	if e2-e1-1 < 6 || e2-e1-1 > 7 || e2 >= len(in) || in[e2] != '.' {
		return hit{}, false
	}
	e3 := skipMax(in, e2+1, cB64URL, 41)
	if e3-e2-1 < 27 || e3-e2-1 > 40 {
		return hit{}, false
	}
	return hit{i, e3, famDiscordToken}, true
}

// webhookHosts are the hosts of webhook URLs, which the scanner finds at the
// '/' after them.
var webhookHosts = [...]string{"hooks.slack.com", "discord.com", "discordapp.com", "webhook.office.com", "hooks.zapier.com", teamsLegacyHost} // all end in .com

// matchWebhookAt matches a Slack, Discord, Microsoft Teams or Zapier webhook URL
// whose host ends at the '/' in[i].
func matchWebhookAt(in string, i, lo int) (hit, bool) {
	if i-lo < len(".com") || in[i-4:i] != ".com" {
		return hit{}, false // every host of webhookHosts ends so
	}
	for _, host := range webhookHosts {
		p := i - len(host)
		if p < lo || in[p:i] != host || p > lo && chars[in[p-1]]&cWord != 0 {
			continue
		}
		if host == teamsLegacyHost {
			return matchTeamsWebhook(in, p)
		}
		return matchToken(in, p, lo)
	}
	return hit{}, false
}

// matchDiscordWebhook matches discord[app].com/api/webhooks/<id>/<token>.
func matchDiscordWebhook(in string, i int) (hit, bool) {
	rest := in[i:]
	var p int
	switch {
	case strings.HasPrefix(rest, "discord.com/api/webhooks/"):
		p = len("discord.com/api/webhooks/")
	case strings.HasPrefix(rest, "discordapp.com/api/webhooks/"):
		p = len("discordapp.com/api/webhooks/")
	default:
		return hit{}, false
	}
	j := i + p
	e := skip(in, j, cDigit)
	if e-j < 5 || e >= len(in) || in[e] != '/' {
		return hit{}, false
	}
	h, ok := atLeast(in, e, 1, cB64URL, 20, famDiscordWebhook)
	h.start = i
	return h, ok
}

// matchTelegram matches a bot token <8-10 digits>:AA<33+>, or the bot id,
// ':' and 35 random-looking base64url bytes (the shape trufflehog's and
// Kingfisher's rules write; most tokens' secrets begin with an 'A', which
// gitleaks' rule asks for). The caller has found the digits in[i:d] and
// the colon at in[d].
func matchTelegram(in string, i, d int) (hit, bool) {
	if strings.HasPrefix(in[d+1:], "AA") {
		if h, ok := atLeast(in, d, 1, cB64URL, 35, famTelegramToken); ok {
			h.start = i
			return h, true
		}
	}
	e := skipMax(in, d+1, cB64URL, 36)
	if e-d-1 != 35 || is(in, e, cAlnum) || !randomBody(in[d+1:e]) || dummy(in[d+1:e]) {
		return hit{}, false
	}
	return hit{i, e, famTelegramToken}, true
}

// matchAuthScheme matches the credentials after a free-standing "Bearer" or
// "Basic" (any case). Without the Authorization header around them the
// credentials must look like one: a bearer token must have a digit (or be
// long and mixed-case), and basic credentials must decode to user:password.
// The hit covers only the credentials.
func matchAuthScheme(in string, i int) (hit, bool) {
	rest := in[i:]
	var f family
	var p int
	switch {
	case hasPrefixFold(rest, "bearer "):
		f, p = famBearerToken, len("bearer ")
	case hasPrefixFold(rest, "basic "):
		f, p = famBasicAuth, len("basic ")
	default:
		return hit{}, false
	}
	j := i + p
	for j < len(in) && in[j] == ' ' {
		j++
	}
	e := tok68End(in, j)
	cred := firstLine(in[j:e])
	if f == famBearerToken && !plausibleBearer(cred) || f == famBasicAuth && !isBasicCredential(cred) {
		return hit{}, false
	}
	return hit{j, e, f}, true
}

// matchAfterAuthScheme matches credentials around the word at in[ws] that
// follow a free-standing "bearer" or "basic" in any case. Capitalised
// schemes are found at their own upper-case letter; this finds the
// lower-case ones, which the scanner skips as boring, from the first word
// of the credentials it does not skip ("bearer abc.d3f": from "d3f").
func matchAfterAuthScheme(in string, ws, lo int) (hit, bool) {
	r := ws
	if in[ws-1] != ' ' {
		if chars[in[ws-1]]&cTok68 == 0 {
			return hit{}, false
		}
		for r > lo && ws-r < authRunBack && chars[in[r-1]]&cTok68 != 0 {
			r--
		}
	}
	j := r
	for j > lo && r-j < authBlanks && in[j-1] == ' ' {
		j--
	}
	if j == r || j-lo < len("basic") {
		return hit{}, false
	}
	if a, b := in[j-2]|0x20, in[j-1]|0x20; !(a == 'e' && b == 'r' || a == 'i' && b == 'c') {
		return hit{}, false // the end of neither "bearer" nor "basic", in any case
	}
	for _, scheme := range [...]string{"bearer", "basic"} {
		p := j - len(scheme)
		if p < lo || !hasPrefixFold(in[p:], scheme) || p > lo && chars[in[p-1]]&cWord != 0 {
			continue
		}
		if h, ok := matchAuthScheme(in, p); ok && h.start == r {
			return h, true
		}
	}
	return hit{}, false
}

// tok68End returns the end of the credentials starting at in[j]: token68
// bytes and '=' (padding, or a key=value the credentials happen to hold),
// without a full stop that ends a sentence, and wrapped across line
// breaks as wrapValue says.
func tok68End(in string, j int) int {
	e := skip(in, j, cTok68)
	for e > j && in[e-1] == '.' {
		e--
	}
	return wrapValue(in, j, e)
}

// plausibleBearer reports whether s, found after a free-standing "Bearer",
// looks like a token rather than a word: long enough, with a digit or both
// cases, and '=' only as padding at its end (token_type=bearer
// expires_in=3600 is a form, not a token).
func plausibleBearer(s string) bool {
	if len(s) < 8 || strings.Contains(strings.TrimRight(s, "="), "=") {
		return false
	}
	return hasDigit(s) || len(s) >= 16 && hasUpperAndLower(s)
}

// b64val maps a base64 digit (standard or URL alphabet) to its value, and
// every other byte to 0xff.
var b64val = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(std); i++ {
		t[std[i]] = byte(i)
	}
	t['-'], t['_'] = 62, 63
	return t
}()

// isBasicCredential reports whether s is the base64 of printable
// "user:password" text.
func isBasicCredential(s string) bool {
	s = strings.TrimRight(s, "=")
	if len(s) < 8 || len(s) > 1024 || len(s)%4 == 1 {
		return false
	}
	var acc uint32
	bits, colon := 0, false
	for i := 0; i < len(s); i++ {
		v := b64val[s[i]]
		if v == 0xff {
			return false
		}
		acc = acc<<6 | uint32(v)
		bits += 6
		if bits >= 8 {
			bits -= 8
			b := byte(acc >> bits)
			acc &= 1<<bits - 1
			if b < 0x20 || b > 0x7e {
				return false
			}
			colon = colon || b == ':'
		}
	}
	return colon
}

// matchSlackWebhook matches a Slack webhook URL from its host at in[i]:
// hooks.slack.com/services/T…/B…/…, /workflows/… or /triggers/…, and a
// path of base64 bytes.
func matchSlackWebhook(in string, i int) (hit, bool) {
	rest := in[i+len(slackHost):]
	for _, kind := range [...]string{"services/", "workflows/", "triggers/"} {
		if strings.HasPrefix(rest, kind) {
			return atLeast(in, i, len(slackHost)+len(kind), cB64, 20, famSlackWebhook)
		}
	}
	return hit{}, false
}

// zapierHooks begins the URL of a Zapier webhook trigger ("Catch Hook"),
// which runs the Zap for whoever posts to it.
const zapierHooks = "hooks.zapier.com/hooks/"

// matchZapierWebhook matches a Zapier webhook URL from its host at in[i]:
// hooks.zapier.com/hooks/catch/<account id>/<hook id>, and "catch/raw"
// and "standard" hooks alike: the account id is digits, the hook id 5 to
// 32 letters and digits, and a '/' may end it.
func matchZapierWebhook(in string, i int) (hit, bool) {
	j := i + len(zapierHooks)
	for _, kind := range [...]string{"catch/raw/", "catch/", "standard/"} {
		if !strings.HasPrefix(in[j:], kind) {
			continue
		}
		a := j + len(kind)
		d := skipMax(in, a, cDigit, 13)
		if d-a < 4 || d-a > 12 || d >= len(in) || in[d] != '/' {
			return hit{}, false
		}
		e := skipMax(in, d+1, cAlnum, 33)
		if e-d-1 < 5 || e-d-1 > 32 || is(in, e, cWord) {
			return hit{}, false
		}
		if e < len(in) && in[e] == '/' {
			e++
		}
		return hit{i, e, famZapierWebhook}, true
	}
	return hit{}, false
}

// matchSalesforce matches a Salesforce session id or OAuth access token
// at in[i]: the id of the organization ("00D" and 12 letters or digits,
// or 15 with the id's checksum), '!', and the session's secret, at least
// minSalesforceSecret letters, digits, '.' and '_' (96 as Salesforce
// issues them).
func matchSalesforce(in string, i int) (hit, bool) {
	j := skipMax(in, i, cAlnum, 19)
	if n := j - i; n != 15 && n != 18 || j+1 >= len(in) || in[j] != '!' || in[i:i+3] != "00D" {
		return hit{}, false
	}
	e := skipMax(in, j+1, cAlnum|cDotted|cUnderscore, maxToken+1)
	if e-j-1 < minSalesforceSecret || e-j-1 > maxToken || is(in, e, cWord) || !mixed(in[j+1:e]) || dummy(in[j+1:e]) {
		return hit{}, false
	}
	return hit{i, e, famSalesforceToken}, true
}

// minSalesforceSecret is the shortest secret after a Salesforce
// organization's id and '!' that matchSalesforce reads.
const minSalesforceSecret = 80

// matchTeamsWebhook matches a Microsoft Teams incoming webhook URL from
// its host at in[i]: webhook.office.com/webhookb2/<group>@<tenant>/
// IncomingWebhook/<32 bytes>/<uuid>…, to the end of its path; or one made
// before 2021, which old code and documents still hold:
// outlook.office.com/webhook/<group>@<tenant>/IncomingWebhook/….
func matchTeamsWebhook(in string, i int) (hit, bool) {
	var j int
	switch rest := in[i:]; {
	case strings.HasPrefix(rest, teamsHost+"webhookb2/"):
		j = i + len(teamsHost)
	case strings.HasPrefix(rest, teamsLegacyHost+"/webhook/"):
		j = i + len(teamsLegacyHost) + 1
	default:
		return hit{}, false
	}
	e := j
	for e < len(in) && e-j < 400 && (chars[in[e]]&(cAlnum|cDash) != 0 || in[e] == '@' || in[e] == '/') {
		e++
	}
	if !strings.Contains(in[j:e], "/IncomingWebhook/") {
		return hit{}, false
	}
	return hit{i, e, famTeamsWebhook}, true
}

// routingSuffix returns the end of a GitLab token whose body ends at
// in[e], past the routing suffix of a routable token: a '.' and nine
// lower-case letters and digits.
func routingSuffix(in string, e int) int {
	if e < len(in) && in[e] == '.' {
		if f := skipMax(in, e+1, cLowerDigit, 10); f-e-1 == 9 && !is(in, f, cWord) {
			return f
		}
	}
	return e
}

// matchOnePasswordKey matches a 1Password account Secret Key at in[i]:
// "A3-", six upper-case letters or digits, and groups of 11 (or 6 and 5)
// and 5, 5 and 5 more, joined by dashes.
func matchOnePasswordKey(in string, i int) (hit, bool) {
	j := i + 3
	var groups [6]int
	n := 0
	for n < len(groups) {
		e := skipMax(in, j, cUpperDigit, 12)
		groups[n] = e - j
		n++
		if e >= len(in) || in[e] != '-' || !is(in, e+1, cUpperDigit) {
			j = e
			break
		}
		j = e + 1
	}
	ok := groups[0] == 6 && (n == 5 && groups[1] == 11 || n == 6 && groups[1] == 6 && groups[2] == 5)
	for k := n - 3; ok && k < n; k++ {
		ok = groups[k] == 5
	}
	if !ok || is(in, j, cWord) || !hasDigit(in[i+3:j]) || dummy(strings.ReplaceAll(in[i+3:j], "-", "")) {
		return hit{}, false
	}
	return hit{i, j, famOnePasswordToken}, true
}

// matchAirtable matches an Airtable personal access token at in[i]:
// "pat", 14 letters and digits, '.' and 64 hexadecimal digits.
func matchAirtable(in string, i int) (hit, bool) {
	w := skipMax(in, i+3, cAlnum, 15)
	if w-i-3 != 14 || w >= len(in) || in[w] != '.' || !mixed(in[i+3:w]) && !randomBody(in[i+3:w]) {
		return hit{}, false
	}
	h, ok := exact(in, w, 1, cHex, 64, famAirtableToken)
	h.start = i
	return h, ok
}

// matchAuthress matches an Authress service client access key at in[i]:
// sc_, ext_, scauth_ or authress_, the client id, '.', the key id, ".acc_"
// or ".acc-" and the account id, '.', and the base64 signing key.
func matchAuthress(in string, i int) (hit, bool) {
	u := skipMax(in, i, cLowerDigit, 9)
	if u >= len(in) || in[u] != '_' {
		return hit{}, false
	}
	switch in[i:u] {
	case "sc", "ext", "scauth", "authress":
	default:
		return hit{}, false
	}
	e := skipMax(in, u+1, cAlnum, 31)
	if n := e - u - 1; n < 5 || n > 30 || e >= len(in) || in[e] != '.' {
		return hit{}, false
	}
	f := skipMax(in, e+1, cAlnum, 7)
	if n := f - e - 1; n < 4 || n > 6 || !strings.HasPrefix(in[f:], ".acc") || f+5 >= len(in) || in[f+4] != '_' && in[f+4] != '-' {
		return hit{}, false
	}
	g := skipMax(in, f+5, vAlnumDash, 33)
	if n := g - f - 5; n < 10 || n > 32 || g >= len(in) || in[g] != '.' {
		return hit{}, false
	}
	k := skipMax(in, g+1, cB64URL|vB64Pad, 121)
	if n := k - g - 1; n < 30 || n > 120 || dummy(in[g+1:k]) {
		return hit{}, false
	}
	return hit{i, k, famAuthressKey}, true
}

// matchUnprefixed matches the tokens that have no prefix of their own
// to start with at the word start in[i]: those with a fixed part further
// on (MaxMind license keys …_mmk, Dropbox long-lived tokens), those that
// begin with a number (Facebook app access tokens <app id>|<secret>,
// Twitter access tokens <user id>-<secret>), and those that the scanner
// meets from the word after their prefix (see matchBehind).
func matchUnprefixed(in string, i, lo int) (hit, bool) {
	rest := in[i:]
	switch {
	case len(rest) >= 40 && rest[6] == '_' && rest[36:40] == "_mmk":
		// MaxMind: 6 letters or digits, '_', 29 more and "_mmk".
		if skip(in[:i+40], i, cAlnum) == i+6 && skip(in[:i+36], i+7, cAlnum) == i+36 &&
			!is(in, i+40, cWord) && randomBody(rest[7:36]) {
			return hit{i, i + 40, famMaxMindKey}, true
		}
	case len(rest) >= 64 && rest[11:21] == "AAAAAAAAAA" && rest[10] != 'A' && rest[21] != 'A':
		// Dropbox long-lived: 11 letters and digits, ten 'A's (not more:
		// not a run of zero bytes in base64), 43 more.
		if skip(in[:i+11], i, cAlnum) == i+11 {
			if h, ok := exact(in, i+21, 0, vB64URLEq, 43, famDropboxToken); ok && randomBody(in[i+21:h.end]) {
				h.start = i
				return h, true
			}
		}
	}
	if isDigit(in[i]) {
		if h, ok := matchNumbered(in, i); ok {
			return h, true
		}
	}
	if i > lo && chars[in[i-1]]&cWord == 0 {
		if in[i-1] == ':' && in[i] == 'A' {
			// A Telegram bot token whose bot id is too short or too
			// long a number for the scanner to try (35378:A…).
			d := i - 1
			for d > lo && i-d <= 17 && isDigit(in[d-1]) {
				d--
			}
			if n := i - 1 - d; n >= 5 && n <= 16 && (d == lo || chars[in[d-1]]&cWord == 0) {
				return matchTelegram(in, d, i-1)
			}
			return hit{}, false
		}
		return matchBehind(in, i, lo)
	}
	return hit{}, false
}

// matchNumbered matches the tokens that begin with a number at in[i]: a
// Facebook app access token (a 15 or 16 digit app id, '|' and the app
// secret or client token), a Twitter access token (the 15 to 25 digit
// user id, '-' and 20 to 40 letters and digits), and a Telegram bot token
// with a bot id of 15 or 16 digits.
func matchNumbered(in string, i int) (hit, bool) {
	d := skipMax(in, i, cDigit, 26)
	n := d - i
	if n < 15 || d+1 >= len(in) {
		return hit{}, false
	}
	switch {
	case in[d] == ':' && n <= 16:
		// A Telegram bot token with a longer bot id than matchHexStart
		// tries.
		return matchTelegram(in, i, d)
	case (in[d] == '|' || in[d] == '%') && n <= 16:
		e := skipMax(in, d+1, cB64URL, 41)
		if m := e - d - 1; m >= 27 && m <= 40 && !is(in, e, cAlnum) && randomBody(in[d+1:e]) && !dummy(in[d+1:e]) {
			return hit{i, e, famFacebookToken}, true
		}
	case in[d] == '-' && n <= 25:
		e := skipMax(in, d+1, cAlnum, 41)
		if m := e - d - 1; m >= 20 && m <= 40 && !is(in, e, cWord) && mixed(in[d+1:e]) && !dummy(in[d+1:e]) {
			return hit{i, e, famTwitterToken}, true
		}
	}
	return hit{}, false
}

// dottedStarts are the first bytes of the table prefixes with a '.'
// inside (ya29., hvs., s., sl., dp.st., sk.eyJ, pk.eyJ, v1.0-, dt0c01.,
// t1.).
const dottedStarts = "dhpstvy"

// dottedStartSet holds the bytes of dottedStarts, for a look up.
var dottedStartSet = byteSet(dottedStarts)

// behindAt reports whether the prefix p, which ends with a byte that ends
// a word ('.', '~'), ends at in[b] and begins a word, not before lo.
func behindAt(in string, b, lo int, p string) bool {
	s := b + 1 - len(p)
	return s >= lo && in[s:b+1] == p && (s == lo || chars[in[s-1]]&(cWord|cDotted) == 0)
}

// maxBehind bounds how far back from a word matchBehind looks for the
// prefix of the token that the word is part of.
const maxBehind = 64

// matchBehind matches, from the word at in[i] (not a word start of the
// scanner's own, as it follows a byte that ends a word), a token whose
// prefix is further back and that the scanner did not meet at its start:
// an OpenShift token (sha256~…), a Harness key (pat.…, sat.…), a Mapbox
// token (pk.…) or an Azure AD client secret (…Q~…), whose body is a few
// words of base64url; or a vendor token of base64 whose first word, its
// prefix and a few bytes, ends at a '/' or '+' (glc_QmoQ/…, ABSKon+…).
// It looks back no further than maxBehind bytes, and not before lo (as
// for matchToken).
func matchBehind(in string, i, lo int) (hit, bool) {
	switch in[i-1] {
	case '/', '+', '=':
		return behindBase64(in, i, lo)
	case '~', '.', '-':
	default:
		return hit{}, false
	}
	eq, dotSeen := false, false
	// Back over the body, to each '~' and '.' before the word, no further
	// than lo nor 48 bytes (m; t is in up to the word, which the compiler
	// then checks no read of).
	t, m := in[:i], max(lo, i-48, 0)
	for b := i - 1; b > m; b-- {
		c := t[b]
		if chars[c]&cB64URL != 0 {
			// And the four before it at one look, while they are body
			// bytes too.
			for b-4 > m && chars[t[b-1]]&chars[t[b-2]]&chars[t[b-3]]&chars[t[b-4]]&cB64URL != 0 {
				b -= 4
			}
			continue
		}
		if c == '=' {
			eq = true
			continue
		}
		if c != '~' && c != '.' {
			break
		}
		if c == '.' && !dotSeen {
			dotSeen = true
			// A table prefix with a dot inside (hvs.-…, dp.st.-…), at
			// the nearest dot: the run of lower-case letters, digits and
			// dots before it, if a dotted prefix begins it.
			r, rm := b, max(lo, b-9, 0)
			for r > rm && chars[t[r-1]]&(cLowerDigit|cDotted) != 0 {
				r--
			}
			if r < b && (r == lo || chars[in[r-1]]&cWord == 0) && dottedStartSet[in[r]] {
				if h, ok := matchVendor(in, r, lo); ok && h.end > i {
					return h, true
				}
			}
		}
		// The prefixes that end with the separator, told apart by the
		// byte before it: …Q~ (an Azure secret, 5 bytes before it),
		// sha256~, pat., sat. and pk.
		var h hit
		ok := false
		switch s := b; in[b-1] {
		case 'Q':
			if c == '~' && b-5 >= lo {
				h, ok = matchAzureSecretAt(in, b-5, lo)
			}
		case '6':
			if c == '~' && behindAt(in, b, lo, "sha256~") {
				h, ok = matchOpenShift(in, s+1-len("sha256~"))
			}
		case 't':
			if c == '.' && (behindAt(in, b, lo, "pat.") || behindAt(in, b, lo, "sat.")) {
				h, ok = matchHarness(in, s-3)
			}
		case 'k':
			if c == '.' && behindAt(in, b, lo, "pk.") {
				h, ok = matchMapboxPublic(in, s-2)
			}
		}
		if ok && h.end > i {
			return h, true
		}
	}
	if eq {
		// A body with '=' inside (b_…=…-…): see behindBase64.
		return behindBase64(in, i, lo)
	}
	return hit{}, false
}

// behindBase64 matches, from the word at in[i], a vendor token of base64
// whose first word the scanner did not try: from the start of the run of
// base64 bytes the word is in, or, when the run begins with a key and
// '=', from the start after the first '=' of the run ('=' pads the end of
// base64, but some vendors' bodies have it inside). Two tries at most,
// each reading the body once (no more than maxToken bytes): a run of
// base64 is read a bounded number of times, from the few words within
// maxBehind bytes of its start.
func behindBase64(in string, i, lo int) (hit, bool) {
	// (m: the bound of lo and maxBehind; t: reads the compiler does not
	// check.)
	b, eq := i-1, -1
	t, m := in[:i], max(lo, i-maxBehind, 0)
	for b > m && chars[t[b-1]]&(cB64|cB64URL|cEquals) != 0 {
		// And four at one look, while they share a class of base64 (so
		// that none of them is '=').
		for b-4 >= m && chars[t[b-1]]&chars[t[b-2]]&chars[t[b-3]]&chars[t[b-4]]&(cB64|cB64URL) != 0 {
			b -= 4
		}
		if b <= m || chars[t[b-1]]&(cB64|cB64URL|cEquals) == 0 {
			break
		}
		if t[b-1] == '=' && b < i-1 {
			eq = b
		}
		b--
	}
	if b > lo && chars[in[b-1]]&(cB64|cB64URL|cEquals) != 0 {
		b = -1 // the run begins further back than we look
	}
	for _, s := range [...]int{b, eq} {
		if s < 0 || !is(in, s, cWord) {
			continue
		}
		if h, ok := matchVendor(in, s, lo); ok && h.end > i {
			return h, true
		}
	}
	return hit{}, false
}

// matchOpenShift matches an OpenShift OAuth access token at in[i]:
// "sha256~" and 43 base64url bytes.
func matchOpenShift(in string, i int) (hit, bool) {
	h, ok := exact(in, i, len("sha256~"), cB64URL, 43, famOpenShiftToken)
	return h, ok && !is(in, h.end, cB64URL)
}

// matchHarness matches a Harness API key or token at in[i]: "pat." or
// "sat.", the account id (22 base64url bytes), '.', 24 letters and digits,
// '.', 20 more.
func matchHarness(in string, i int) (hit, bool) {
	j := i + 4
	e := skipMax(in, j, cB64URL, 23)
	if e-j != 22 || e >= len(in) || in[e] != '.' {
		return hit{}, false
	}
	f := skipMax(in, e+1, cAlnum, 25)
	if f-e-1 != 24 || f >= len(in) || in[f] != '.' {
		return hit{}, false
	}
	h, ok := exact(in, f, 1, cAlnum, 20, famHarnessKey)
	h.start = i
	return h, ok && !dummy(in[e+1:f])
}

// matchMapboxPublic matches a Mapbox token whose prefix "pk." ends right
// before in[i]: a JWT-like pk.eyJ… (see the vendor table), or "pk.", 60
// letters and digits, '.' and 22 more.
func matchMapboxPublic(in string, i int) (hit, bool) {
	if h, ok := matchVendor(in, i, i); ok {
		return h, true
	}
	j := i + 3
	e := skipMax(in, j, cAlnum, 61)
	if e-j != 60 || e >= len(in) || in[e] != '.' || !randomBody(in[j:e]) {
		return hit{}, false
	}
	h, ok := exact(in, e, 1, cAlnum, 22, famMapboxToken)
	h.start = i
	return h, ok
}

// openAIWatermark is the base64 of "OpenAI", which every OpenAI secret key
// (sk-…, sk-proj-…, sk-svcacct-…, sk-admin-…) carries between two random
// halves of 20 bytes or more.
const openAIWatermark = "T3BlbkFJ"

// matchOpenAIWatermark matches the OpenAI key at in[i] ("sk-") by its
// watermark: the watermark, at least 20 body bytes before it and after it,
// and no letter or digit after the body. The watermark says what the
// value is, so its body is not judged as randomAtLeast judges the body of
// a bare "sk-" (a test key, sk-abcdefghij…T3BlbkFJ…, is one still).
func matchOpenAIWatermark(in string, i int) (hit, bool) {
	j := i + len("sk-")
	e := skipMax(in, j, cB64URL, maxOpenAIBody+1)
	if e-j > maxOpenAIBody || e-j < 2*minOpenAIHalf+len(openAIWatermark) || is(in, e, cAlnum) {
		return hit{}, false
	}
	k := strings.Index(in[j:e], openAIWatermark)
	if k < minOpenAIHalf || e-(j+k+len(openAIWatermark)) < minOpenAIHalf {
		return hit{}, false
	}
	return hit{i, e, famOpenAIKey}, true
}

// The body of an OpenAI key after "sk-": at most maxOpenAIBody bytes (a
// project key's is about 160), and at least minOpenAIHalf on either side
// of the watermark.
const (
	maxOpenAIBody = 256
	minOpenAIHalf = 20
)

// gluedPrefixes are the vendor prefixes by which a token is found also
// where the word before it runs into it (ourgithub_pat_…, tokenxoxb-…,
// x_glpat-…): prefixes of five bytes or more in the vendor's own spelling,
// which the ecosystem's scanners match with no boundary before them
// (gitleaks' default rules for these vendors; Trivy's for GitHub's
// fine-grained tokens), and whose bodies the matchers check strictly.
// Shorter prefixes keep their boundary, as Trivy's tests have them do
// (ghp_, gho_: Sogho_ICANVAS… is a word), and so do prefixes that words
// end with (sk_, rk_: task_test_…; key-) and those whose bodies the
// matchers take loosely (FLWSECK_TEST-).
var gluedPrefixes = [...]string{
	"github_pat_",
	"glpat-", "gldt-", "glft-", "glimt-", "glagent-", "gloas-", "glptt-", "glrt-", "glsoat-", "glffct-", "glcbt-",
	"xoxa-", "xoxb-", "xoxe-", "xoxo-", "xoxp-", "xoxr-", "xoxs-", "xapp-",
	"shpat_", "shpca_", "shppa_", "shpss_",
	"lin_api_", "CLOJARS_", "duffel_test_", "duffel_live_", "fio-u-", "ops_eyJ",
	pypiPrefix, testPyPIPrefix, "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t", "AGE-SECRET-KEY-1",
}

// gluedBefore maps the byte before a separator ('_' or '-') to the
// gluedPrefixes (bit k for gluedPrefixes[k]) whose first separator comes
// after that byte, and gluedSep gives where that separator is in each.
var gluedBefore, gluedSep = func() (t [256]uint64, sep [len(gluedPrefixes)]int) {
	if len(gluedPrefixes) > 64 {
		panic("scrub: more glued prefixes than bits in gluedBefore")
	}
	for k, p := range gluedPrefixes {
		s := strings.IndexAny(p, "_-")
		if s < 1 {
			panic("scrub: glued prefix without a separator: " + p)
		}
		t[p[s-1]] |= 1 << k
		sep[k] = s
	}
	return t, sep
}()

// minGluedWord is the shortest word matchGlued looks for a '_' in: one
// byte and the shortest token whose prefix has a '_' and whose body is
// word bytes (shpat_ and 32) are longer; a body that holds other bytes
// (ops_eyJ's base64) runs on past such a word.
const minGluedWord = 24

// matchGlued matches a token of gluedPrefixes that begins inside the word
// in[ws:e], after its first byte, and whose prefix's first separator is a
// '_' inside the word, or a JWT after such a '_'. (A prefix whose first
// separator is a '-' is read at that '-': see matchPunct.) The token is
// read as if the text began with it (the bytes before are a word's, not
// its).
func (s *Scrubber) matchGlued(in string, ws, e int) (hit, bool) {
	for p := ws + 1; p < e; {
		k := strings.IndexByte(in[p:e], '_')
		if k < 0 {
			break
		}
		u := p + k
		if h, ok := s.gluedAt(in, ws, u); ok {
			return h, true
		}
		// A JWT after a '_' (ghs_12345_eyJ…, as secretlint's tests
		// write a GitHub App installation token; name_eyJ…).
		if strings.HasPrefix(in[u+1:e], "eyJ") && s.on[famJWT] {
			if h, ok := matchJWT(in, u+1); ok {
				return h, true
			}
		}
		p = u + 1
	}
	return hit{}, false
}

// gluedAt matches a token of gluedPrefixes whose prefix's first separator
// is in[sep] and begins after in[ws].
func (s *Scrubber) gluedAt(in string, ws, sep int) (hit, bool) {
	for m := gluedBefore[in[sep-1]]; m != 0; m &= m - 1 {
		k := bits.TrailingZeros64(m)
		pre := gluedPrefixes[k]
		p := sep - gluedSep[k]
		if p <= ws || !strings.HasPrefix(in[p:], pre) {
			continue
		}
		if h, ok := matchToken(in, p, p); ok && h.start == p && s.on[h.fam] {
			return h, true
		}
	}
	return hit{}, false
}
