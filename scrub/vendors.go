package scrub

import "strings"

// This file holds the table of vendor tokens that a fixed prefix, a body
// alphabet and a body length describe completely. The hand-written
// matchers in tokens.go cover the shapes that need more (JWTs, Discord and
// Telegram tokens, Slack webhooks, free-standing Authorization schemes).

// A vendor describes one token shape: prefix, then a body of at least min
// and at most max bytes of set (max 0: no upper bound), not followed by a
// letter or digit.
type vendor struct {
	prefix   string
	set      uint32
	min, max int
	fam      family
	random   bool // the body must have a digit and letters of both cases (short, word-like prefixes)
}

// Extra byte classes for vendor bodies, beyond those in chars.go.
const (
	vB64URLDot = cB64URL | cDotted // [A-Za-z0-9_.-]
)

// vendors lists the table-driven token shapes. Earlier entries win when
// two prefixes match at the same place.
var vendors = [...]vendor{
	// Google OAuth 2.0 access and refresh tokens, OAuth client secrets.
	{"ya29.", cB64URL, 20, 0, famGoogleOAuthToken, false},
	{"1//0", cB64URL, 30, 0, famGoogleOAuthToken, false},
	{"GOCSPX-", cB64URL, 28, 28, famGoogleClientSecret, false},
	// GitLab: personal (glpat- is in tokens.go), deploy, runner, pipeline
	// trigger, SCIM, feed, incoming mail, agent, OAuth application, CI
	// build, feature flag tokens, and runner registration tokens.
	{"gldt-", vB64URLDot, 20, 0, famGitLabToken, false},
	{"glrtr-", vB64URLDot, 20, 0, famGitLabToken, false},
	{"glrt-", vB64URLDot, 20, 0, famGitLabToken, false},
	{"glptt-", vB64URLDot, 20, 0, famGitLabToken, false},
	{"glsoat-", vB64URLDot, 20, 0, famGitLabToken, false},
	{"glft-", vB64URLDot, 20, 0, famGitLabToken, false},
	{"glimt-", vB64URLDot, 20, 0, famGitLabToken, false},
	{"glagent-", vB64URLDot, 20, 0, famGitLabToken, false},
	{"gloas-", vB64URLDot, 20, 0, famGitLabToken, false},
	{"glcbt-", vB64URLDot, 20, 0, famGitLabToken, false},
	{"glffct-", vB64URLDot, 20, 0, famGitLabToken, false},
	{"GR1348941", cB64URL, 20, 0, famGitLabToken, false},
	// HashiCorp Vault service, batch and recovery tokens.
	{"hvs.", cB64URL, 24, 0, famVaultToken, false},
	{"hvb.", cB64URL, 24, 0, famVaultToken, false},
	{"hvr.", cB64URL, 24, 0, famVaultToken, false},
	// Grafana service account and Grafana Cloud tokens.
	{"glsa_", cWord, 40, 0, famGrafanaToken, false},
	{"glc_", cB64 | cEquals, 32, 0, famGrafanaToken, false},
	// Sentry organisation and user auth tokens.
	{"sntrys_", cB64URL | cEquals, 50, 0, famSentryToken, false},
	{"sntryu_", cHex, 64, 64, famSentryToken, false},
	{"lin_api_", cAlnum, 40, 40, famLinearKey, false},
	{"lin_oauth_", cHex, 64, 64, famLinearKey, false},
	{"ntn_", cAlnum, 40, 50, famNotionToken, false},
	{"secret_", cAlnum, 43, 43, famNotionToken, true},
	{"PMAK-", cHex | cDash, 59, 59, famPostmanKey, false},
	{"NRAK-", cUpperDigit, 27, 27, famNewRelicKey, false},
	{"NRJS-", cHex, 19, 19, famNewRelicKey, false},
	{"dp.pt.", vB64URLDot, 40, 0, famDopplerToken, false},
	{"dp.st.", vB64URLDot, 40, 0, famDopplerToken, false},
	{"dp.sa.", vB64URLDot, 40, 0, famDopplerToken, false},
	{"dp.ct.", vB64URLDot, 40, 0, famDopplerToken, false},
	{"dp.scim.", vB64URLDot, 40, 0, famDopplerToken, false},
	{"dp.audit.", vB64URLDot, 40, 0, famDopplerToken, false},
	// Atlassian API tokens and Bitbucket app passwords.
	{"ATATT3", cB64URL | cEquals, 150, 0, famAtlassianToken, false},
	{"ATBB", cAlnum, 32, 32, famAtlassianToken, true},
	{"sbp_", cHex, 40, 40, famSupabaseToken, false},
	{"sb_secret_", cB64URL, 30, 0, famSupabaseToken, false},
	{"AGE-SECRET-KEY-1", cUpperDigit, 58, 58, famAgeSecretKey, false},
	{"sq0atp-", cB64URL, 22, 22, famSquareToken, false},
	{"sq0csp-", cB64URL, 43, 43, famSquareToken, false},
	{"EAAA", cB64URL, 60, 60, famSquareToken, true},
	{"pul-", cHex, 40, 40, famPulumiToken, false},
	{"dckr_pat_", cB64URL, 24, 0, famDockerHubToken, false},
	{"dckr_oat_", cB64URL, 24, 0, famDockerHubToken, false},
	{"pscale_tkn_", cB64URL, 32, 0, famPlanetScaleToken, false},
	{"pscale_pw_", cB64URL, 32, 0, famPlanetScaleToken, false},
	{"pscale_oauth_", cB64URL, 32, 0, famPlanetScaleToken, false},
	{"r8_", cAlnum, 37, 37, famReplicateKey, true},
	{"pplx-", cAlnum, 40, 0, famPerplexityKey, false},
	{"lsv2_pt_", cHex | cUnderscore, 43, 43, famLangSmithKey, false},
	{"lsv2_sk_", cHex | cUnderscore, 43, 43, famLangSmithKey, false},
	{"pcsk_", cWord, 40, 0, famPineconeKey, false},
	{"tvly-", cB64URL, 30, 0, famTavilyKey, false},
	{"LTAI", cAlnum, 12, 30, famAlibabaKey, true},
	// AWS temporary session tokens: base64 that always begins so.
	{"IQoJb3JpZ2luX2Vj", cB64 | cEquals, 100, 0, famAWSSessionToken, false},
	{"FwoGZXIvYXdzE", cB64 | cEquals, 100, 0, famAWSSessionToken, false},
	{"EAA", cAlnum, 90, 0, famFacebookToken, true},
	{"fo1_", cB64URL, 40, 0, famFlyioToken, false},
	{"fm2_", cTok68 | cComma, 60, 0, famFlyioToken, false},
	{"rubygems_", cHex, 48, 48, famRubyGemsToken, false},
	{"sk.eyJ", vB64URLDot, 60, 0, famMapboxToken, false},
	{"HRKU-", cB64URL, 50, 0, famHerokuKey, false},
}

// vendorsByFirst indexes vendors by the first byte of their prefix.
var vendorsByFirst = func() (t [256][]uint8) {
	for k, v := range vendors {
		t[v.prefix[0]] = append(t[v.prefix[0]], uint8(k))
	}
	return t
}()

// matchVendor matches a table-driven vendor token at in[i]. A token does
// not begin right after a byte of its own body: in a long run of body
// bytes, such as gldt-gldt-gldt-…, only the first prefix is read on, so
// that every byte is read a bounded number of times. lo is as for
// matchToken.
func matchVendor(in string, i, lo int) (hit, bool) {
	for _, k := range vendorsByFirst[in[i]] {
		v := &vendors[k]
		if !strings.HasPrefix(in[i:], v.prefix) || chars[prev(in, i, lo)]&v.set != 0 {
			continue
		}
		j := i + len(v.prefix)
		limit := v.max
		if limit == 0 {
			limit = maxToken
		}
		e, n := wrapEnd(in, j, v.set, v.min, limit+1)
		// A body ends before a full stop that ends a sentence.
		for e > j && in[e-1] == '.' {
			e--
			n--
		}
		if n < v.min || n > limit || is(in, e, cAlnum) {
			continue
		}
		if v.random && !mixed(in[j:min(e, j+64)]) {
			continue
		}
		return hit{i, e, v.fam}, true
	}
	return hit{}, false
}

// maxToken bounds the body of a vendor token without a length of its
// own, so that a run of token bytes is read once.
const maxToken = 4096

// wrapEnd returns the end of a token body of set bytes that begins at
// in[j], and its length without line breaks. When the body is shorter
// than want and a line break ends it, the body goes on across the break if
// the next line begins with set bytes: a token wrapped by a terminal or a
// log line limit is one token. It looks at no more than limit body bytes.
func wrapEnd(in string, j int, set uint32, want, limit int) (end, n int) {
	e := skipMax(in, j, set, limit)
	n = e - j
	for wraps := 0; n < want && wraps < maxWraps; wraps++ {
		b := lineBreak(in, e)
		if b == 0 || !is(in, e+b, set) {
			break
		}
		f := skipMax(in, e+b, set, limit-n)
		n += f - (e + b)
		e = f
	}
	return e, n
}

// maxWraps is how many line breaks a wrapped value may cross.
const maxWraps = 3

// lineBreak returns the length of the line break at in[i] ("\n", "\r\n"
// or "\r"), or 0.
func lineBreak(in string, i int) int {
	switch {
	case i >= len(in):
		return 0
	case in[i] == '\n':
		return 1
	case in[i] == '\r':
		if i+1 < len(in) && in[i+1] == '\n' {
			return 2
		}
		return 1
	}
	return 0
}
