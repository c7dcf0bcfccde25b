package scrub

import (
	"math/rand"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// clean256 is a realistic clean error message of exactly 256 bytes.
var clean256 = func() string {
	s := "upstream returned 503 Service Unavailable while calling booking service after 3 attempts; " +
		"request took 1.5s, version v1.2.3, retry budget exhausted at 2024-05-01T10:20:30Z; " +
		"the caller should back off and try again later with a smaller batch of requests"
	for len(s) < 256 {
		s += "."
	}
	return s[:256]
}()

// escaped256 is a clean message of exactly 256 bytes with escapes: the
// scrubber matches it in its decoded view.
var escaped256 = func() string {
	s := `{"msg":"upstream returned 503 for GET /search?q=caf%C3%A9%20au%20lait&amp;page=2",` +
		`"detail":"the caller’s request took 1.5s; retry "later" with a smaller batch",` +
		`"path":"C:\Program Files\Acme\app.exe"}`
	for len(s) < 256 {
		s += " "
	}
	return s[:256]
}()

// mixed1MiB returns 1 MiB of log-like text: mostly clean lines with
// secrets and identifiers sprinkled in about one line in five.
var mixed1MiB = sync.OnceValue(func() string {
	rng := rand.New(rand.NewSource(1))
	clean := []string{
		"upstream returned 503 Service Unavailable after 3 attempts; request took 1.5s",
		"GET /api/v1/bookings?page=2&limit=50 200 OK in 12ms (cache hit)",
		"worker pool resized from 8 to 16 goroutines; queue depth 42, version v1.2.3",
		"connection to db.internal:5432 closed by peer; reconnecting in 250ms",
		"tool search_flights returned 17 results for LHR to JFK on 2024-06-01",
		"panic recovered in handler: runtime error: index out of range [3] with length 3",
	}
	dirty := []string{
		"auth failed for bob@example.com from 10.0.0.12 with token=" + tGHP,
		"Authorization: Bearer " + tJWT,
		"postgres://app:Zx9pass@db.internal:5432/app refused",
		"charged card 4111 1111 1111 1111 for user 123e4567-e89b-12d3-a456-426614174000",
		"OPENAI_API_KEY=" + tSkProj + " in /home/alice/.env",
		`{"password": "hunter2", "api_key": "` + tAIza + `"}`,
	}
	var b strings.Builder
	for b.Len() < 1<<20 {
		if rng.Intn(5) == 0 {
			b.WriteString(dirty[rng.Intn(len(dirty))])
		} else {
			b.WriteString(clean[rng.Intn(len(clean))])
		}
		b.WriteByte('\n')
	}
	return b.String()[:1<<20]
})

// baseline is how a reasonable regexp author would scrub the same families:
// one alternation, one ReplaceAllString.
var baseline = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:` + strings.Join([]string{
		`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`,
		`\bgh[pousr]_[A-Za-z0-9]{36,}\b`,
		`\bgithub_pat_[A-Za-z0-9_]{40,}`,
		`\bglpat-[A-Za-z0-9_-]{20,}`,
		`\bxox[abeprs]-[A-Za-z0-9-]{10,}`,
		`\bxapp-[A-Za-z0-9-]{10,}`,
		`hooks\.slack\.com/services/[A-Za-z0-9/]+`,
		`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}`,
		`\bwhsec_[A-Za-z0-9]{20,}`,
		`\bsk-ant-[A-Za-z0-9_-]{20,}`,
		`\bsk-or-v1-[a-f0-9]{32,}`,
		`\bsk-[A-Za-z0-9_-]{20,}`,
		`\bAIza[A-Za-z0-9_-]{35}`,
		`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*`,
		`(?i)\bbearer\s+[A-Za-z0-9._~+/-]{8,}=*`,
		`(?i)\bbasic\s+[A-Za-z0-9+/]{8,}=*`,
		`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`,
		`[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@`,
		`[?&](?i:token|api_key|apikey|access_token|refresh_token|client_secret|sig|signature|x-amz-signature|x-amz-credential|x-goog-signature|password|secret|key|code)=[^&\s#"']+`,
		`(?i)(?:password|passwd|pwd|secret|token|api_?key|access_?key|private_?key|client_?secret|auth|credentials)["']?\s*[:=]\s*["']?[^\s"',;&]{3,}`,
		`\bhf_[A-Za-z0-9]{30,}`,
		`\bnpm_[A-Za-z0-9]{36,}`,
		`\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{20,}`,
		`\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{20,}`,
		`\b(?:SK|AC)[0-9a-fA-F]{32}\b`,
		`\bdo[por]_v1_[a-f0-9]{64}\b`,
		`\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b`,
		`\bkey-[a-z0-9]{32}\b`,
		`(?i)(?:AccountKey|SharedAccessKey)=[^;\s]+`,
		`\b[MNO][A-Za-z0-9]{23,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}\b`,
		`discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]+`,
		`\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33,}`,
		`\bdapi[a-f0-9]{32}(?:-[0-9]+)?\b`,
		`\bgsk_[A-Za-z0-9]{20,}`,
		`\bxai-[A-Za-z0-9]{20,}`,
		`(?i)(?:set-)?cookie:\s*[^\r\n]+`,
		`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`,
		`\b[2-6][0-9]{3}(?:[ -]?[0-9]{4}){2}[ -]?[0-9]{1,7}\b`,
		`\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b`,
		`\+[0-9][0-9 ().-]{7,20}[0-9]`,
		`\b(?:[0-9]{1,3}\.){3}[0-9]{1,3}\b`,
		`\b(?:[0-9a-fA-F]{1,4}:){2,7}:?[0-9a-fA-F]{0,4}\b`,
		`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`,
		`(?:/home/|/Users/|\\Users\\)[^/\\\s]+`,
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
})

func BenchmarkString(b *testing.B) {
	b.Run("clean_256B", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(clean256)))
		for b.Loop() {
			String(clean256)
		}
	})
	b.Run("escaped_256B", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(escaped256)))
		for b.Loop() {
			String(escaped256)
		}
	})
	b.Run("mixed_1MiB", func(b *testing.B) {
		in := mixed1MiB()
		b.ReportAllocs()
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			String(in)
		}
	})
}

func BenchmarkRegexpBaseline(b *testing.B) {
	re := baseline()
	b.Run("clean_256B", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(clean256)))
		for b.Loop() {
			re.ReplaceAllString(clean256, "[REDACTED]")
		}
	})
	b.Run("mixed_1MiB", func(b *testing.B) {
		in := mixed1MiB()
		b.ReportAllocs()
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			re.ReplaceAllString(in, "[REDACTED]")
		}
	})
}
