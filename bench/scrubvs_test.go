package bench

import (
	"bytes"
	"flag"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolmw/toolmw/bench/internal/scrubvs"
)

// toolmw's scrubber against gitleaks v8.30.1 (issue 31): the speed benchmarks, and checks that
// the measurement is sound. cmd/scrubreport writes the report (results/scrub-vs-gitleaks.md).

var updateClean = flag.Bool("update", false, "rewrite testdata/scrubvs/clean.json")

var (
	vsOnce sync.Once
	vsSets []scrubvs.Set
	vsErr  error
)

func scrubvsSets(tb testing.TB) []scrubvs.Set {
	vsOnce.Do(func() { vsSets, vsErr = scrubvs.Load("testdata") })
	if vsErr != nil {
		tb.Fatal(vsErr)
	}
	return vsSets
}

// BenchmarkScrubVsGitleaks times both peers on every message set, one message per operation.
func BenchmarkScrubVsGitleaks(b *testing.B) {
	names, fns, err := scrubvs.Peers()
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range scrubvs.SpeedSets(scrubvsSets(b)) {
		for i, name := range names {
			b.Run(s.Name+"/"+name, func(b *testing.B) { scrubvs.Bench(b, s, fns[i]) })
		}
	}
}

// BenchmarkScrubCleanCategories times toolmw alone on each category of the constructed clean
// errors (set clean_errors): where that set's time goes, category by category.
func BenchmarkScrubCleanCategories(b *testing.B) {
	names, fns, err := scrubvs.Peers()
	if err != nil {
		b.Fatal(err)
	}
	k := slices.Index(names, "toolmw")
	if k < 0 {
		b.Fatalf("no toolmw among the peers %q", names)
	}
	cats := scrubvs.Clean()
	for _, name := range slices.Sorted(maps.Keys(cats)) {
		s := scrubvs.Set{Name: name, Clean: true}
		for _, m := range cats[name] {
			s.Samples = append(s.Samples, scrubvs.Sample{Msg: m})
		}
		b.Run(name, func(b *testing.B) { scrubvs.Bench(b, s, fns[k]) })
	}
}

// TestCleanCorpusFile checks that testdata/scrubvs/clean.json is what scrubvs.Clean generates
// (-update rewrites it).
func TestCleanCorpusFile(t *testing.T) {
	want := scrubvs.CleanJSON()
	const path = "testdata/scrubvs/clean.json"
	if *updateClean {
		if err := os.MkdirAll("testdata/scrubvs", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is out of date (%v); run go test -run TestCleanCorpusFile -update .", path, err)
	}
}

// TestScrubVsGitleaksCorpora checks the corpora's sizes and the constant shared with BenchmarkScrub.
func TestScrubVsGitleaksCorpora(t *testing.T) {
	if scrubvs.Clean256 != clean256 {
		t.Errorf("scrubvs.Clean256 differs from clean256")
	}
	min := map[string]int{"rule_samples": 5000, "bare": 500, "templates": 2500, "gitleaks_fps": 300, "clean_errors": 200}
	for _, s := range scrubvsSets(t) {
		if len(s.Samples) < min[s.Name] {
			t.Errorf("%s: %d messages, want at least %d", s.Name, len(s.Samples), min[s.Name])
		}
	}
	if len(scrubvs.Templates) < 5 {
		t.Errorf("%d templates, want at least 5", len(scrubvs.Templates))
	}
}

// TestGitleaksSpan checks that the byte span computed from a gitleaks finding's lines and
// columns is its match, on one sample of every rule (multi-line ones included).
func TestGitleaksSpan(t *testing.T) {
	d, err := scrubvs.Gitleaks()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	checked := 0
	for _, s := range scrubvsSets(t)[0].Samples {
		if seen[s.Rule] {
			continue
		}
		seen[s.Rule] = true
		for _, f := range scrubvs.GitleaksDetect(d, s.Msg) {
			if strings.Contains(strings.Join(f.Tags, " "), "decoded:") {
				continue
			}
			a, b := scrubvs.Span(s.Msg, f)
			if got := s.Msg[a:b]; got != f.Match {
				t.Errorf("%s: span %d:%d is %q, want the match %q", f.RuleID, a, b, got, f.Match)
			}
			checked++
		}
	}
	if checked < 150 {
		t.Errorf("checked %d findings, want at least 150", checked)
	}
}

// TestLeak checks the scoring rule on hand-made cases.
func TestLeak(t *testing.T) {
	const v = "https://hooks.example.com/services/T0ABCDEF/B0GHIJKL/abcdefghijkl"
	for _, c := range []struct {
		out, secret string
		leaks       bool
	}{
		{"[REDACTED:x]", "abcdef123456", false},
		{"key abcdef[REDACTED:x]", "abcdef123456", true},
		{"key abcde[REDACTED:x]", "abcdef123456", false},
		{"https://hooks.example.com/services/[REDACTED:slack_webhook]", v, false},
		{"https://hooks.example.com/services/T0ABCDEF/[REDACTED:x]", v, true},
		{"password: [REDACTED:secret]", "password: c2VjcmV0MTIz", false},
		{"ab", "ab", true},
	} {
		if got := scrubvs.Leak(c.out, "", c.secret) != ""; got != c.leaks {
			t.Errorf("Leak(%q, %q) = %v, want %v", c.out, c.secret, got, c.leaks)
		}
	}
	if scrubvs.LeakStrict("https://hooks.example.com/services/[REDACTED:x]", "", v) == "" {
		t.Error("LeakStrict does not count the public prefix")
	}
	if m := scrubvs.MaskSecret("x sntrys_abcdefghij y abcdefg", "sntrys_abcdefghij"); strings.Contains(m, "abcdef") {
		t.Errorf("MaskSecret left the secret: %q", m)
	}
}
