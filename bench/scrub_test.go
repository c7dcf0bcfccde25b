package bench

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/toolmw/toolmw/scrub"
)

// BenchmarkScrub compares toolmw's scrubber with what a reasonable author
// would write with package regexp: one compiled alternation of the same
// families, applied with ReplaceAllString. The regexp has it easier: it
// writes one fixed placeholder instead of a typed one, and it checks no
// Luhn or IBAN checksum.

// fake returns a deterministic random string of n bytes from alphabet, so
// no real-looking credential is written in this file.
func fake(seed uint64, alphabet string, n int) string {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b64u  = alnum + "-_"
	hex   = "0123456789abcdef"
)

// The planted secrets and identifiers.
var (
	fakeGitHub = "gh" + "p_" + fake(1, alnum, 36)
	fakeAWS    = "AK" + "IA" + fake(2, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	fakeStripe = "sk" + "_live_" + fake(3, alnum, 24)
	fakeOpenAI = "sk" + "-proj-" + fake(4, b64u, 48)
	fakeJWT    = "eyJ" + fake(5, b64u, 20) + ".eyJ" + fake(6, b64u, 24) + "." + fake(7, b64u, 43)
	fakeGoogle = "AI" + "za" + fake(8, b64u, 35)
	fakeSlack  = "xo" + "xb-" + fake(9, "0123456789", 12) + "-" + fake(10, alnum, 24)
	fakePass   = fake(11, alnum, 14)
	fakeUUID   = fake(12, hex, 8) + "-" + fake(13, hex, 4) + "-4" + fake(14, hex, 3) + "-a" + fake(15, hex, 3) + "-" + fake(16, hex, 12)
	fakeEmail  = "jane.doe@example.com"
	fakeCard   = "4111 1111 1111 1111" // a test card number; it passes Luhn
	fakeIP     = "203.0.113.42"
)

// planted lists what the dirty texts hide; neither scrubber may leave any.
var planted = []string{fakeGitHub, fakeAWS, fakeStripe, fakeOpenAI, fakeJWT, fakeGoogle, fakeSlack,
	fakePass, fakeUUID, fakeEmail, fakeCard, fakeIP}

// pad256 pads or cuts s to exactly 256 bytes.
func pad256(s string) string {
	for len(s) < 256 {
		s += " ."
	}
	return s[:256]
}

var (
	// clean256 is a typical error message without a secret.
	clean256 = pad256("upstream returned 503 Service Unavailable while calling the booking service " +
		"after 3 attempts; the request took 1.5s, version v1.2.3, retry budget left 4 of 10 at " +
		"2025-05-01T10:20:30Z; back off and try again later with a smaller batch of requests")
	// dirty256 is an error message of the same size holding four secrets.
	dirty256 = pad256("POST /v1/charges failed with 401 for " + fakeEmail + " from " + fakeIP +
		": Authorization: Bearer " + fakeJWT + " rejected; key=" + fakeStripe)
	// mixed64K is 64 KiB of log lines, about one in five holding a secret.
	mixed64K = func() string {
		clean := []string{
			"upstream returned 503 Service Unavailable after 3 attempts; request took 1.5s",
			"GET /api/v1/bookings?page=2&limit=50 200 OK in 12ms (cache hit)",
			"worker pool resized from 8 to 16 goroutines; queue depth 42, version v1.2.3",
			"connection to db.internal:5432 closed by peer; reconnecting in 250ms",
			"tool search_flights returned 17 results for LHR to JFK on 2025-06-01",
		}
		dirty := []string{
			"auth failed for " + fakeEmail + " with token " + fakeGitHub,
			"Authorization: Bearer " + fakeJWT,
			"postgres://app:" + fakePass + "@db.internal:5432/app refused",
			"charged card " + fakeCard + " for user " + fakeUUID,
			"OPENAI_API_KEY=" + fakeOpenAI + " AWS_ACCESS_KEY_ID=" + fakeAWS,
			`{"api_key": "` + fakeGoogle + `", "slack": "` + fakeSlack + `"}`,
		}
		r := rand.New(rand.NewPCG(42, 42))
		var b strings.Builder
		for b.Len() < 64<<10 {
			if r.IntN(5) == 0 {
				b.WriteString(dirty[r.IntN(len(dirty))])
			} else {
				b.WriteString(clean[r.IntN(len(clean))])
			}
			b.WriteByte('\n')
		}
		return b.String()
	}()
)

// secretsRegexp covers the scrubber's families, one alternative each (or a
// few), in the style of common secret-scanning rule sets.
var secretsRegexp = regexp.MustCompile(`(?:` + strings.Join([]string{
	`\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA)[A-Z0-9]{16}\b`, // AWS access key id
	`(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}`,         // AWS secret key
	`\bgh[pousr]_[A-Za-z0-9]{30,}`, `\bgithub_pat_\w{40,}`,                       // GitHub
	`\bglpat-[\w-]{20,}`,                                          // GitLab
	`\bxox[abeprs]-[A-Za-z0-9-]{10,}`, `\bxapp-[A-Za-z0-9-]{10,}`, // Slack tokens
	`hooks\.slack\.com/services/[A-Za-z0-9+/]{20,}`,                          // Slack webhook
	`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}`, `\bwhsec_[A-Za-z0-9]{20,}`, // Stripe
	`\bsk-ant-[\w-]{20,}`,                                                 // Anthropic
	`\bsk-or-v1-[0-9a-f]{32,}`,                                            // OpenRouter
	`\bsk-[\w-]{20,}`,                                                     // OpenAI
	`\bAIza[\w-]{35}`,                                                     // Google API key
	`\beyJ[\w-]{10,}\.eyJ[\w-]{10,}\.[\w-]*`,                              // JWT
	`(?i)\bbearer\s+[\w.~+/-]{8,}=*`, `(?i)\bbasic\s+[A-Za-z0-9+/]{8,}=*`, // Authorization
	`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`,                                                    // private key
	`\b[a-zA-Z][\w+.-]*://[^/\s:@]+:[^/\s@]+@`,                                                                                      // URL and DB credentials
	`[?&](?i:token|access_token|api_?key|sig|signature|x-amz-signature|x-amz-credential|x-goog-signature|secret|password)=[^&\s#]+`, // signed URLs
	`(?i)(?:password|passwd|pwd|secret|token|api_?key|access_?key|client_?secret|credentials?)["']?\s*[:=]\s*["']?[^\s"',;&]{3,}`,   // key=value
	`\bhf_[A-Za-z0-9]{30,}`, `\bnpm_[A-Za-z0-9]{36,}`, `\bpypi-AgEIcHlwaS5vcmc[\w-]{20,}`, // Hugging Face, npm, PyPI
	`\bSG\.[\w-]{16,32}\.[\w-]{20,}`,                                         // SendGrid
	`\b(?:SK|AC)[0-9a-fA-F]{32}\b`,                                           // Twilio
	`\bdo[por]_v1_[0-9a-f]{64}\b`,                                            // DigitalOcean
	`\bshp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}`,                                   // Shopify
	`\bkey-[0-9a-z]{32}\b`,                                                   // Mailgun
	`(?i)(?:AccountKey|SharedAccessKey)=[^;\s]+`,                             // Azure
	`\b[MNO][A-Za-z0-9]{23,27}\.[\w-]{6}\.[\w-]{27,40}`,                      // Discord token
	`discord(?:app)?\.com/api/webhooks/\d+/[\w-]+`,                           // Discord webhook
	`\b\d{8,10}:AA[\w-]{33}`,                                                 // Telegram
	`\bdapi[0-9a-f]{32}`, `\bgsk_[A-Za-z0-9]{20,}`, `\bxai-[A-Za-z0-9]{20,}`, // Databricks, Groq, xAI
	`(?i)\b(?:set-)?cookie:[^\r\n]+`,                                                  // cookies
	`[\w.%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`,                                          // email
	`\b\d{4}[ -]?\d{4}[ -]?\d{4}[ -]?\d{1,7}\b`,                                       // card
	`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b`,                     // IBAN
	`\+\d[\d ().-]{7,20}\d`,                                                           // phone
	`\b(?:\d{1,3}\.){3}\d{1,3}\b`, `\b(?:[0-9a-fA-F]{1,4}:){2,7}:?[0-9a-fA-F]{0,4}\b`, // IPv4, IPv6
	`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`, // UUID
	`(?:/home/|/Users/|\\Users\\)[^/\\\s]+`,                                           // home directories
	// Issue #13: the families added to the scrubber.
	`\b(?:ya29\.[\w-]{20,}|1//0[\w-]{30,}|GOCSPX-[\w-]{28})`,                                                  // Google OAuth
	`\bgl(?:pat|dt|rtr|rt|ptt|soat|ft|imt|agent|oas|cbt|ffct)-[\w.-]{20,}|\bGR1348941[\w-]{20,}`,              // GitLab
	`\bhv[sbr]\.[\w-]{24,}|\bgl(?:sa_\w{40,}|c_[A-Za-z0-9+/=]{32,})|\bsntry(?:s_[\w=-]{50,}|u_[0-9a-f]{64})`,  // Vault, Grafana, Sentry
	`\blin_(?:api_[A-Za-z0-9]{40}|oauth_[0-9a-f]{64})|\b(?:ntn_[A-Za-z0-9]{40,50}|secret_[A-Za-z0-9]{43})`,    // Linear, Notion
	`\bPMAK-[0-9a-f]{24}-[0-9a-f]{34}|\bNR(?:AK-[A-Z0-9]{27}|JS-[0-9a-f]{19})`,                                // Postman, New Relic
	`\bdp\.(?:pt|st|sa|ct|scim|audit)\.[\w.-]{40,}|\bATATT3[\w=-]{150,}|\bATBB[A-Za-z0-9]{32}`,                // Doppler, Atlassian
	`\bsbp_[0-9a-f]{40}|\bsb_secret_[\w-]{30,}|\bAGE-SECRET-KEY-1[A-Z0-9]{58}`,                                // Supabase, age
	`\bsq0(?:atp-[\w-]{22}|csp-[\w-]{43})|\bEAAA[\w-]{60}|\bpul-[0-9a-f]{40}|\bdckr_(?:pat|oat)_[\w-]{24,}`,   // Square, Pulumi, Docker Hub
	`\bpscale_(?:tkn|pw|oauth)_[\w-]{32,}|\br8_[A-Za-z0-9]{37}|\bpplx-[A-Za-z0-9]{40,}`,                       // PlanetScale, Replicate, Perplexity
	`\blsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}|\bpcsk_\w{40,}|\btvly-[\w-]{30,}`,                             // LangSmith, Pinecone, Tavily
	`\b[0-9a-f]{32}-us\d{1,2}\b|\bLTAI[A-Za-z0-9]{12,30}|\b[\w.~-]{3}\dQ~[\w.~-]{31,34}`,                      // Mailchimp, Alibaba, Azure AD
	`\b(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9+/=]{100,}|\bEAA[A-Za-z0-9]{90,}`,                          // AWS session, Facebook
	`\bfo1_[\w-]{40,}|\bfm2_[\w+/=,.~-]{60,}|\b[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,}|\brubygems_[0-9a-f]{48}`, // Fly.io, Terraform, RubyGems
	`\bsk\.eyJ[\w.-]{60,}|\bHRKU-[\w-]{50,}`,                                                                  // Mapbox, Heroku
	`\b\d{3}-\d{2}-\d{4}\b`,                                                                                   // US SSN
	`\b[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){5}\b`,                                                             // MAC address
}, "|") + `)`)

func regexpScrub(s string) string { return secretsRegexp.ReplaceAllString(s, "[REDACTED]") }

var scrubTexts = []struct {
	name string
	text string
}{
	{"clean_256B", clean256},
	{"dirty_256B", dirty256},
	{"mixed_64KiB", mixed64K},
}

var sinkString string

func BenchmarkScrub(b *testing.B) {
	for _, sc := range []struct {
		name string
		fn   func(string) string
	}{{"toolmw", scrub.String}, {"regexp", regexpScrub}} {
		for _, t := range scrubTexts {
			b.Run(sc.name+"/"+t.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(t.text)))
				for i := 0; i < b.N; i++ {
					sinkString = sc.fn(t.text)
				}
			})
		}
	}
}

// TestScrubbersAgree checks that the comparison is fair: both scrubbers
// leave clean text alone and remove every planted secret.
func TestScrubbersAgree(t *testing.T) {
	for _, fn := range []struct {
		name string
		fn   func(string) string
	}{{"toolmw", scrub.String}, {"regexp", regexpScrub}} {
		if got := fn.fn(clean256); got != clean256 {
			t.Errorf("%s changed the clean text:\n%s", fn.name, got)
		}
		for _, text := range []string{dirty256, mixed64K} {
			out := fn.fn(text)
			for _, p := range planted {
				if strings.Contains(text, p) && strings.Contains(out, p) {
					t.Errorf("%s left %q", fn.name, p)
				}
			}
		}
	}
	if len(clean256) != 256 || len(dirty256) != 256 {
		t.Errorf("texts of %d and %d bytes, want 256", len(clean256), len(dirty256))
	}
	for _, p := range []string{fakeEmail, fakeIP, fakeJWT, fakeStripe} {
		if !strings.Contains(dirty256, p) {
			t.Errorf("dirty256 lacks %q", p)
		}
	}
}
