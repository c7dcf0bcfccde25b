// Command gitleakscorpus extracts gitleaks' rule samples (the true and false positives each rule
// of its default config is validated against) into three JSON files, the corpus bench's scrub
// report measures toolmw and gitleaks on.
//
// Regenerate (from bench/; needs the gitleaks module and its dependency github.com/lucasjones/reggen
// in the module cache, which `go mod download` fetches):
//
//	go run ./cmd/gitleakscorpus -out testdata/gitleaks
//
// How: gitleaks builds its default config (config/gitleaks.toml) with the program
// cmd/generate/config, which calls one function per rule (cmd/generate/config/rules/*.go); each
// function ends with utils.Validate(rule, tps, fps) or utils.ValidateWithPaths, which checks that
// the rule finds every true positive and none of the false positives. This command copies the
// gitleaks module (v8.30.1, the version bench/go.mod requires) from the module cache to a
// temporary directory and patches four files there:
//
//   - cmd/generate/config/utils/validate.go: Validate and ValidateWithPaths also record, per rule
//     id, the samples and the secret of each true positive (see bare below); a sample that does
//     not validate (a random value the rule rejects: gitleaks' generator is flaky) is left out
//     with a warning instead of ending the program;
//   - cmd/generate/config/utils/generate.go: GenerateSampleSecrets visits its templates in sorted
//     order (a map in gitleaks, so the order changed between runs) and records its secret argument;
//   - cmd/generate/secrets/regen.go: NewSecret seeds each generator from one fixed-seed source,
//     so that the random secrets many rules generate are the same on every run (same call order);
//   - cmd/generate/config/main.go: after the list of every rule is built, the recorded samples of
//     the rules in that list are written as JSON and the program ends (no gitleaks.toml written).
//
// The files written, each an object from rule id to a sorted list of strings (some rule functions
// build their samples from a map, whose order changes between runs), sorted by rule id:
//
//   - tps.json: the true positives, exactly as the rule validates them (for ValidateWithPaths
//     rules, the file contents, in the order of their paths; empty contents are left out: a
//     path-only rule such as pkcs12-file has nothing in the text to find);
//   - fps.json: the false positives, the same way;
//   - bare.json: the bare secret values, deduplicated: for a sample built by
//     utils.GenerateSampleSecrets(id, secret), that secret argument; for any other sample, the
//     Finding.Secret of each finding the rule's own validating detector reports on it (the part
//     its secretGroup or regex captures).
//
// A sample a rule function validates more than once (several rule functions build on another)
// is kept once. Rules validated by a function but not in the default config are left out.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const module = "github.com/zricethezav/gitleaks/v8"

func main() {
	out := flag.String("out", "testdata/gitleaks", "directory to write tps.json, fps.json and bare.json to")
	seed := flag.Int64("seed", 1, "seed of the random secrets gitleaks' rule functions generate")
	keep := flag.Bool("keep", false, "keep the temporary copy of the gitleaks module")
	flag.Parse()

	dir, err := goOutput("", "list", "-m", "-f", "{{.Dir}}", module)
	if err != nil || dir == "" {
		log.Fatalf("locating %s (run from bench/, after `go mod download`): %v", module, err)
	}
	absOut, err := filepath.Abs(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(absOut, 0o755); err != nil {
		log.Fatal(err)
	}

	tmp, err := os.MkdirTemp("", "gitleakscorpus-")
	if err != nil {
		log.Fatal(err)
	}
	if *keep {
		log.Printf("temporary copy: %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	if err := copyTree(dir, tmp); err != nil {
		log.Fatal(err)
	}
	if err := patch(tmp, *seed); err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./cmd/generate/config", absOut)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("running the patched generator: %v", err)
	}
}

func goOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var b bytes.Buffer
	cmd.Stdout = &b
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	return strings.TrimSpace(b.String()), err
}

// copyTree copies the module without its testdata (large, unused here), writable.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if rel == "testdata" || rel == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

// replaceOnce replaces old by new in the file, and fails unless old occurs exactly once, so that
// a gitleaks version whose sources moved is noticed rather than silently mis-patched.
func replaceOnce(path, old, new string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if n := strings.Count(string(b), old); n != 1 {
		return fmt.Errorf("%s: %q occurs %d times, want 1", path, old, n)
	}
	return os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644)
}

func patch(root string, seed int64) error {
	utils := filepath.Join(root, "cmd/generate/config/utils")
	steps := []struct{ file, old, new string }{
		// Seeded secrets.
		{"cmd/generate/secrets/regen.go", `import (
	"github.com/lucasjones/reggen"
)`, `import (
	"math/rand"

	"github.com/lucasjones/reggen"
)

// Seeds draws the seed of each generator (patched in by bench/cmd/gitleakscorpus).
var Seeds = rand.New(rand.NewSource(` + fmt.Sprint(seed) + `))`},
		{"cmd/generate/secrets/regen.go", `	return g.Generate(1)`, `	g.SetSeed(Seeds.Int63())
	return g.Generate(1)`},
		// GenerateSampleSecrets: sorted templates, secret recorded.
		{"cmd/generate/config/utils/generate.go", `	cases := make([]string, 0, len(samples))
	for _, v := range samples {
		cases = append(cases, replacer.Replace(v))
	}`, `	generatedSecrets = append(generatedSecrets, secret)
	keys := make([]string, 0, len(samples))
	for k := range samples {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	cases := make([]string, 0, len(samples))
	for _, k := range keys {
		cases = append(cases, replacer.Replace(samples[k]))
	}`},
		{"cmd/generate/config/utils/generate.go", `import (
	"fmt"`, `import (
	"fmt"
	"sort"`},
		// Validate and ValidateWithPaths record.
		{"cmd/generate/config/utils/validate.go", `	d := createSingleRuleDetector(r)
	for _, tp := range truePositives {`, `	d := createSingleRuleDetector(r)
	recordSamples(r, d, truePositives, falsePositives, nil, nil)
	for _, tp := range truePositives {`},
		{"cmd/generate/config/utils/validate.go", `	d := createSingleRuleDetector(r)
	for path, tp := range truePositives {`, `	d := createSingleRuleDetector(r)
	recordSamples(r, d, sortedValues(truePositives), sortedValues(falsePositives), truePositives, falsePositives)
	for path, tp := range truePositives {`},
		// main: dump after the list.
		{"cmd/generate/config/main.go", `	// ensure rules have unique ids`, `	if err := utils.DumpCorpus(configRules, gitleaksConfigPath); err != nil {
		logging.Fatal().Err(err).Msg("writing the corpus")
	}
	if len(configRules) > 0 {
		return
	}
	// ensure rules have unique ids`},
		{"cmd/generate/config/main.go", `	"github.com/zricethezav/gitleaks/v8/cmd/generate/config/rules"`, `	"github.com/zricethezav/gitleaks/v8/cmd/generate/config/rules"
	"github.com/zricethezav/gitleaks/v8/cmd/generate/config/utils"`},
	}
	validate := filepath.Join(root, "cmd/generate/config/utils/validate.go")
	b, err := os.ReadFile(validate)
	if err != nil {
		return err
	}
	// The four "Failed to Validate" exits become warnings (the sample is left out, see corpusGo).
	v := strings.ReplaceAll(string(b), "logging.Fatal().\n\t\t\t\tStr(\"rule\"", "logging.Warn().\n\t\t\t\tStr(\"rule\"")
	if n := strings.Count(v, "logging.Warn()"); n != 4 {
		return fmt.Errorf("%s: %d validation failures made warnings, want 4", validate, n)
	}
	if err := os.WriteFile(validate, []byte(v), 0o644); err != nil {
		return err
	}
	for _, s := range steps {
		if err := replaceOnce(filepath.Join(root, s.file), s.old, s.new); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(utils, "corpus.go"), []byte(corpusGo), 0o644)
}

// corpusGo is added to gitleaks' cmd/generate/config/utils in the temporary copy.
const corpusGo = `package utils

// Added by bench/cmd/gitleakscorpus (toolmw): records the samples rules are validated with.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
)

type corpusRule struct {
	tps, fps, bare []string
	seen           map[string]bool
}

var (
	corpus           = map[string]*corpusRule{}
	generatedSecrets []string
	dropped          int
)

func add(list *[]string, seen map[string]bool, kind, s string) {
	if s == "" || seen[kind+"\x00"+s] {
		return
	}
	seen[kind+"\x00"+s] = true
	*list = append(*list, s)
}

func sortedValues(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(m))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// recordSamples records the samples of one call of Validate (tpPaths and fpPaths nil) or
// ValidateWithPaths (path to content). A sample that does not validate (a random value a rule
// rejects: gitleaks' own generator is then flaky) is left out with a warning; the patched
// Validate warns instead of ending the program.
func recordSamples(r *config.Rule, d *detect.Detector, tps, fps []string, tpPaths, fpPaths map[string]string) {
	c := corpus[r.RuleID]
	if c == nil {
		c = &corpusRule{seen: map[string]bool{}}
		corpus[r.RuleID] = c
	}
	pathOf := map[string]string{}
	for p, v := range tpPaths {
		pathOf[v] = p
	}
	fpPathOf := map[string]string{}
	for p, v := range fpPaths {
		fpPathOf[v] = p
	}
	for _, tp := range tps {
		var findings []report.Finding
		for _, f := range d.Detect(detect.Fragment{Raw: tp, FilePath: pathOf[tp]}) {
			if f.RuleID == r.RuleID {
				findings = append(findings, f)
			}
		}
		if len(findings) == 0 || (tpPaths != nil && len(findings) != 1) {
			fmt.Fprintf(os.Stderr, "gitleakscorpus: %s: true positive not validated, left out: %q\n", r.RuleID, tp)
			dropped++
			continue
		}
		add(&c.tps, c.seen, "tp", tp)
		found := false
		for _, s := range generatedSecrets {
			if s != "" && strings.Contains(tp, s) {
				add(&c.bare, c.seen, "bare", s)
				found = true
			}
		}
		if found {
			continue
		}
		for _, f := range findings {
			add(&c.bare, c.seen, "bare", f.Secret)
		}
	}
	for _, fp := range fps {
		if len(d.Detect(detect.Fragment{Raw: fp, FilePath: fpPathOf[fp]})) != 0 {
			fmt.Fprintf(os.Stderr, "gitleakscorpus: %s: false positive found, left out: %q\n", r.RuleID, fp)
			dropped++
			continue
		}
		add(&c.fps, c.seen, "fp", fp)
	}
	generatedSecrets = generatedSecrets[:0]
}

// DumpCorpus writes tps.json, fps.json and bare.json for the rules of the default config.
func DumpCorpus(rules []*config.Rule, dir string) error {
	fmt.Fprintf(os.Stderr, "gitleakscorpus: %d samples left out\n", dropped)
	tps, fps, bare := map[string][]string{}, map[string][]string{}, map[string][]string{}
	for _, r := range rules {
		c := corpus[r.RuleID]
		if c == nil {
			continue
		}
		// Sorted: some rule functions build samples from a map, whose order changes between runs.
		sort.Strings(c.tps)
		sort.Strings(c.fps)
		sort.Strings(c.bare)
		if len(c.tps) > 0 {
			tps[r.RuleID] = c.tps
		}
		if len(c.fps) > 0 {
			fps[r.RuleID] = c.fps
		}
		if len(c.bare) > 0 {
			bare[r.RuleID] = c.bare
		}
	}
	for name, m := range map[string]map[string][]string{"tps.json": tps, "fps.json": fps, "bare.json": bare} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(m); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
`
