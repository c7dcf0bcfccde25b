package scrub

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// The recall corpus: fake secrets and identifiers, generated from fixed
// seeds (never real ones), planted in realistic messages: error texts, log
// lines, header and form dumps, JSON bodies, URLs. recall_test.go measures
// how many the default Scrubber removes, per family and per kind, and keeps
// the table in RECALL.md current.

// A shape says how a planted value is written.
type shape uint8

const (
	documented shape = iota // a family and form the package documented before issue #13
	common                  // a common shape added by issue #13 (new families, more prefixes)
	evasion                 // a documented value written to dodge matching: escapes, other key styles, dumps
	hard                    // harder evasions and shapes, most of them known misses (see doc.go)
)

func (k shape) String() string {
	return [...]string{"documented", "common", "evasion", "hard"}[k]
}

// A plant is one value planted in one message.
type plant struct {
	family string // the family whose placeholder should replace it
	shape  shape
	what   string // a few words on the form, for failure messages and the table
	msg    string // the message, value included
	value  string // the value as it is written in msg
	raw    string // the value decoded (for evasions); "" when it is value
}

// gen makes deterministic fake values.
type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{rand.New(rand.NewPCG(seed, 0x5c7b))} }

const (
	gDigits = "0123456789"
	gHex    = "0123456789abcdef"
	gHexUp  = "0123456789ABCDEF"
	gLower  = "abcdefghijklmnopqrstuvwxyz"
	gUpper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	gAlnum  = gUpper + gLower + gDigits
	gB64URL = gAlnum + "-_"
	gB64    = gAlnum + "+/"
	gUpDig  = gUpper + gDigits
	gLowDig = gLower + gDigits
)

// str returns n random bytes of alphabet that include, when n allows, a
// digit, an upper-case and a lower-case letter where alphabet has them: a
// generated key always looks generated.
func (g *gen) str(alphabet string, n int) string {
	for {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[g.r.IntN(len(alphabet))]
		}
		s := string(b)
		if n < 8 || classesOf(s) == classesOf(alphabet) {
			return s
		}
	}
}

func classesOf(s string) (k int) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
			k |= 1
		case isUpper(c):
			k |= 2
		case isLower(c):
			k |= 4
		}
	}
	return k
}

func (g *gen) digits(n int) string { return g.str(gDigits, n) }

// luhnCard returns a Luhn-valid card number of n digits after prefix.
func (g *gen) luhnCard(prefix string, n int) string {
	s := prefix + g.digits(n-len(prefix)-1)
	for d := byte('0'); d <= '9'; d++ {
		if luhn([]byte(s + string(d))) {
			return s + string(d)
		}
	}
	panic("unreachable")
}

// iban returns a valid compact IBAN for country with a BBAN of n
// upper-case letters and digits, mostly digits.
func (g *gen) iban(country string, n int) string {
	bban := g.digits(n)
	m := 0
	for _, c := range []byte(bban + country + "00") {
		m = mod97(m, c)
	}
	return fmt.Sprintf("%s%02d%s", country, 98-m, bban)
}

// group writes s in groups of four separated by sep.
func group(s, sep string) string {
	var b strings.Builder
	for i := 0; i < len(s); i += 4 {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(s[i:min(i+4, len(s))])
	}
	return b.String()
}

// ssn returns a valid-looking US social security number.
func (g *gen) ssn() string {
	area := 1 + g.r.IntN(898)
	if area == 666 {
		area = 667
	}
	return fmt.Sprintf("%03d-%02d-%04d", area, 1+g.r.IntN(99), 1+g.r.IntN(9999))
}

func (g *gen) mac(sep string) string {
	parts := make([]string, 6)
	for i := range parts {
		parts[i] = g.str(gHex, 2)
	}
	parts[0] = "3c" // a unicast, globally administered prefix
	return strings.Join(parts, sep)
}

// jwt returns a JWT with a readable header and payload and a random
// signature.
func (g *gen) jwt() string {
	return "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI" + g.str(gAlnum, 24) + "IiwiaWF0IjoxNzAwMDAwMDAwfQ." + g.str(gB64URL, 43)
}

func b64(s string) string {
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var b strings.Builder
	for i := 0; i < len(s); i += 3 {
		var n uint32
		k := min(3, len(s)-i)
		for j := 0; j < 3; j++ {
			n <<= 8
			if j < k {
				n |= uint32(s[i+j])
			}
		}
		for j := 0; j < 4; j++ {
			if j <= k {
				b.WriteByte(std[n>>(18-6*j)&63])
			} else {
				b.WriteByte('=')
			}
		}
	}
	return b.String()
}

// Encodings used by the evasions.

// jsonU writes every byte of s at the positions in at as a \u00XX escape.
func jsonU(s string, at ...int) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if containsInt(at, i) {
			fmt.Fprintf(&b, `\u%04x`, s[i])
		} else {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// pct percent-encodes the bytes of s that are in set.
func pct(s, set string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) >= 0 {
			fmt.Fprintf(&b, "%%%02X", s[i])
		} else {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// pctAll percent-encodes every byte of s.
func pctAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

// insert puts mark into s before each of the byte positions in at.
func insert(s, mark string, at ...int) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if containsInt(at, i) {
			b.WriteString(mark)
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Zero-width and other invisible format characters.
const (
	zwsp   = "\u200b"
	zwnj   = "\u200c"
	zwj    = "\u200d"
	wj     = "\u2060"
	bom    = "\ufeff"
	shy    = "\u00ad"
	lrmark = "\u200e"
)

// corpus builds the recall corpus. Every value comes from a generator
// seeded by its position, so the corpus is the same on every run.
func corpus() []plant {
	var ps []plant
	seed := uint64(0)
	next := func() *gen { seed++; return newGen(seed) }
	add := func(family string, k shape, what, format, value string) {
		ps = append(ps, plant{family: family, shape: k, what: what, msg: strings.ReplaceAll(format, "{}", value), value: value})
	}
	// addEnc plants value written as enc.
	addEnc := func(family string, k shape, what, format, enc, raw string) {
		ps = append(ps, plant{family: family, shape: k, what: what, msg: strings.ReplaceAll(format, "{}", enc), value: enc, raw: raw})
	}

	// ---- Documented families, in their documented forms. ----
	{
		g := next()
		add("aws_access_key", documented, "error text", "AccessDenied: access key {} is not authorized to perform s3:GetObject", "AKIA"+g.str(gUpDig, 16))
		add("aws_access_key", documented, "env dump", "AWS_ACCESS_KEY_ID={}\nAWS_REGION=eu-west-1", "AKIA"+g.str(gUpDig, 16))
		add("aws_access_key", documented, "JSON", `{"Credentials":{"AccessKeyId":"{}","Expiration":"2025-07-01T12:00:00Z"}}`, "ASIA"+g.str(gUpDig, 16))
		add("aws_secret_key", documented, "ini", "[default]\naws_secret_access_key = {}\n", g.str(gB64, 40))
		add("aws_secret_key", documented, "JSON", `{"SecretAccessKey": "{}", "SessionToken": null}`, g.str(gB64, 40))
	}
	{
		g := next()
		add("github_token", documented, "git error", "remote: Invalid username or token {} for https://github.com/acme/api.git", "ghp_"+g.str(gAlnum, 36))
		add("github_token", documented, "env", "GITHUB_TOKEN={} make release", "github_pat_"+g.str(gAlnum, 22)+"_"+g.str(gAlnum, 59))
		add("github_token", documented, "clone URL", "git clone https://x-access-token:{}@github.com/acme/api.git failed", "ghs_"+g.str(gAlnum, 36))
		add("gitlab_token", documented, "header", `curl --header "PRIVATE-TOKEN: {}" https://gitlab.example.com/api/v4/projects`, "glpat-"+g.str(gB64URL, 20))
		add("gitlab_token", documented, "log", "gitlab: 401 Unauthorized using {}", "glpat-"+g.str(gB64URL, 20))
	}
	{
		g := next()
		add("slack_token", documented, "error", "slack: invalid_auth for token {} (team T024BE7LD)", "xoxb-"+g.digits(12)+"-"+g.digits(13)+"-"+g.str(gAlnum, 24))
		add("slack_token", documented, "env", "SLACK_APP_TOKEN={}", "xapp-1-A"+g.str(gUpDig, 10)+"-"+g.digits(13)+"-"+g.str(gHex, 64))
		add("slack_webhook", documented, "URL", "POST https://{} returned 404 no_service", "hooks.slack.com/services/T"+g.str(gUpDig, 8)+"/B"+g.str(gUpDig, 10)+"/"+g.str(gAlnum, 24))
		add("stripe_key", documented, "error", "Stripe: Invalid API Key provided: {}", "sk_live_"+g.str(gAlnum, 24))
		add("stripe_key", documented, "env", "STRIPE_WEBHOOK_SECRET={}", "whsec_"+g.str(gAlnum, 32))
		add("stripe_key", documented, "restricted", "using restricted key {} for reports", "rk_live_"+g.str(gAlnum, 24))
	}
	{
		g := next()
		add("openai_key", documented, "error", "Error code: 401 - Incorrect API key provided: {}. You can find your API key at https://platform.openai.com/account/api-keys.", "sk-proj-"+g.str(gB64URL, 48))
		add("openai_key", documented, "env", "OPENAI_API_KEY={}", "sk-"+g.str(gAlnum, 48))
		add("anthropic_key", documented, "header", "x-api-key: {}\nanthropic-version: 2023-06-01", "sk-ant-api03-"+g.str(gB64URL, 93)+"AA")
		add("anthropic_key", documented, "log", "anthropic client created with {}", "sk-ant-api03-"+g.str(gB64URL, 93)+"AA")
		add("openrouter_key", documented, "env", "OPENROUTER_API_KEY={}", "sk-or-v1-"+g.str(gHex, 64))
		add("groq_key", documented, "error", "groq: 401 invalid api key {}", "gsk_"+g.str(gAlnum, 52))
		add("xai_key", documented, "env", `{"XAI_API_KEY": "{}"}`, "xai-"+g.str(gAlnum, 80))
	}
	{
		g := next()
		add("google_api_key", documented, "URL", "GET https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={} 403", "AIza"+g.str(gB64URL, 35))
		add("google_api_key", documented, "prose", "the browser key {} is restricted to *.example.com", "AIza"+g.str(gB64URL, 35))
		add("jwt", documented, "field", "refresh failed: id_token={} audience mismatch", g.jwt())
		add("jwt", documented, "log", "session {} expired at 2025-06-01T10:00:00Z", g.jwt())
		add("bearer_token", documented, "header", "Authorization: Bearer {}", g.str(gB64URL, 40))
		add("bearer_token", documented, "curl", "curl -H 'Authorization: Bearer {}' https://api.example.com/v1/me", g.str(gAlnum, 32))
		add("bearer_token", documented, "JSON", `{"headers":{"Authorization":"Bearer {}"}}`, g.jwt())
		add("basic_auth", documented, "header", "Authorization: Basic {}", b64("svc-backup:"+g.str(gAlnum, 14)))
	}
	{
		g := next()
		add("private_key", documented, "PEM", "loaded key:\n{}\nfrom vault", "-----BEGIN RSA PRIVATE KEY-----\n"+g.str(gB64, 64)+"\n"+g.str(gB64, 64)+"\n-----END RSA PRIVATE KEY-----")
		add("private_key", documented, "JSON", `{"type":"service_account","private_key":"{}","client_email":"ci"}`, `-----BEGIN PRIVATE KEY-----\n`+g.str(gB64, 64)+`\n-----END PRIVATE KEY-----\n`)
		add("url_password", documented, "URL", "fetch https://deploy:{}@git.example.com/acme/api.git: 403", g.str(gAlnum, 16))
		add("db_credentials", documented, "DSN", "dial postgres://app:{}@db.internal:5432/app?sslmode=disable: connection refused", g.str(gAlnum, 18))
		add("db_credentials", documented, "redis", "redis: cannot connect to redis://default:{}@cache.internal:6379/0", g.str(gAlnum, 20))
		add("query_secret", documented, "OAuth callback", "GET /oauth/callback?code={}&state=af0ifjsldkj 302", "4/0A"+g.str(gB64URL, 40))
		add("query_secret", documented, "signed URL", "GET https://acme.s3.amazonaws.com/report.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature={}&X-Amz-Expires=300 403", g.str(gHex, 64))
		add("query_secret", documented, "SAS", "upload https://acme.blob.core.windows.net/c/b.bin?sv=2022-11-02&sr=b&sig={} failed", pct(g.str(gB64, 43)+"=", "+/="))
	}
	{
		g := next()
		add("password", documented, "key=value", "mysql: access denied for user app (password={})", g.str(gAlnum, 12))
		add("password", documented, "YAML", "database:\n  user: app\n  password: '{}'\n", g.str(gAlnum, 14))
		add("password", documented, "JSON", `{"username":"ops","password":"{}"}`, g.str(gAlnum, 10)+"!")
		add("password", documented, "env", "PGPASSWORD={} psql -h db.internal", g.str(gAlnum, 12))
		add("query_secret", documented, "form", "POST /oauth/token grant_type=client_credentials&client_id=ci&client_secret={}", g.str(gB64URL, 32))
		add("secret", documented, "header", "X-Api-Key: {}", g.str(gHex, 32))
		add("secret", documented, "JSON", `{"api_key": "{}", "region": "eu"}`, g.str(gAlnum, 24))
		add("secret", documented, "struct", "config: {Name:billing APIToken:{} Timeout:30s}", g.str(gAlnum, 20))
	}
	{
		g := next()
		add("huggingface_token", documented, "env", "HF_TOKEN={} huggingface-cli upload", "hf_"+g.str(gAlnum, 34))
		add("npm_token", documented, "npmrc", "//registry.npmjs.org/:_authToken={}", "npm_"+g.str(gAlnum, 36))
		add("pypi_token", documented, "twine", "twine upload -u __token__ -p {} dist/*", "pypi-AgEIcHlwaS5vcmc"+g.str(gB64URL, 60))
		add("sendgrid_key", documented, "error", "sendgrid: 403 for key {}", "SG."+g.str(gB64URL, 22)+"."+g.str(gB64URL, 43))
		add("twilio_key", documented, "log", "twilio: API key {} suspended", "SK"+g.str(gHex, 32))
		add("digitalocean_token", documented, "env", "DIGITALOCEAN_TOKEN={}", "dop_v1_"+g.str(gHex, 64))
		add("shopify_token", documented, "header", "X-Shopify-Access-Token: {}", "shpat_"+g.str(gHex, 32))
		add("mailgun_key", documented, "basic", "mailgun: 401 for api key {}", "key-"+g.str(gLowDig, 32))
		add("azure_key", documented, "connection string", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={};EndpointSuffix=core.windows.net", g.str(gB64, 86)+"==")
		add("discord_token", documented, "log", "discord: login with {} failed", "MT"+g.str(gAlnum, 22)+"."+g.str(gB64URL, 6)+"."+g.str(gB64URL, 38))
		add("discord_webhook", documented, "URL", "POST https://{} 429", "discord.com/api/webhooks/"+g.digits(18)+"/"+g.str(gB64URL, 68))
		add("telegram_token", documented, "URL", "GET https://api.telegram.org/bot{}/getUpdates 401", g.digits(10)+":AA"+g.str(gB64URL, 33))
		add("databricks_token", documented, "env", "DATABRICKS_TOKEN={}", "dapi"+g.str(gHex, 32))
		add("cookie", documented, "header", "Cookie: session={}; theme=dark", g.str(gB64URL, 32))
		add("cookie", documented, "set-cookie", "Set-Cookie: sid={}; Path=/; HttpOnly; Secure", g.str(gHex, 32))
	}
	{
		g := next()
		add("email", documented, "error", "smtp: 550 mailbox unavailable for {}", "jane.doe"+g.digits(2)+"@example.com")
		add("email", documented, "JSON", `{"user":{"email":"{}","plan":"pro"}}`, "ops+alerts@corp.example.org")
		add("card", documented, "grouped", "payment declined for card {} (insufficient funds)", group(g.luhnCard("4", 16), " "))
		add("card", documented, "compact", "charge ch_1 card={} exp=12/27", g.luhnCard("5", 16))
		add("iban", documented, "grouped", "payout to IBAN {} failed", group(g.iban("DE", 18), " "))
		add("iban", documented, "compact", "iban={};", g.iban("GB", 18))
		add("phone", documented, "intl", "sms to {} failed: unreachable", "+44 20 7946 "+g.digits(4))
		add("phone", documented, "compact", `{"phone":"{}"}`, "+4915"+g.digits(9))
		add("ip", documented, "IPv4", "dial tcp {}:443: i/o timeout", "10."+strconv.Itoa(1+g.r.IntN(250))+"."+strconv.Itoa(1+g.r.IntN(250))+".7")
		add("ip", documented, "IPv6", "connect to [{}]:8080 refused", "2001:db8:"+g.str(gHex, 4)+"::"+g.str(gHex, 3)+"1")
		add("uuid", documented, "path", "GET /v1/runs/{}/steps 404", g.str(gHex, 8)+"-"+g.str(gHex, 4)+"-4"+g.str(gHex, 3)+"-a"+g.str(gHex, 3)+"-"+g.str(gHex, 12))
		add("home_user", documented, "path", "open /home/{}/project/.env: permission denied", "jdoe"+g.digits(2))
		add("home_user", documented, "windows", `stat C:\Users\{}\AppData\Local\app.db: not found`, "mtorres")
	}

	// ---- Common shapes, added by issue #13. ----
	{
		g := next()
		add("ssn", common, "dashed", "applicant {} failed identity verification", g.ssn())
		add("ssn", common, "JSON", `{"name":"J. Doe","ssn":"{}","dob":"1980-01-01"}`, g.ssn())
		add("ssn", common, "key", "SSN: {}", strings.ReplaceAll(g.ssn(), "-", ""))
		add("mac_address", common, "colon", "dhcp: lease for {} expired", g.mac(":"))
		add("mac_address", common, "dash", "device {} joined the network", strings.ToUpper(g.mac("-")))
		add("mac_address", common, "JSON", `{"hwaddr":"{}","vendor":"acme"}`, g.mac(":"))
		add("google_oauth_token", common, "header", "Authorization: Bearer {}", "ya29."+g.str(gB64URL, 150))
		add("google_oauth_token", common, "JSON", `{"access_token":"{}","expires_in":3599}`, "ya29.a0"+g.str(gB64URL, 120))
		add("google_oauth_token", common, "refresh", "refresh token {} revoked", "1//0"+g.str(gB64URL, 99))
		add("google_client_secret", common, "JSON", `{"installed":{"client_id":"1234.apps.googleusercontent.com","client_secret":"{}"}}`, "GOCSPX-"+g.str(gB64URL, 28))
		add("google_client_secret", common, "log", "oauth2: using client secret {} for web app", "GOCSPX-"+g.str(gB64URL, 28))
	}
	{
		g := next()
		for _, p := range []string{"gldt-", "glrt-", "glptt-", "glsoat-", "glft-", "glimt-", "glagent-", "gloas-"} {
			add("gitlab_token", common, p, "gitlab: token {} rejected", p+g.str(gB64URL, 24))
		}
		add("gitlab_token", common, "glcbt-", "CI_JOB_TOKEN={}", "glcbt-"+g.str(gHex, 2)+"_"+g.str(gB64URL, 20))
		add("gitlab_token", common, "glrtr-", "runner registered with {}", "glrtr-"+g.str(gB64URL, 20))
		add("gitlab_token", common, "GR1348941", "gitlab-runner register --registration-token {}", "GR1348941"+g.str(gB64URL, 20))
		add("iban", common, "lower compact", "iban={} rejected", strings.ToLower(g.iban("FR", 23)))
		add("iban", common, "lower grouped", "refund to {} queued", group(strings.ToLower(g.iban("NL", 14)), " "))
		add("iban", common, "dashed", "payout IBAN {} failed", group(g.iban("ES", 20), "-"))
	}
	{
		g := next()
		add("vault_token", common, "header", "X-Vault-Token: {}", "hvs."+g.str(gB64URL, 90))
		add("vault_token", common, "log", "vault: permission denied for {}", "hvb."+g.str(gB64URL, 120))
		add("grafana_token", common, "service account", "grafana: using {}", "glsa_"+g.str(gAlnum, 32)+"_"+g.str(gHex, 8))
		add("sentry_token", common, "auth", "SENTRY_AUTH_TOKEN={}", "sntryu_"+g.str(gHex, 64))
		add("linear_key", common, "env", "linear: 401 for {}", "lin_api_"+g.str(gAlnum, 40))
		add("notion_token", common, "env", "NOTION_TOKEN={}", "ntn_"+g.digits(11)+g.str(gAlnum, 35))
		add("postman_key", common, "header", "postman: {} invalid", "PMAK-"+g.str(gHex, 24)+"-"+g.str(gHex, 34))
		add("newrelic_key", common, "log", "newrelic: user key {} expired", "NRAK-"+g.str(gUpDig, 27))
		add("doppler_token", common, "env", "DOPPLER_TOKEN={}", "dp.st.prd."+g.str(gAlnum, 43))
		add("atlassian_token", common, "log", "jira: 401 for api token {}", "ATATT3xFfGF0"+g.str(gB64URL, 170)+"="+g.str(gHexUp, 8))
		add("supabase_token", common, "cli", "supabase login --token {}", "sbp_"+g.str(gHex, 40))
		add("age_secret_key", common, "key file", "# created: 2025-01-01\n{}\n", "AGE-SECRET-KEY-1"+g.str("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58))
		add("square_token", common, "log", "square: access token {} revoked", "sq0atp-"+g.str(gB64URL, 22))
		add("pulumi_token", common, "env", "PULUMI_ACCESS_TOKEN={}", "pul-"+g.str(gHex, 40))
		add("dockerhub_token", common, "login", "docker login -u acme -p {}", "dckr_pat_"+g.str(gB64URL, 27))
		add("planetscale_token", common, "log", "pscale: token {} invalid", "pscale_tkn_"+g.str(gB64URL, 43))
		add("replicate_key", common, "env", "REPLICATE_API_TOKEN={}", "r8_"+g.str(gAlnum, 37))
		add("perplexity_key", common, "log", "perplexity: 401 for {}", "pplx-"+g.str(gAlnum, 48))
		add("langsmith_key", common, "env", "LANGSMITH_API_KEY={}", "lsv2_pt_"+g.str(gHex, 32)+"_"+g.str(gHex, 10))
		add("pinecone_key", common, "log", "pinecone: unauthorized, key {}", "pcsk_"+g.str(gAlnum, 5)+"_"+g.str(gAlnum, 63))
		add("tavily_key", common, "log", "tavily: invalid api key {}", "tvly-"+g.str(gAlnum, 32))
		add("mailchimp_key", common, "log", "mailchimp: API key {} disabled", g.str(gHex, 32)+"-us"+strconv.Itoa(1+g.r.IntN(20)))
		add("alibaba_key", common, "log", "aliyun: AccessKeyId {} not found", "LTAI"+g.str(gAlnum, 20))
		add("azure_client_secret", common, "log", "AADSTS7000215: Invalid client secret provided {}", g.str(gAlnum, 3)+"8Q~"+g.str(gAlnum+"_.~-", 34))
		add("aws_session_token", common, "log", "sts: expired session token {}", "IQoJb3JpZ2luX2VjE"+g.str(gB64, 300))
		add("facebook_token", common, "log", "graph api: 190 invalid token {}", "EAAB"+g.str(gAlnum, 160))
		add("flyio_token", common, "env", "FLY_API_TOKEN={}", "fo1_"+g.str(gB64URL, 43))
		add("terraform_token", common, "log", "terraform: token {} unauthorized", g.str(gAlnum, 14)+".atlasv1."+g.str(gB64URL, 67))
		add("rubygems_token", common, "log", "gem push: key {} revoked", "rubygems_"+g.str(gHex, 48))
		add("mapbox_token", common, "log", "mapbox: secret token {} scope error", "sk.eyJ1Ijoi"+g.str(gB64URL, 40)+"."+g.str(gB64URL, 22))
		add("heroku_key", common, "log", "heroku: {} invalid", "HRKU-AA"+g.str(gB64URL, 58))
	}

	// ---- Evasions of documented shapes. ----
	{
		g := next()
		tok := "ghp_" + g.str(gAlnum, 36)
		addEnc("github_token", evasion, `\u escape`, `{"error":"bad credentials for {}"}`, jsonU(tok, 3), tok)
		tok = "sk_live_" + g.str(gAlnum, 24)
		addEnc("stripe_key", evasion, `\u escapes`, `{"message":"key {} invalid"}`, jsonU(tok, 0, 1, 2, 7), tok)
		pw := g.str(gAlnum, 12)
		addEnc("password", evasion, `\u in key`, `{"pass\u0077ord":"{}"}`, pw, pw)
		em := "maria.garcia@example.com"
		addEnc("email", evasion, `\u0040`, `{"to":"{}"}`, jsonU(em, 12), em)
		pw = g.str(gAlnum, 14)
		addEnc("password", evasion, `escaped JSON`, `log: "{\"user\":\"ops\",\"password\":\"{}\"}"`, pw, pw)
		bt := g.str(gB64URL, 40)
		addEnc("bearer_token", evasion, `escaped JSON header`, `{"req":"{\"headers\":{\"Authorization\":\"Bearer {}\"}}"}`, bt, bt)
		sec := g.str(gAlnum, 24)
		addEnc("secret", evasion, `double-escaped JSON`, `{"body":"{\\\"api_key\\\":\\\"{}\\\"}"}`, sec, sec)
		pw = "Qm9" + g.str(gAlnum, 10)
		add("url_password", evasion, `\/ in URL`, `{"endpoint":"https:\/\/svc:{}@api.example.com\/v1"}`, pw)
	}
	{
		g := next()
		pw := g.str(gAlnum, 12)
		add("query_secret", evasion, "percent key=value", "GET /debug?data=user%3Dops%26password%3D{} 200", pw)
		tok := "ghp_" + g.str(gAlnum, 36)
		addEnc("github_token", evasion, "percent _", "GET /hook?t={} 200", pct(tok, "_"), tok)
		em := "li.wei@example.com"
		addEnc("email", evasion, "percent @", "GET /unsubscribe?email={} 200", pct(em, "@"), em)
		pw = g.str(gAlnum, 11)
		add("url_password", evasion, "percent URL", "redirect to https%3A%2F%2Fadmin%3A{}%40intranet.example.com%2F blocked", pw)
		pw = g.str(gAlnum, 10) + " " + g.str(gAlnum, 6)
		addEnc("query_secret", evasion, "percent space in value", "login?user=ops&password={}&next=/", pct(pw, " "), pw)
		sec := g.str(gAlnum, 20)
		addEnc("secret", evasion, "percent JSON", "GET /cb?state="+pctAll(`{"client_secret":"`)+"{}"+pctAll(`"}`), pctAll(sec), sec)
		key := "AKIA" + g.str(gUpDig, 16)
		addEnc("aws_access_key", evasion, "all percent", "GET /x?id={}", pctAll(key), key)
	}
	{
		g := next()
		tok := "ghp_" + g.str(gAlnum, 36)
		addEnc("github_token", evasion, "ZWSP", "token {} leaked in chat", insert(tok, zwsp, 10, 20), tok)
		key := "AKIA" + g.str(gUpDig, 16)
		addEnc("aws_access_key", evasion, "BOM", "key {} found", insert(key, bom, 4), key)
		pw := g.str(gAlnum, 12)
		addEnc("password", evasion, "soft hyphen", "password={}", insert(pw, shy, 3, 7), pw)
		em := "ops.team@example.com"
		addEnc("email", evasion, "ZWJ", "mail {} bounced", insert(em, zwj, 3), em)
		sk := "sk-proj-" + g.str(gB64URL, 48)
		addEnc("openai_key", evasion, "word joiner", "OPENAI_API_KEY={}", insert(sk, wj, 2, 30), sk)
		card := g.luhnCard("4", 16)
		addEnc("card", evasion, "ZWNJ in card", "card {} declined", insert(card, zwnj, 4, 8, 12), card)
		jwt := g.jwt()
		addEnc("jwt", evasion, "LRM in JWT", "session {} rejected", insert(jwt, lrmark, 40), jwt)
	}
	{
		g := next()
		v := g.str(gAlnum, 12) + "\n" + g.str(gAlnum, 12)
		addEnc("password", evasion, "newline in quoted value", "password: \"{}\"", v, v)
		tok := "ghp_" + g.str(gAlnum, 36)
		addEnc("github_token", evasion, "token split by newline", "GITHUB_TOKEN="+"{}\nnext step", tok[:20]+"\n"+tok[20:], tok)
		v = g.str(gAlnum, 16) + "\n" + g.str(gAlnum, 16)
		addEnc("secret", evasion, "value split by newline", "api_key={}\n", v, v)
		bt := g.str(gB64URL, 30) + "\r\n" + g.str(gB64URL, 30)
		addEnc("bearer_token", evasion, "header value wrapped", "Authorization: Bearer {}\r\n", bt, bt)
	}
	{
		g := next()
		for _, f := range []string{
			"apiKey: '{}'", "API-KEY: {}", "x-api-key: {}", "X-Api-Key={}", "API_KEY={}", "clientSecret={}",
			"accessToken: {}", `'api_key' => '{}'`, `:api_key => "{}"`, `"apiKey" : "{}"`, "x-auth-token: {}",
			"--api-key {}", "AUTH_TOKEN := {}", "secretKey: {}", "ApiKey={}", "x-goog-api-key: {}",
		} {
			add("secret", evasion, "key style "+strings.TrimSuffix(strings.Fields(f)[0], "{}"), f, g.str(gAlnum, 24))
		}
		add("password", evasion, "key style DB_PASS", "DB_PASS={}", g.str(gAlnum, 14))
		add("password", evasion, "key style dbPassword", "dbPassword: {}", g.str(gAlnum, 14))
		add("password", evasion, "key style =>", `{:password => "{}"}`, g.str(gAlnum, 14))
	}
	{
		g := next()
		add("bearer_token", evasion, "http.Header %v", "request headers: map[Accept:[*/*] Authorization:[Bearer {}] User-Agent:[go]]", g.str(gB64URL, 40))
		add("cookie", evasion, "http.Header %v cookie", "request headers: map[Cookie:[{}] Accept:[*/*]]", "session="+g.str(gB64URL, 32))
		add("secret", evasion, "url.Values %v", "form: map[client_id:[ci] client_secret:[{}] grant_type:[client_credentials]]", g.str(gB64URL, 32))
		add("password", evasion, "url.Values %v", "form: map[password:[{}] username:[ops]]", g.str(gAlnum, 14))
		add("secret", evasion, "http.Header %#v", `headers: http.Header{"Accept":[]string{"*/*"}, "X-Api-Key":[]string{"{}"}}`, g.str(gAlnum, 32))
		add("bearer_token", evasion, "http.Header %#v", `http.Header{"Authorization":[]string{"Bearer {}"}}`, g.str(gB64URL, 40))
		add("password", evasion, "url.Values %#v", `url.Values{"password":[]string{"{}"}, "user":[]string{"ops"}}`, g.str(gAlnum, 14))
		a, b := g.str(gAlnum, 24), g.str(gAlnum, 24)
		arr := `{"api_keys":["` + a + `","` + b + `"]}`
		ps = append(ps, plant{family: "secret", shape: evasion, what: "JSON array 1st", msg: arr, value: a},
			plant{family: "secret", shape: evasion, what: "JSON array 2nd", msg: arr, value: b})
		c := g.str(gAlnum, 20)
		add("secret", evasion, "JSON array spaced", `{"access_tokens": [ "{}" ]}`, c)
		add("secret", evasion, "Go %v slice", "secrets=[{} other]", g.str(gAlnum, 20))
	}
	{
		g := next()
		for _, c := range []string{"#", "@", "/", "?", ":"} {
			pw := g.str(gAlnum, 6) + c + g.str(gAlnum, 6)
			add("db_credentials", evasion, "URL password with "+c, "dial postgres://app:{}@db.internal:5432/app failed", pw)
		}
		pw := g.str(gAlnum, 5) + "#" + g.str(gAlnum, 5) + "/" + g.str(gAlnum, 3)
		add("url_password", evasion, "URL password with # and /", "GET https://admin:{}@intranet.example.com/status 401", pw)
	}
	{
		g := next()
		add("secret", evasion, "prose token is", "the token is {} and it expires tomorrow", g.str(gLowDig, 24))
		add("secret", evasion, "prose API key is", "Your API key is {}.", g.str(gAlnum, 32))
		add("password", evasion, "prose password", "login with password {} failed", g.str(gAlnum, 10)+"-"+g.str(gLowDig, 4))
		add("password", evasion, "prose password:", "password: hunter2-{}", g.str(gLowDig, 8))
		add("secret", evasion, "prose secret was", "the client secret was {} before rotation", g.str(gB64URL, 30))
		add("secret", evasion, "prose quoted", `using token "{}" for the upload`, g.str(gAlnum, 28))
	}
	{
		g := next()
		add("secret", evasion, "key style API KEY:", "API KEY: {}", g.str(gAlnum, 24))
		add("password", evasion, "YAML block scalar", "database:\n  password: |\n    {}\n  user: app\n", g.str(gAlnum, 16))
		add("password", evasion, ".netrc", "machine api.example.com login ops password {}", g.str(gAlnum, 10))
		add("secret", evasion, "Markdown code span", "set the token: `{}` in CI", g.str(gAlnum, 24))
		add("password", evasion, "XML element", "<settings><server><id>repo</id><username>ops</username><password>{}</password></server></settings>", g.str(gAlnum, 14))
		add("password", evasion, "HTML-escaped XML", "&lt;password&gt;{}&lt;/password&gt;", g.str(gAlnum, 14))
		pw := g.str(gAlnum, 14)
		addEnc("password", evasion, "HTML entity =", "password&#61;{}", pw, pw)
		tok := "ghp_" + g.str(gAlnum, 36)
		addEnc("github_token", evasion, `\x escape`, `t='{}'`, `ghp\x5f`+tok[4:], tok)
		add("card", evasion, "dotted card", "card {} declined", strings.ReplaceAll(group(g.luhnCard("4", 16), "."), "", ""))
		add("password", evasion, "German key", "Passwort: {}", g.str(gAlnum, 12))
		add("password", evasion, "key with spaces", `{"Password" : "{}"}`, g.str(gAlnum, 12))
	}
	{
		g := next()
		tok := "ghp_" + g.str(gAlnum, 36)
		addEnc("github_token", evasion, "double percent-encoding", "GET /x?t={} 200", pct(pct(tok, "_"), "%"), tok)
		add("password", hard, "homoglyph key", "p\u0430ssword={}", g.str(gAlnum, 12))
		tok = "ghp_" + g.str(gAlnum, 36)
		addEnc("github_token", hard, "spaced out", "token: {}", strings.Join(strings.Split(tok, ""), " "), tok)
		pw := g.str(gAlnum, 12)
		addEnc("password", hard, "base64-wrapped", "state={}", b64("password="+pw), pw)
		add("secret", hard, "object after a secret-ish key", `{"credentials": {"value": "{}"}}`, g.str(gAlnum, 24))
		add("phone", hard, "national form", "call me at (415) 555-{}", g.digits(4))
		add("password", hard, "Go %v of a struct", "login: {ops {}}", g.str(gAlnum, 12))
		add("ssn", hard, "bare nine digits", "applicant {} rejected", strings.ReplaceAll(g.ssn(), "-", ""))
		// Session 57's families, after the others so that their values
		// stay what they were.
		add("nvidia_key", common, "env", "NVIDIA_API_KEY={}", "nvapi-"+g.str(gB64URL, 64))
		add("langfuse_key", common, "log", "langfuse: 401 for {}", "sk-lf-"+g.uuid())
		add("posthog_key", common, "log", "posthog: personal key {} rejected", "phx_"+g.str(gAlnum, 47))
		add("elevenlabs_key", common, "log", "elevenlabs: 401 for {}", "sk_"+g.str(gHex, 48))
		// Session 58's.
		add("salesforce_token", common, "log", "salesforce: INVALID_SESSION_ID for {}", "00D"+g.str(gAlnum, 12)+"!"+g.str(gAlnum+".", 96))
		// Session 60's.
		add("buildkite_token", common, "env", "BUILDKITE_API_TOKEN={}", "bkua_"+g.str(gLowDig, 40))
		add("flexport_key", common, "log", "flexport: 401 Unauthorized for key {}", "shltm_"+g.str(gB64URL, 40))
		add("fleetbase_key", common, "header", "Authorization: Bearer {}", "flb_live_"+g.str(gAlnum, 20))
		add("hubspot_token", common, "log", "hubspot: token {} expired", "pat-na1-"+g.uuid())
	}
	return ps
}

// cleanCorpus are realistic messages the default Scrubber must leave
// unchanged: routes, config words, ids that are not identifiers, prose,
// code, hashes. UUIDs, IP addresses and e-mail addresses are identifiers
// and are redacted, so there are none here.
var cleanCorpus = []string{
	"GET /home/dashboard 200 12ms",
	"GET /home/index.html 304",
	"POST /api/Users/42/roles 201 Created",
	"route /api/Users/{id} registered",
	"redirect to https://example.com/home/feed?tab=latest",
	"router.HandleFunc(\"/home/settings\", settingsHandler)",
	"GET /Users/search?q=jane 200",
	"cache miss for key-5d41402a (ttl 300s)",
	"evicted key-9e107d9d372b from the LRU",
	"auth=oauth2 scope=openid email",
	"auth: none; tls: required",
	"AUTH_TYPE=basic AUTH_PROVIDER=oidc",
	"auth=saml idp=okta",
	"token_type=bearer expires_in=3600",
	"password_policy=strict min_length=12",
	"passwordless login enabled for tenant acme",
	"token expired at 2025-06-01T10:00:00Z; please sign in again",
	"invalid password for user ops (attempt 3 of 5)",
	"the secret was rotated 3 days ago",
	"a password reset link was sent",
	"max_tokens=4096 temperature=0.2 top_p=0.9",
	`{"usage":{"prompt_tokens":1234,"completion_tokens":56,"total_tokens":1290}}`,
	"apiKey := os.Getenv(\"OPENAI_API_KEY\")",
	"token = self.token or config.token",
	"const password = req.body.password;",
	"secret: ${DB_SECRET}",
	"api_key: {{ .Values.apiKey }}",
	"password=$DB_PASSWORD psql -h db",
	"export API_KEY=$(cat /run/secrets/api_key)",
	"client_secret_file=/etc/app/client_secret.json",
	"private_key_path=/etc/ssl/private/server.key",
	"if err := checkPassword(user, password); err != nil {",
	"func (c *Client) SetToken(token string) { c.token = token }",
	"commit 3f2c1a9b8e7d6c5b4a392817f6e5d4c3b2a19087 by ops",
	"image sha256:9b2a3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809 pulled",
	"trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7",
	"etag \"33a64df551425fcc55e4d42a148795d9f25f89d4\" matched",
	"order ord_8f3k2j5h6g7d shipped via DHL in 3 days",
	"request req_01HZX3K8Q9 finished in 120ms",
	"upstream returned 503 Service Unavailable after 3 attempts; request took 1.5s",
	"version v1.22.3 (go1.22.3, linux/amd64), build 2025-06-01",
	"deployed 1.2.3.4.5 to staging at 10:30:45",
	"retry 3 of 5 after 250ms backoff (jitter 0.2)",
	"panic: runtime error: invalid memory address or nil pointer dereference [signal SIGSEGV addr=0x0 pc=0x4a3b2c]",
	"goroutine 17 [running]:\nmain.handler(0xc000123456)\n\t/usr/local/go/src/net/http/server.go:2136 +0x29",
	"SELECT id, name FROM users WHERE status = 'active' LIMIT 50",
	"HTTP/1.1 404 Not Found; content-type: application/json; charset=utf-8",
	"upload 50% done (12 of 24 parts)",
	"GET /search?q=hello%20world&lang=en 200",
	`{"msg":"caf\u00e9 opened","level":"info"}`,
	`{"path":"C:\\Program Files\\Acme\\app.exe","ok":true}`,
	"log: \"{\\\"level\\\":\\\"info\\\",\\\"msg\\\":\\\"started\\\"}\"",
	"zero\u200bwidth space in a sentence is fine",
	"listening on 127.0.0.1:8080 and [::1]:8080",
	"std::vector<int> and a::b::c are C++ paths",
	"the bearer of bad news arrived at 10:30",
	"aspect ratio 16:9 at 1920x1080, 60 fps",
	"/Users/Shared/Logs/app.log rotated",
	"ISO8601 and HTTP2 are standards; RFC3339 too",
	"call (415) 555 sales line for pricing", // no full number
	"key=value pairs: name=booking region=eu-west-1 retries=3",
	"tokenizer=cl100k_base vocab_size=100277",
	"Bearer token expired",
	"password: ********",
	"secret not found: projects/acme/secrets/db-password/versions/latest",
	"x-request-id: 7f3c9a12 x-ratelimit-remaining: 42",
	"kubectl get secret db-credentials -n prod -o yaml",
	"Authorization header missing",
	"credentials: default chain (env, shared config, IMDS)",
	"auth_method=password mfa=totp",
	"session expired, please log in again",
	"<token_endpoint>https://idp.example.com/oauth/token</token_endpoint>",
	"<passwordPolicy>strict</passwordPolicy><password></password>",
	"API key rotation scheduled for next week",
	"database:\n  password: |\n    ${DB_PASSWORD}\n",
	"see `token` and `api_key` in the docs",
	"Passwort vergessen? Kennwort zurücksetzen",
	"progress: 100%25 of 12 parts (%20 spacing)",
	"ratio 3c22.fb9a is a hex pair, build 2025.06.01.1234",
}
