package scrub

import "strings"

// This file holds the table of vendor tokens that a fixed prefix, a body
// alphabet and a body length describe completely. The hand-written
// matchers in tokens.go cover the shapes that need more (JWTs, Discord and
// Telegram tokens, Slack webhooks, free-standing Authorization schemes).

// A vendor describes one token shape: prefix, then a body of at least min
// and at most max bytes of set (max 0: no upper bound), not followed by a
// letter or digit, and passing check.
type vendor struct {
	prefix   string
	set      uint32
	min, max int
	fam      family
	check    uint8
}

// Checks of a vendor token's body beyond its alphabet and length. Every
// body must also not be a placeholder (see dummy).
const (
	// vMixed: a digit and letters of both cases, for short, word-like
	// prefixes (secret_, r8_, EAA) whose real bodies are random base62.
	vMixed uint8 = 1 << iota
	// vRandom: random-looking as randomBody says, for short prefixes whose
	// bodies may be all lower case (b_, live_, YC).
	vRandom
	// vWordEnd: not followed by '_' either, for bodies of a fixed length
	// that an identifier may continue (hf_…_h_prio).
	vWordEnd
	// vNoDotWord: not followed by a dot and a letter or digit, for bodies
	// that a host name or a dotted path may continue (s.…).
	vNoDotWord
	// vDigit: a digit, for upper-case bodies that a constant's name may
	// look like (API-…).
	vDigit
	// vNotExt: not right after a word and a '.', where the prefix is a
	// file name's extension (favicon.ico-<hash>.png).
	vNotExt
)

// Extra byte classes for vendor bodies, beyond those in chars.go.
const (
	vB64URLDot = cB64URL | cDotted            // [A-Za-z0-9_.-]
	vB64Pad    = cB64 | cEquals               // [A-Za-z0-9+/=]: standard base64
	vB64URLEq  = cB64URL | cEquals            // [A-Za-z0-9_=-]
	vB64URLAll = cB64URL | cEquals | cDotted  // [A-Za-z0-9_.=-]
	vAlnumDash = cAlnum | cDash               // [A-Za-z0-9-]
	vSentry    = cB64 | cEquals | cUnderscore // base64 JSON, '_' and a base64 secret
)

// vendors lists the table-driven token shapes. Earlier entries win when
// two prefixes match at the same place, so a longer prefix comes before a
// shorter one it begins with.
var vendors = [...]vendor{
	// Google OAuth 2.0 access and refresh tokens, OAuth client secrets.
	{"ya29.", cB64URL, 20, 0, famGoogleOAuthToken, 0},
	{"1//0", cB64URL, 30, 0, famGoogleOAuthToken, 0},
	{"GOCSPX-", cB64URL, 28, 28, famGoogleClientSecret, 0},
	// GitLab: personal (glpat- is in tokens.go), deploy, runner, pipeline
	// trigger, SCIM, feed, incoming mail, agent, OAuth application, CI
	// build, feature flag tokens, and runner registration tokens.
	{"gldt-", vB64URLDot, 20, 0, famGitLabToken, 0},
	{"glrtr-", vB64URLDot, 20, 0, famGitLabToken, 0},
	{"glrt-", vB64URLDot, 20, 0, famGitLabToken, 0},
	{"glptt-", vB64URLDot, 20, 0, famGitLabToken, 0},
	{"glsoat-", vB64URLDot, 20, 0, famGitLabToken, 0},
	{"glft-", vB64URLDot, 20, 0, famGitLabToken, 0},
	{"glimt-", vB64URLDot, 20, 0, famGitLabToken, 0},
	{"glagent-", vB64URLDot, 20, 0, famGitLabToken, 0},
	{"gloas-", vB64URLDot, 20, 0, famGitLabToken, 0},
	{"glcbt-", vB64URLDot, 20, 0, famGitLabToken, 0},
	{"glffct-", vB64URLDot, 20, 0, famGitLabToken, 0},
	{"GR1348941", cB64URL, 20, 0, famGitLabToken, vRandom},
	// HashiCorp Vault service, batch and recovery tokens, and the legacy
	// service tokens: "s." and 24 base62 bytes.
	{"hvs.", cB64URL, 24, 0, famVaultToken, 0},
	{"hvb.", cB64URL, 24, 0, famVaultToken, 0},
	{"hvr.", cB64URL, 24, 0, famVaultToken, 0},
	{"s.", cAlnum, 24, 24, famVaultToken, vRandom | vDigit | vWordEnd | vNoDotWord},
	// Service tokens of namespaces (Vault Enterprise before 1.10): "s."
	// and the base64url of a protobuf message, which begins "CAES".
	{"s.CAES", cB64URL, 60, 0, famVaultToken, vWordEnd},
	// Grafana service account and Grafana Cloud tokens.
	{"glsa_", cWord, 40, 0, famGrafanaToken, 0},
	{"glc_", vB64Pad, 32, 0, famGrafanaToken, 0},
	{"eyJrIjoi", vB64Pad, 70, 0, famGrafanaToken, 0}, // base64 of {"k":"
	// Sentry user tokens (organisation tokens are in tokens.go).
	{"sntryu_", cHex, 64, 64, famSentryToken, 0},
	{"lin_api_", cAlnum, 40, 40, famLinearKey, 0},
	{"lin_oauth_", cHex, 64, 64, famLinearKey, 0},
	{"ntn_", cAlnum, 40, 50, famNotionToken, 0},
	{"secret_", cAlnum, 43, 43, famNotionToken, vMixed},
	{"PMAK-", cHex | cDash, 59, 59, famPostmanKey, 0},
	// New Relic user API keys, browser API tokens, Insights insert and
	// query keys, admin keys and REST API keys (license keys, which end
	// with NRAL, are in ident.go).
	{"NRAK-", cAlnum, 27, 27, famNewRelicKey, vDigit},
	{"NRJS-", cHex, 19, 19, famNewRelicKey, 0},
	{"NRII-", cB64URL, 32, 32, famNewRelicKey, 0},
	{"NRIQ-", cB64URL, 32, 32, famNewRelicKey, 0},
	{"NRAA-", cHex, 27, 27, famNewRelicKey, 0},
	{"NRRA-", cHex, 42, 42, famNewRelicKey, 0},
	{"dp.pt.", vB64URLDot, 40, 0, famDopplerToken, 0},
	{"dp.st.", vB64URLDot, 40, 0, famDopplerToken, 0},
	{"dp.sa.", vB64URLDot, 40, 0, famDopplerToken, 0},
	{"dp.ct.", vB64URLDot, 40, 0, famDopplerToken, 0},
	{"dp.scim.", vB64URLDot, 40, 0, famDopplerToken, 0},
	{"dp.audit.", vB64URLDot, 40, 0, famDopplerToken, 0},
	// Atlassian API tokens and Bitbucket app passwords.
	{"ATATT3", cB64URL | cEquals, 150, 0, famAtlassianToken, 0},
	{"ATBB", cAlnum, 32, 32, famAtlassianToken, vMixed},
	{"sbp_", cHex, 40, 40, famSupabaseToken, 0},
	{"sb_secret_", cB64URL, 30, 0, famSupabaseToken, 0},
	{"AGE-SECRET-KEY-1", cUpperDigit, 58, 58, famAgeSecretKey, 0},
	// Square access tokens and OAuth secrets.
	{"sq0atp-", cB64URL, 22, 60, famSquareToken, 0},
	{"sq0csp-", cB64URL, 43, 43, famSquareToken, 0},
	{"EAAA", cB64URL, 22, 60, famSquareToken, vMixed},
	{"pul-", cHex, 40, 40, famPulumiToken, 0},
	{"dckr_pat_", cB64URL, 24, 0, famDockerHubToken, 0},
	{"dckr_oat_", cB64URL, 24, 0, famDockerHubToken, 0},
	// PlanetScale API and OAuth tokens and database passwords.
	{"pscale_tkn_", vB64URLAll, 32, 0, famPlanetScaleToken, 0},
	{"pscale_pw_", vB64URLAll, 32, 0, famPlanetScaleToken, 0},
	{"pscale_oauth_", vB64URLAll, 32, 0, famPlanetScaleToken, 0},
	{"r8_", cAlnum, 37, 37, famReplicateKey, vMixed},
	{"pplx-", cAlnum, 40, 0, famPerplexityKey, 0},
	{"lsv2_pt_", cHex | cUnderscore, 43, 43, famLangSmithKey, 0},
	{"lsv2_sk_", cHex | cUnderscore, 43, 43, famLangSmithKey, 0},
	{"pcsk_", cWord, 40, 0, famPineconeKey, 0},
	{"tvly-", cB64URL, 30, 0, famTavilyKey, 0},
	// NVIDIA API keys (NIM, build.nvidia.com) and PostHog personal API
	// keys (phc_ project keys are public). Langfuse's sk-lf- keys are in
	// tokens.go, with the other sk- keys.
	{"nvapi-", cB64URL, 64, 64, famNvidiaKey, 0},
	{"phx_", cWord, 43, 48, famPostHogKey, vMixed},
	// Buildkite user access tokens, Flexport API keys, Fleetbase live
	// API keys and HubSpot private app tokens (a UUID after the
	// account's region), as trufflehog and Kingfisher describe them.
	{"bkua_", cLowerDigit, 40, 40, famBuildkiteToken, vWordEnd},
	{"shltm_", cB64URL, 40, 40, famFlexportKey, 0},
	{"flb_live_", cAlnum, 20, 20, famFleetbaseKey, vWordEnd},
	{"pat-na1-", vAlnumDash, 36, 36, famHubSpotToken, 0},
	{"pat-eu1-", vAlnumDash, 36, 36, famHubSpotToken, 0},
	{"LTAI", cAlnum, 12, 30, famAlibabaKey, vRandom},
	// AWS temporary session tokens: base64 that always begins so.
	{"IQoJb3JpZ2luX2Vj", vB64Pad, 100, 0, famAWSSessionToken, 0},
	{"FwoGZXIvYXdzE", vB64Pad, 100, 0, famAWSSessionToken, 0},
	{"EAA", cAlnum, 90, 0, famFacebookToken, vMixed},
	// Fly.io tokens: fo1_, and the macaroons fm1r_, fm1a_ and fm2_ (base64,
	// several of them joined by commas after "FlyV1 ").
	{"fo1_", cB64URL, 40, 0, famFlyioToken, 0},
	{"fm1r_", vB64Pad | cComma, 60, 0, famFlyioToken, 0},
	{"fm1a_", vB64Pad | cComma, 60, 0, famFlyioToken, 0},
	{"fm2_", cTok68 | cComma, 60, 0, famFlyioToken, 0},
	{"rubygems_", cHex, 48, 48, famRubyGemsToken, 0},
	// Mapbox secret and public tokens.
	{"sk.eyJ", vB64URLDot, 60, 0, famMapboxToken, 0},
	{"pk.eyJ", vB64URLDot, 60, 0, famMapboxToken, 0},
	{"HRKU-", cB64URL, 50, 0, famHerokuKey, 0},
	// A JWT encoded in base64 once more: "ZXlK", the base64 of "eyJ".
	{"ZXlK", vB64Pad | cB64URL, 40, 0, famJWT, vRandom},
	// Hugging Face user and (older) organisation tokens: 34 letters.
	{"hf_", cAlnum, 34, 34, famHuggingFaceToken, vRandom | vWordEnd},
	{"api_org_", cAlnum, 34, 34, famHuggingFaceToken, vRandom | vWordEnd},
	// Mailgun public validation keys (private keys are in tokens.go).
	{"pubkey-", cHex, 32, 32, famMailgunKey, 0},
	// Stripe-like test and live keys of other vendors: Lob, GoCardless.
	{"live_pub_", cHex, 31, 31, famLobKey, 0},
	{"test_pub_", cHex, 31, 31, famLobKey, 0},
	{"live_", cHex, 35, 35, famLobKey, 0},
	{"test_", cHex, 35, 35, famLobKey, 0},
	{"live_", vB64URLEq, 40, 40, famGoCardlessToken, vRandom},
	// 1Password service account tokens: "ops_" and base64 JSON.
	{"ops_eyJ", vB64Pad, 250, 0, famOnePasswordToken, 0},
	{"p8e-", cAlnum, 32, 32, famAdobeKey, 0},
	// JFrog Artifactory API keys and reference tokens.
	{"AKCp", cAlnum, 69, 69, famArtifactoryToken, 0},
	{"cmVmd", cAlnum, 59, 59, famArtifactoryToken, 0},
	// Amazon Bedrock API keys, long-lived (ABSK and base64) and short-lived
	// ("bedrock-api-key-" and the base64 of a presigned URL, which begins
	// with that of "bedrock.amazonaws.com").
	{"ABSK", vB64Pad, 109, 271, famBedrockKey, 0},
	{"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t", vB64Pad, 0, 0, famBedrockKey, 0},
	{"4b1d", cAlnum, 38, 38, famClickHouseKey, vRandom},
	{"CLOJARS_", cAlnum, 60, 60, famClojarsToken, 0},
	// Cloudflare Origin CA keys: v1.0-<24 hex>-<146 hex>.
	{"v1.0-", cHex | cDash, 171, 171, famCloudflareKey, 0},
	{"duffel_test_", vB64URLEq, 43, 43, famDuffelToken, 0},
	{"duffel_live_", vB64URLEq, 43, 43, famDuffelToken, 0},
	// Dynatrace: dt0c01.<24>.<64>.
	{"dt0c01.", cAlnum | cDotted, 89, 89, famDynatraceToken, 0},
	// EasyPost production and test API keys.
	{"EZAK", cAlnum, 54, 54, famEasyPostKey, 0},
	{"EZTK", cAlnum, 54, 54, famEasyPostKey, 0},
	// Flutterwave secret, public and encryption keys, test and live.
	{"FLWSECK_TEST-", vAlnumDash, 12, 40, famFlutterwaveKey, 0},
	{"FLWSECK_TEST", cHex, 12, 12, famFlutterwaveKey, 0},
	{"FLWPUBK_TEST-", vAlnumDash, 32, 40, famFlutterwaveKey, 0},
	{"FLWSECK-", vAlnumDash, 12, 40, famFlutterwaveKey, 0},
	{"FLWPUBK-", vAlnumDash, 32, 40, famFlutterwaveKey, 0},
	{"fio-u-", vB64URLEq, 64, 64, famFrameioToken, 0},
	{"ico-", cAlnum, 32, 32, famInfracostKey, vNotExt},
	// 42 intranet (intra42) application secrets.
	{"s-s4t2ud-", cHex, 64, 64, famIntra42Secret, 0},
	{"s-s4t2af-", cHex, 64, 64, famIntra42Secret, 0},
	{"API-", cUpperDigit, 26, 26, famOctopusKey, vDigit},
	{"pnu_", cAlnum, 36, 36, famPrefectKey, 0},
	{"rdme_", cLowerDigit, 70, 70, famReadmeKey, 0},
	{"tk-us-", cB64URL, 48, 48, famScalingoToken, 0},
	{"xkeysib-", vAlnumDash, 81, 81, famBrevoKey, 0},
	{"sm_pat_", cAlnum, 16, 16, famSettleMintToken, vRandom},
	{"sm_aat_", cAlnum, 16, 16, famSettleMintToken, vRandom},
	{"sm_sat_", cAlnum, 16, 16, famSettleMintToken, vRandom},
	{"shippo_live_", cHex, 40, 40, famShippoToken, 0},
	{"shippo_test_", cHex, 40, 40, famShippoToken, 0},
	// Sourcegraph: sgp_<40 hex>, sgp_<16 hex>_<40 hex>, sgp_local_<40 hex>.
	{"sgp_local_", cHex, 40, 40, famSourcegraphToken, 0},
	{"sgp_", cHex | cUnderscore, 40, 57, famSourcegraphToken, 0},
	// Sourcegraph license keys.
	{"slk_", cHex, 64, 64, famSourcegraphToken, vWordEnd},
	// Yandex Cloud API keys, static access keys and IAM tokens.
	{"AQVN", cB64URL, 35, 38, famYandexKey, vRandom},
	{"YC", cB64URL, 38, 38, famYandexKey, vRandom | vWordEnd},
	{"t1.", vB64URLAll, 88, 0, famYandexKey, vRandom},
	// SonarQube user, project analysis and global analysis tokens.
	{"squ_", vB64URLEq, 40, 40, famSonarToken, 0},
	// Figma personal access tokens: figd_ and 40 or more base64url bytes.
	{"figd_", cB64URL, 40, 0, famFigmaToken, vRandom},
	// Cloudflare API tokens and keys of the 2025 format: cfut_ (user
	// token), cfat_ (account token), cfk_ (API key), 40 letters and digits
	// and an 8-digit hexadecimal checksum.
	{"cfut_", cAlnum, 48, 48, famCloudflareKey, 0},
	{"cfat_", cAlnum, 48, 48, famCloudflareKey, 0},
	{"cfk_", cAlnum, 48, 48, famCloudflareKey, 0},
	// Vercel tokens: vcp_ (personal), vci_ (integration), vca_ (app
	// access), vcr_ (refresh), vck_ (API key). The prefix begins
	// identifiers too (vcr_cassette), so the body must be random base62.
	{"vcp_", cAlnum, 20, 60, famVercelToken, vMixed},
	{"vci_", cAlnum, 20, 60, famVercelToken, vMixed},
	{"vca_", cAlnum, 20, 60, famVercelToken, vMixed},
	{"vcr_", cAlnum, 20, 60, famVercelToken, vMixed},
	{"vck_", cAlnum, 20, 60, famVercelToken, vMixed},
	// Tailscale auth, API, OAuth client and webhook keys:
	// tskey-<kind>-<id>-<secret>.
	{"tskey-", cWord | cDash, 30, 130, famTailscaleKey, vDigit},
	// Private Packagist tokens: organisation read-only and update tokens,
	// user tokens; 68 hexadecimal digits.
	{"packagist_ort_", cHex, 68, 68, famPackagistToken, 0},
	{"packagist_out_", cHex, 68, 68, famPackagistToken, 0},
	{"packagist_urt_", cHex, 68, 68, famPackagistToken, 0},
	{"packagist_uut_", cHex, 68, 68, famPackagistToken, 0},
	// OpenAI Realtime API client secrets (ephemeral keys).
	{"ek_", cHex, 32, 32, famOpenAIKey, vWordEnd},
	{"sqp_", vB64URLEq, 40, 40, famSonarToken, 0},
	{"sqa_", vB64URLEq, 40, 40, famSonarToken, 0},
	{"tfp_", vB64URLAll, 59, 59, famTypeformToken, 0},
	// Defined Networking: dnkey-<26>-<52>.
	{"dnkey-", vB64URLEq, 79, 79, famDefinedNetworkingToken, 0},
	// Plaid access tokens: access-<environment>-<uuid>.
	{"access-sandbox-", cHex | cDash, 36, 36, famPlaidToken, 0},
	{"access-development-", cHex | cDash, 36, 36, famPlaidToken, 0},
	{"access-production-", cHex | cDash, 36, 36, famPlaidToken, 0},
	// Dropbox short-lived access tokens (long-lived ones are in tokens.go).
	{"sl.", vB64URLEq, 100, 0, famDropboxToken, 0},
	{"b_", vB64URLEq, 44, 44, famBeamerToken, vRandom | vWordEnd},
	// Twitter (X) app-only bearer tokens: 22 'A's, then base64.
	{"AAAAAAAAAAAAAAAAAAAAAA", vB64Pad | cDash, 60, 0, famTwitterToken, 0},
}

// vendorsByPair indexes vendors by the first two bytes of their prefix:
// vendorsByPair.at(a, b) lists, in table order, the vendors whose prefix may
// begin with a, b (those of other pairs that share its bucket too).
var vendorsByPair = func() (t vendorIndex) {
	var buckets [len(t.span)][]uint8
	for k, v := range vendors {
		h := pairBucket(v.prefix[0], v.prefix[1])
		buckets[h] = append(buckets[h], uint8(k))
	}
	for h, b := range buckets {
		t.span[h] = [2]uint8{uint8(len(t.order)), uint8(len(b))}
		t.order = append(t.order, b...)
	}
	return t
}()

// A vendorIndex lists the vendors by the bucket of their prefix's first
// two bytes: span[h] is the start and the length of bucket h in order.
type vendorIndex struct {
	span  [512][2]uint8
	order []uint8
}

// at returns the vendors whose prefix may begin with a, b.
func (t *vendorIndex) at(a, b byte) []uint8 {
	s := t.span[pairBucket(a, b)]
	return t.order[s[0]:][:s[1]]
}

// pairBucket is the bucket of vendorIndex of a prefix that begins with a, b.
func pairBucket(a, b byte) int { return (int(a)*37 + int(b)) & 511 }

// (The index's spans are bytes.)
var _ = [1]int{}[len(vendors)/256]

// A pairSet holds pairs of bytes, such as the first two bytes of a set of
// prefixes: for each first byte, a bit per second byte. One look at it
// rules out a word that no prefix of the set begins.
type pairSet [256][4]uint64

// add puts the pair a, b in the set.
func (t *pairSet) add(a, b byte) { t[a][b>>6] |= 1 << (b & 63) }

// at reports whether the two bytes at in[i] are a pair of the set.
func (t *pairSet) at(in string, i int) bool {
	return i+1 < len(in) && t[in[i]][in[i+1]>>6]&(1<<(in[i+1]&63)) != 0
}

// vendorPairs holds the first two bytes of the prefixes in the table: one
// look rules out a word no prefix begins (OrderService, Version) before
// the table is read.
var vendorPairs = func() (t pairSet) {
	for _, v := range vendors {
		t.add(v.prefix[0], v.prefix[1])
	}
	return t
}()

// mayBeVendor reports whether a prefix in the table may begin at in[i].
func mayBeVendor(in string, i int) bool { return vendorPairs.at(in, i) }

// Every lower-case letter begins a word worth a closer look (cStart), not
// only prefixLetters: the first letters of the prefixes in the table
// (ops_…, ico-…, v1.0-…, maxmind's keys), and the first letter of a token
// body, which the scanner meets as a word of its own after a prefix that
// ends with '~', '.' or '/' (sha256~…, pat.…, …Q~…; see matchBehind).
func init() {
	for c := 'a'; c <= 'z'; c++ {
		chars[c] |= cStart
	}
}

// matchVendor matches a table-driven vendor token at in[i]. A token does
// not begin right after a byte of its own body (but '=', which ends
// base64 and begins values): in a long run of body bytes, such as
// gldt-gldt-gldt-…, only the first prefix is read on, so that every byte
// is read a bounded number of times. lo is as for matchToken.
func matchVendor(in string, i, lo int) (hit, bool) {
	if !mayBeVendor(in, i) {
		return hit{}, false
	}
	for _, k := range vendorsByPair.at(in[i], in[i+1]) {
		v := &vendors[k]
		if len(in)-i < len(v.prefix) || in[i] != v.prefix[0] || in[i+1] != v.prefix[1] {
			continue // (a prefix of another pair in the same bucket)
		}
		if p := prev(in, i, lo); !strings.HasPrefix(in[i:], v.prefix) || p != '=' && chars[p]&v.set != 0 {
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
		e = gluedTail(in, j, e, v.set, limit)
		if v.check != 0 && !v.passes(in, i, j, e, lo) || dummy(in[j:min(e, j+64)]) {
			continue
		}
		return hit{i, e, v.fam}, true
	}
	return hit{}, false
}

// gluedTail returns the end of a base64url body in[j:e] that a '+' or a
// '=' inside it stopped (EAAA…iZxW+CqH-yA4gTf=aDl0U): the token is the
// whole run of base64 bytes, if the run ends there (at a byte of neither
// base64 alphabet) within the vendor's longest body and what follows the
// '+' or '=' is random too (a digit and letters of both cases); else e. A
// body of another alphabet, or one that '+' or '=' ends (a sum, padding
// before a blank, a key glued after it: …+algolia_TOKEN ?= "…"), is left
// as found.
func gluedTail(in string, j, e int, set uint32, limit int) int {
	if set&cB64URL == 0 || e+1 >= len(in) || in[e] != '+' && in[e] != '=' || !is(in, e+1, cAlnum) {
		return e
	}
	t := skipMax(in, e, cB64|cB64URL|cEquals, limit-(e-j)+1)
	if t-j > limit || is(in, t, cB64|cB64URL|cEquals) || !mixed(in[e+1:t]) {
		return e
	}
	return t
}

// passes reports whether the token in[i:e], whose body is in[j:e], passes
// v's checks.
func (v *vendor) passes(in string, i, j, e, lo int) bool {
	body := in[j:min(e, j+64)]
	switch {
	case v.check&vNotExt != 0 && i-1 > lo && in[i-1] == '.' && is(in, i-2, cWord):
		return false
	case v.check&vMixed != 0 && !mixed(body),
		v.check&vRandom != 0 && !randomBody(body),
		v.check&vWordEnd != 0 && is(in, e, cWord),
		v.check&vNoDotWord != 0 && e < len(in) && in[e] == '.' && is(in, e+1, cAlnum),
		v.check&vDigit != 0 && !hasDigit(body):
		return false
	}
	return true
}

// dummy reports whether a token body (its first 64 bytes) is a
// placeholder rather than a secret: one byte for half of it or more
// (xxxx…, XXXX…, 0000…, XXXX_PUT_YOUR_TOKEN_HERE_XXXX), counting runs for
// three quarters of it or more (0123456789abcdef…), or, in 20 bytes or
// more, no more than one distinct byte in five (5555555dAAAAA7777777…). A
// generated secret has none of these: its most frequent byte and its
// ascending steps are a few percent of it, and even hexadecimal digits
// are a dozen distinct ones in 20.
func dummy(s string) bool {
	s = s[:min(len(s), 64)]
	if len(s) < 8 {
		return false
	}
	var counts [256]uint8
	top, steps, distinct := uint8(0), 0, 0
	for k := 0; k < len(s); k++ {
		c := s[k]
		if counts[c] == 0 {
			distinct++
		}
		counts[c]++
		top = max(top, counts[c])
		if k > 0 && c == s[k-1]+1 {
			steps++
		}
	}
	return int(top)*2 >= len(s) || steps*4 >= len(s)*3 || len(s) >= 20 && distinct*5 <= len(s)
}

// randomBody reports whether s (its first 64 bytes) looks generated rather
// than written, as the body of a token with a short prefix must: not
// CamelCase (see camelCase), and a digit
// and letters of both cases; letters of both cases that change case at
// least once in five bytes and whose case changes and pairs of capitals
// side by side, the pairs counted twice, are at least two in five bytes
// (random letters have one change every other byte and one pair every
// fourth, a score of one a byte; CamelCase words change case twice a word
// and have few capitals side by side, a third of a score or less; words
// in capitals change case seldom); or digits, at least two and one byte in
// sixteen, among
// letters (a random lower-case or upper-case body, in which one byte in
// three or four is a digit).
func randomBody(s string) bool {
	s = s[:min(len(s), 64)]
	var d, u, l, flips, uu int
	for k := 0; k < len(s); k++ {
		c := s[k]
		switch {
		case isDigit(c):
			d++
		case isUpper(c):
			u++
			if k > 0 && isLower(s[k-1]) {
				flips++
			}
			if k > 0 && isUpper(s[k-1]) {
				uu++
			}
		case isLower(c):
			l++
			if k > 0 && isUpper(s[k-1]) {
				flips++
			}
		}
	}
	n := len(s)
	if camelCase(s) {
		return false
	}
	return d > 0 && u > 0 && l > 0 ||
		u > 0 && l > 0 && flips*5 >= n && (flips+2*uu)*5 >= 2*n ||
		d >= 2 && d*16 >= n && u+l > 0
}

// camelCase reports whether s is written like an identifier of
// capitalised words: four capitals or more, each followed by a lower-case
// letter (ReadUint16LengthPrefixed). In a random body of letters and
// digits a capital is followed by a lower-case letter four times in ten,
// so each of four or more of them (a random body of 16 bytes has six or
// seven) about once in a hundred bodies or less.
func camelCase(s string) bool {
	caps := 0
	for k := 0; k < len(s); k++ {
		if isUpper(s[k]) {
			if k+1 == len(s) || !isLower(s[k+1]) {
				return false
			}
			caps++
		}
	}
	return caps >= 4
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
