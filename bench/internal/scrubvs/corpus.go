// Package scrubvs measures toolmw's scrubber (package scrub) side by side with gitleaks v8.30.1,
// the secret scanner, on the same messages: recall on gitleaks' own rule samples, on the bare
// secret values, and on those values inside tool-error templates; false positives on clean
// text; and speed. bench/cmd/scrubreport writes the report; bench's BenchmarkScrubVsGitleaks
// runs the speed benchmarks alone.
package scrubvs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Sample is one message. Secret is the value that must not survive (empty in a clean set);
// Rule is the gitleaks rule id the value comes from, or the clean category.
type Sample struct {
	Rule, Msg, Secret string
}

// Set is a corpus of messages: secrets to find, or clean text that must come back unchanged.
type Set struct {
	Name, Desc string
	Clean      bool
	Samples    []Sample
}

// Template is a tool-error message with a slot (%s) for a secret.
type Template struct {
	Name, Text string
}

// Templates are the tool-error messages corpus "templates" plants every bare gitleaks secret
// in. They were written once, before any measurement, as errors a tool call commonly returns,
// and are not tuned to either scanner: each puts the secret where such an error puts a
// credential, with or without a word naming it.
var Templates = []Template{
	{"http_client", `Post "https://api.partner.example/v2/orders": 401 Unauthorized: {"error":"invalid_client","detail":"credential %s was rejected"} (request 7f3c9a1e, 183ms)`},
	{"db_driver", `failed to connect to ` + "`host=db.internal user=orders database=orders`" + `: server error (FATAL: password authentication failed for user "orders" (SQLSTATE 28P01)); dsn options: sslmode=require password=%s connect_timeout=5`},
	{"log_line", `2025-06-01T10:20:30.123Z ERROR sync/worker.go:214 upstream refused the request status=403 attempt=3 key=%s duration=1.204s`},
	{"json_error_body", `{"error":{"code":403,"status":"PERMISSION_DENIED","message":"The caller does not have permission","details":[{"reason":"API_KEY_INVALID","metadata":{"key":"%s","service":"storage.partner.example"}}]}}`},
	{"stack_trace", "panic: vendor client: init with %s: unexpected response 401\n\ngoroutine 1 [running]:\nmain.mustClient({0xc0000a4000, 0x28})\n\t/app/cmd/sync/main.go:57 +0x1d4\nmain.main()\n\t/app/cmd/sync/main.go:31 +0x65\nexit status 2"},
}

// readJSON reads a rule id → strings file of testdata/gitleaks.
func readJSON(path string) (map[string][]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string][]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Load reads the corpora from dir (bench/testdata): gitleaks' rule samples
// (gitleaks/tps.json, bare.json, fps.json, see bench/cmd/gitleakscorpus) and the clean
// constructed errors (scrubvs/clean.json, see Clean).
func Load(dir string) ([]Set, error) {
	tps, err := readJSON(filepath.Join(dir, "gitleaks", "tps.json"))
	if err != nil {
		return nil, err
	}
	bare, err := readJSON(filepath.Join(dir, "gitleaks", "bare.json"))
	if err != nil {
		return nil, err
	}
	fps, err := readJSON(filepath.Join(dir, "gitleaks", "fps.json"))
	if err != nil {
		return nil, err
	}
	clean, err := readJSON(filepath.Join(dir, "scrubvs", "clean.json"))
	if err != nil {
		return nil, err
	}

	written := Set{Name: "rule_samples", Desc: "gitleaks' rule samples as written (tps.json); the secret of a sample is the longest bare value of its rule it contains"}
	for _, rule := range sortedKeys(tps) {
		for _, msg := range tps[rule] {
			secret := ""
			for _, v := range bare[rule] {
				if strings.Contains(msg, v) && len(v) > len(secret) {
					secret = v
				}
			}
			if secret == "" {
				return nil, fmt.Errorf("rule %s: sample %.60q holds no bare value of its rule", rule, msg)
			}
			written.Samples = append(written.Samples, Sample{rule, msg, secret})
		}
	}
	bareSet := Set{Name: "bare", Desc: "the bare secret values alone (bare.json)"}
	inTemplates := Set{Name: "templates", Desc: fmt.Sprintf("every bare value inside each of %d tool-error templates", len(Templates))}
	for _, rule := range sortedKeys(bare) {
		for _, v := range bare[rule] {
			bareSet.Samples = append(bareSet.Samples, Sample{rule, v, v})
			for _, t := range Templates {
				inTemplates.Samples = append(inTemplates.Samples, Sample{rule, strings.Replace(t.Text, "%s", v, 1), v})
			}
		}
	}
	fpSet := Set{Name: "gitleaks_fps", Desc: "gitleaks' false-positive samples (fps.json)", Clean: true}
	for _, rule := range sortedKeys(fps) {
		for _, msg := range fps[rule] {
			fpSet.Samples = append(fpSet.Samples, Sample{Rule: rule, Msg: msg})
		}
	}
	cleanSet := Set{Name: "clean_errors", Desc: "constructed clean errors (testdata/scrubvs/clean.json)", Clean: true}
	for _, cat := range sortedKeys(clean) {
		for _, msg := range clean[cat] {
			cleanSet.Samples = append(cleanSet.Samples, Sample{Rule: cat, Msg: msg})
		}
	}
	return []Set{written, bareSet, inTemplates, fpSet, cleanSet}, nil
}
