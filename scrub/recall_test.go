package scrub

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite RECALL.md from the corpus")

// placeholders matches the placeholders in scrubbed text, whose family
// names may hold a piece of a value (rubygems_token).
var placeholders = regexp.MustCompile(`\[REDACTED:[a-z0-9_:]+\]`)

// Recall bars: every documented and every common shape is removed, and
// overall (evasions included) at least minRecall of the planted values.
const minRecall = 0.95

// leak returns a piece of v that survives in out and was not in the rest
// of the message, or "". Pieces are 6 bytes long (v whole if shorter),
// taken at every offset, so any surviving run of 6 bytes is caught.
func leak(out, rest, v string) string {
	if v == "" {
		return ""
	}
	out = placeholders.ReplaceAllString(out, "")
	n := min(6, len(v))
	for k := 0; k+n <= len(v); k++ {
		if p := v[k : k+n]; strings.Contains(out, p) && !strings.Contains(rest, p) {
			return p
		}
	}
	return ""
}

type tally struct{ n, found, typed int }

func (t *tally) add(found, typed bool) {
	t.n++
	if found {
		t.found++
	}
	if found && typed {
		t.typed++
	}
}

func percent(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(a)/float64(b))
}

// TestRecall scrubs every planted value of the corpus and checks the bars.
// A value is found when no piece of it, as written or decoded, survives;
// it is typed when the placeholder of its family replaced it.
func TestRecall(t *testing.T) {
	ps := corpus()
	if len(ps) < 150 {
		t.Fatalf("corpus has %d values, want at least 150", len(ps))
	}
	type key struct {
		shape  shape
		family string
	}
	rows := map[key]*tally{}
	byShape := map[shape]*tally{}
	var all tally
	var misses []string
	for _, p := range ps {
		out := String(p.msg)
		rest := strings.Replace(p.msg, p.value, "", 1)
		piece := leak(out, rest, p.value)
		if piece == "" {
			piece = leak(out, rest, p.raw)
		}
		found := piece == ""
		typed := strings.Contains(out, r(p.family))
		k := key{p.shape, p.family}
		if rows[k] == nil {
			rows[k] = &tally{}
		}
		if byShape[p.shape] == nil {
			byShape[p.shape] = &tally{}
		}
		rows[k].add(found, typed)
		byShape[p.shape].add(found, typed)
		all.add(found, typed)
		switch {
		case !found:
			misses = append(misses, fmt.Sprintf("%s %s (%s): %q survives in\n\t%q", p.shape, p.family, p.what, piece, out))
		case !typed:
			t.Logf("%s %s (%s): removed but not as %s:\n\t%q", p.shape, p.family, p.what, r(p.family), out)
		}
		if again := String(out); again != out {
			t.Errorf("not idempotent on %q:\n once %q\ntwice %q", p.msg, out, again)
		}
	}
	for _, m := range misses {
		t.Log("miss: " + m)
	}
	for _, k := range []shape{documented, common} {
		if s := byShape[k]; s.found != s.n {
			t.Errorf("%s shapes: %d of %d found, want all", k, s.found, s.n)
		}
	}
	if float64(all.found) < minRecall*float64(all.n) {
		t.Errorf("overall recall %d of %d, want at least %.0f%%", all.found, all.n, 100*minRecall)
	}

	// The table, with the recall before issue #13 on the same corpus.
	before := recallBefore(t)
	beforeShape := map[string]int{}
	beforeAll := 0
	for k, found := range before {
		beforeShape[strings.Fields(k)[0]] += found
		beforeAll += found
	}
	var b strings.Builder
	b.WriteString(recallHeader)
	b.WriteString("| shape | values | found | recall | typed | recall before #13 |\n|---|---:|---:|---:|---:|---:|\n")
	for _, k := range []shape{documented, common, evasion, hard} {
		s := byShape[k]
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %d | %s |\n", k, s.n, s.found, percent(s.found, s.n), s.typed,
			percent(beforeShape[k.String()], s.n))
	}
	fmt.Fprintf(&b, "| **overall** | %d | %d | %s | %d | %s |\n", all.n, all.found, percent(all.found, all.n), all.typed,
		percent(beforeAll, all.n))
	b.WriteString("\n| shape | family | values | found | recall | before #13 |\n|---|---|---:|---:|---:|---:|\n")
	keys := make([]key, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.shape, b.shape), cmp.Compare(a.family, b.family))
	})
	for _, k := range keys {
		s := rows[k]
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s |\n", k.shape, k.family, s.n, s.found, percent(s.found, s.n),
			percent(before[k.shape.String()+" "+k.family], s.n))
	}
	table := b.String()
	if *update {
		if err := os.WriteFile("RECALL.md", []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got, err := os.ReadFile("RECALL.md"); err != nil || string(got) != table {
		t.Errorf("RECALL.md is out of date; run go test ./scrub -run TestRecall -update\n%s", table)
	}
}

// recallBefore reads testdata/recall_before.txt: how many values of each
// shape and family the scrubber found before issue #13.
func recallBefore(t *testing.T) map[string]int {
	data, err := os.ReadFile("testdata/recall_before.txt")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		var shape, family string
		var n, found int
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		if _, err := fmt.Sscan(line, &shape, &family, &n, &found); err != nil {
			t.Fatalf("recall_before.txt: %q: %v", line, err)
		}
		m[shape+" "+family] = found
	}
	return m
}

const recallHeader = `# Recall of package scrub

Generated by ` + "`go test ./scrub -run TestRecall -update`" + ` from the corpus in
corpus_test.go: fake values generated from fixed seeds, planted in realistic messages
(error texts, log lines, header and form dumps, JSON bodies, URLs). A value is found
when no piece of it (6 bytes at any offset), as written or decoded, survives
scrubbing; typed counts the found
values replaced by the placeholder of their own family. TestRecall fails when a
documented or common shape is missed or overall recall falls below 95%; TestCleanCorpus
checks that the clean messages there come back unchanged.

Shapes: documented = the families and forms documented before issue #13; common =
shapes added by issue #13 (new families, more GitLab prefixes, lower-case and dashed
IBANs); evasion = documented values written to dodge matching (JSON, percent and HTML
escapes, invisible characters, line breaks, other key styles, Go map and JSON array
dumps, reserved characters in URL passwords, prose, YAML, XML); hard = harder evasions
and shapes, most of them known misses (see the package documentation). The last
column is the recall of the scrubber before issue #13 (commit 840734f) on the same
corpus, from testdata/recall_before.txt.

`

func TestCleanCorpus(t *testing.T) {
	if len(cleanCorpus) < 60 {
		t.Fatalf("clean corpus has %d messages, want at least 60", len(cleanCorpus))
	}
	for _, in := range cleanCorpus {
		if got := String(in); got != in {
			t.Errorf("String(%q)\n   = %q, want it unchanged", in, got)
		}
	}
}

// TestDocRecall checks that the package documentation quotes the corpus
// as it is.
func TestDocRecall(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(doc), "//", "")), " ")
	ps := corpus()
	found := 0
	for _, p := range ps {
		out := String(p.msg)
		rest := strings.Replace(p.msg, p.value, "", 1)
		if leak(out, rest, p.value) == "" && leak(out, rest, p.raw) == "" {
			found++
		}
	}
	for _, want := range []string{
		fmt.Sprintf("a corpus of %d fake values", len(ps)),
		fmt.Sprintf("%d of the %d values in all (%.0f%%", found, len(ps), 100*float64(found)/float64(len(ps))),
		fmt.Sprintf("the %d clean messages", len(cleanCorpus)),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("doc.go does not say %q", want)
		}
	}
}
