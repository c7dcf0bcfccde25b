package scrub

import "strings"

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
// may be wrapped across line breaks (see wrapEnd).
func exact(in string, i, p int, set uint32, n int, f family) (hit, bool) {
	j := i + p
	e, got := wrapEnd(in, j, set, n, n+1)
	if got != n || is(in, e, cAlnum) {
		return hit{}, false
	}
	return hit{i, e, f}, true
}

// atLeast is like exact but accepts a body of min or more bytes.
func atLeast(in string, i, p int, set uint32, min int, f family) (hit, bool) {
	j := i + p
	e, n := wrapEnd(in, j, set, min, len(in))
	if n < min || is(in, e, cAlnum) {
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

// matchToken matches a vendor token or an Authorization scheme at in[i],
// a word start. lo is the end of the previous finding.
func matchToken(in string, i, lo int) (hit, bool) {
	rest := in[i:]
	switch in[i] {
	case 'A':
		if len(rest) >= 4 && isAWSPrefix(rest[:4]) {
			if h, ok := exact(in, i, 4, cUpperDigit, 16, famAWSAccessKey); ok {
				return h, true
			}
		}
		if strings.HasPrefix(rest, "AIza") {
			return exact(in, i, 4, cB64URL, 35, famGoogleAPIKey)
		}
		if strings.HasPrefix(rest, "AC") {
			return exact(in, i, 2, cHex, 32, famTwilioKey)
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
		return matchAuthScheme(in, i)
	case 'M', 'N', 'O':
		if h, ok := matchDiscordToken(in, i); ok {
			return h, true
		}
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
		return matchJWT(in, i)
	case 'g':
		switch {
		case len(rest) > 4 && rest[0:2] == "gh" && strings.IndexByte("pousr", rest[2]) >= 0 && rest[3] == '_':
			return atLeast(in, i, 4, cAlnum, 30, famGitHubToken)
		case strings.HasPrefix(rest, "github_pat_"):
			return atLeast(in, i, 11, cWord, 40, famGitHubToken)
		case strings.HasPrefix(rest, "glpat-"):
			return atLeast(in, i, 6, cB64URL, 20, famGitLabToken)
		case strings.HasPrefix(rest, "gsk_"):
			return atLeast(in, i, 4, cAlnum, 20, famGroqKey)
		}
	case 'h':
		switch {
		case strings.HasPrefix(rest, "hf_"):
			return atLeast(in, i, 3, cAlnum, 30, famHuggingFaceToken)
		case strings.HasPrefix(rest, slackHook):
			return atLeast(in, i, len(slackHook), cB64, 20, famSlackWebhook)
		}
	case 'k':
		// Mailgun keys are 32 lower-case letters and digits; a body of hex
		// digits only is a hash in a cache key (key-<md5>).
		if strings.HasPrefix(rest, "key-") {
			if h, ok := exact(in, i, 4, cAlnum, 32, famMailgunKey); ok && !allHex(in[i+4:h.end]) {
				return h, true
			}
			return hit{}, false
		}
	case 'n':
		if strings.HasPrefix(rest, "npm_") {
			return atLeast(in, i, 4, cAlnum, 36, famNPMToken)
		}
	case 'p':
		if strings.HasPrefix(rest, pypiPrefix) {
			return atLeast(in, i, len(pypiPrefix), cB64URL, 20, famPyPIToken)
		}
	case 'r':
		if strings.HasPrefix(rest, "rk_live_") || strings.HasPrefix(rest, "rk_test_") {
			return atLeast(in, i, 8, cAlnum, 10, famStripeKey)
		}
	case 's':
		switch {
		case strings.HasPrefix(rest, "sk-ant-"):
			return atLeast(in, i, 7, cB64URL, 20, famAnthropicKey)
		case strings.HasPrefix(rest, "sk-or-v1-"):
			return atLeast(in, i, 9, cHex, 32, famOpenRouterKey)
		case strings.HasPrefix(rest, "sk-"):
			return randomAtLeast(in, i, 3, cB64URL, 20, famOpenAIKey)
		case strings.HasPrefix(rest, "sk_live_"), strings.HasPrefix(rest, "sk_test_"):
			return atLeast(in, i, 8, cAlnum, 10, famStripeKey)
		case len(rest) > 6 && rest[:3] == "shp" && rest[5] == '_' &&
			(rest[3:5] == "at" || rest[3:5] == "ss" || rest[3:5] == "ca" || rest[3:5] == "pa"):
			return exact(in, i, 6, cHex, 32, famShopifyToken)
		}
	case 'w':
		if strings.HasPrefix(rest, "whsec_") {
			return atLeast(in, i, 6, cAlnum, 20, famStripeKey)
		}
	case 'x':
		switch {
		case len(rest) > 5 && rest[:3] == "xox" && strings.IndexByte("abeprs", rest[3]) >= 0 && rest[4] == '-':
			return atLeast(in, i, 5, cB64URL, 10, famSlackToken)
		case strings.HasPrefix(rest, "xapp-"):
			return atLeast(in, i, 5, cB64URL, 10, famSlackToken)
		case strings.HasPrefix(rest, "xoxe.xox") && len(rest) > 10 && rest[9] == '-':
			return atLeast(in, i, 10, cB64URL, 10, famSlackToken)
		case strings.HasPrefix(rest, "xai-"):
			return randomAtLeast(in, i, 4, cAlnum, 20, famXAIKey)
		}
	}
	if len(vendorsByFirst[in[i]]) == 0 {
		return hit{}, false
	}
	return matchVendor(in, i, lo)
}

// allHex reports whether s holds only hexadecimal digits.
func allHex(s string) bool {
	return skip(s, 0, cHex) == len(s)
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
	const set = cB64URL | cDotted | cTilde
	if i+6 > len(in) || !isDigit(in[i+3]) || in[i+4] != 'Q' || in[i+5] != '~' {
		return hit{}, false
	}
	e := skipMax(in, i+6, set, 35)
	for e > i+6 && in[e-1] == '.' {
		e--
	}
	if n := e - i - 6; n < 31 || n > 34 || is(in, e, cAlnum) {
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

const (
	slackHook  = "hooks.slack.com/services/"
	pypiPrefix = "pypi-AgEIcHlwaS5vcmc" // "pypi-" and the base64 of the macaroon's "pypi.org"
)

func isAWSPrefix(p string) bool {
	for _, q := range awsPrefixes {
		if p == q {
			return true
		}
	}
	return false
}

// matchSendGrid matches SG.<16-32>.<20+> (the key id and the secret).
func matchSendGrid(in string, i int) (hit, bool) {
	j := i + 3
	e := skipMax(in, j, cB64URL, 33)
	if e-j < 16 || e-j > 32 || e >= len(in) || in[e] != '.' {
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
// The signature may be empty (alg "none").
func matchJWT(in string, i int) (hit, bool) {
	if !strings.HasPrefix(in[i:], "eyJ") {
		return hit{}, false
	}
	e1 := skip(in, i, cB64URL)
	if e1-i < 10 || e1 >= len(in) || in[e1] != '.' || !strings.HasPrefix(in[e1+1:], "eyJ") {
		return hit{}, false
	}
	e2 := skip(in, e1+1, cB64URL)
	if e2-e1-1 < 10 || e2 >= len(in) || in[e2] != '.' {
		return hit{}, false
	}
	return hit{i, skip(in, e2+1, cB64URL), famJWT}, true
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
var webhookHosts = [...]string{"hooks.slack.com", "discord.com", "discordapp.com"}

// matchWebhookAt matches a Slack or Discord webhook URL whose host ends at
// the '/' in[i].
func matchWebhookAt(in string, i, lo int) (hit, bool) {
	for _, host := range webhookHosts {
		p := i - len(host)
		if p < lo || in[p:i] != host || p > lo && chars[in[p-1]]&cWord != 0 {
			continue
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

// matchTelegram matches a bot token <8-10 digits>:AA<33+>. The caller has
// found the digits in[i:d] and the colon at in[d].
func matchTelegram(in string, i, d int) (hit, bool) {
	if !strings.HasPrefix(in[d+1:], "AA") {
		return hit{}, false
	}
	h, ok := atLeast(in, d, 1, cB64URL, 35, famTelegramToken)
	h.start = i
	return h, ok
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
	cred := in[j:e]
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
		for r > lo && ws-r < 64 && chars[in[r-1]]&cTok68 != 0 {
			r--
		}
	}
	j := r
	for j > lo && r-j <= 8 && in[j-1] == ' ' {
		j--
	}
	if j == r || j-lo < len("basic") {
		return hit{}, false
	}
	if c := in[j-1] | 0x20; c != 'r' && c != 'c' {
		return hit{}, false
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
