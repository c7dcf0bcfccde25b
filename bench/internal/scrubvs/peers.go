package scrubvs

import (
	"regexp"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/toolmw/toolmw/scrub"
)

// Toolmw is toolmw's scrubber with its defaults.
func Toolmw(s string) string { return scrub.String(s) }

// GitleaksMaxDecodeDepth is gitleaks' command line default (--max-decode-depth 5): it decodes
// base64, hex and percent-encoded text and scans the result.
const GitleaksMaxDecodeDepth = 5

var (
	gitleaksOnce sync.Once
	gitleaks     *detect.Detector
	gitleaksErr  error
)

// Gitleaks returns gitleaks' detector with its default config, set up as its command line sets
// it up for `gitleaks stdin` or `gitleaks dir` without flags: detect.NewDetectorDefaultConfig
// (the embedded config/gitleaks.toml) and --max-decode-depth 5; no redaction, no baseline, no
// .gitleaksignore. It is built once (it compiles some 220 regular expressions) and its log
// output is silenced.
func Gitleaks() (*detect.Detector, error) {
	gitleaksOnce.Do(func() {
		logging.Logger = zerolog.Nop()
		gitleaks, gitleaksErr = detect.NewDetectorDefaultConfig()
		if gitleaksErr == nil {
			gitleaks.MaxDecodeDepth = GitleaksMaxDecodeDepth
		}
	})
	return gitleaks, gitleaksErr
}

// GitleaksDetect returns gitleaks' findings on s, as `gitleaks stdin` would report them.
func GitleaksDetect(d *detect.Detector, s string) []report.Finding {
	return d.DetectString(s)
}

// Span returns the byte offsets in raw of the text a finding reports: its match, or for a
// finding in decoded text the encoded text it was decoded from. gitleaks reports lines (from 0
// here, a fragment's first line) and columns; this inverts detect's location().
func Span(raw string, f report.Finding) (start, end int) {
	// lineBase(k) is what location() subtracts on line k: 0 on the first line, else the offset
	// of the newline that ends line k-1.
	lineBase := func(k int) int {
		if k <= 0 {
			return 0
		}
		n := 0
		for i := 0; i < len(raw); i++ {
			if raw[i] == '\n' {
				n++
				if n == k {
					return i
				}
			}
		}
		return len(raw)
	}
	start = lineBase(f.StartLine) + f.StartColumn - 1
	end = lineBase(f.EndLine) + f.EndColumn
	start = max(0, min(start, len(raw)))
	end = max(start, min(end, len(raw)))
	if raw[start:end] == f.Match {
		return start, end
	}
	// location() leaves the end unset (column 0 on the first line) when a match spans lines
	// and ends on the last line of a text without a final newline. The match is the text
	// itself unless it was decoded: take it where it starts, or else where it is.
	if strings.HasPrefix(raw[start:], f.Match) {
		return start, start + len(f.Match)
	}
	if i := strings.Index(raw, f.Match); i >= 0 && f.Match != "" {
		return i, i + len(f.Match)
	}
	// A decoded finding: the encoded text runs to the next space or quote.
	if end <= start {
		end = start
		for end < len(raw) && !strings.ContainsRune(" \t\r\n\"'`", rune(raw[end])) {
			end++
		}
	}
	return start, end
}

// GitleaksMask returns s with the text of every finding replaced by a marker: what is left of
// a secret once a user removes what gitleaks reported. It is how gitleaks' output is scored
// with the same rule as toolmw's (Found).
func GitleaksMask(s string, findings []report.Finding) string {
	if len(findings) == 0 {
		return s
	}
	masked := make([]bool, len(s))
	for _, f := range findings {
		a, b := Span(s, f)
		for i := a; i < b; i++ {
			masked[i] = true
		}
		// The secret itself wherever else it is written (gitleaks reports each place, but a
		// finding's span is its match, which holds the secret).
		if f.Secret != "" && strings.Contains(s, f.Secret) {
			for i := 0; ; {
				j := strings.Index(s[i:], f.Secret)
				if j < 0 {
					break
				}
				for k := i + j; k < i+j+len(f.Secret); k++ {
					masked[k] = true
				}
				i += j + len(f.Secret)
			}
		}
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if masked[i] {
			if i == 0 || !masked[i-1] {
				b.WriteString("[GITLEAKS]")
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// placeholders matches toolmw's placeholders, whose family names may hold a piece of a value.
var placeholders = regexp.MustCompile(`\[REDACTED:[a-z0-9_:]+\]|\[GITLEAKS\]`)

// publicPrefix matches the start of a bare value that gitleaks' Finding.Secret includes but
// that is no secret: a URL's scheme, host and a first path word (Slack's
// https://hooks.slack.com/services/), or a YAML key (Kubernetes' `password: `).
var publicPrefix = regexp.MustCompile(`^(?:[a-z][a-z0-9+.-]*://[^/\s]+/(?:[a-z]+/)?|[\w.-]+:[ \t]*[>|]?[ \t]*\n?[ \t]*)`)

// Leak returns a piece of secret that survives in out and is not in rest (the message
// without the secret), or "". Pieces are 6 bytes long (the secret whole if shorter), taken at
// every offset: the rule of scrub/recall_test.go. Unlike there, pieces that lie wholly in a
// public prefix of the value (publicPrefix) do not count, so that a webhook URL whose token
// is removed is not a miss because its host survives.
func Leak(out, rest, secret string) string {
	if secret == "" {
		return ""
	}
	out = placeholders.ReplaceAllString(out, "")
	pub := len(publicPrefix.FindString(secret))
	if pub == len(secret) {
		pub = 0
	}
	n := min(6, len(secret))
	for k := 0; k+n <= len(secret); k++ {
		if k+n <= pub {
			continue
		}
		if p := secret[k : k+n]; strings.Contains(out, p) && !strings.Contains(rest, p) {
			return p
		}
	}
	return ""
}

// LeakStrict is Leak with every piece counted, the public prefix included.
func LeakStrict(out, rest, secret string) string {
	if secret == "" {
		return ""
	}
	out = placeholders.ReplaceAllString(out, "")
	n := min(6, len(secret))
	for k := 0; k+n <= len(secret); k++ {
		if p := secret[k : k+n]; strings.Contains(out, p) && !strings.Contains(rest, p) {
			return p
		}
	}
	return ""
}
