// Command scrubreport measures toolmw's scrubber against gitleaks v8.30.1 (issue 31) and
// writes a markdown report: recall per corpus (gitleaks' rule samples as written, the bare
// secret values, those values in tool-error templates), false positives on clean text, toolmw's
// misses per gitleaks rule, and speed, both peers in the same run. Run from bench/ (under a
// minute):
//
//	go run ./cmd/scrubreport                      # writes results/scrub-vs-gitleaks.md
//	go run ./cmd/scrubreport -o - -speed=false    # recall only, to stdout
//
// The corpora are bench/testdata/gitleaks (cmd/gitleakscorpus) and bench/testdata/scrubvs; the
// method is in package bench/internal/scrubvs.
//
// To measure the scrub package of another checkout with this bench, point the replace
// directives elsewhere with a copy of go.mod:
//
//	sed 's#=> \.\./adapters/mcp$#=> /path/to/toolmw/adapters/mcp#; s#=> \.\./$#=> /path/to/toolmw/#' go.mod > /tmp/other.mod
//	cp go.sum /tmp/other.sum
//	go run -modfile=/tmp/other.mod ./cmd/scrubreport -o /tmp/other.md
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolmw/toolmw/bench/internal/scrubvs"
)

func main() {
	testing.Init()
	out := flag.String("o", "results/scrub-vs-gitleaks.md", "where to write the report (- for stdout)")
	also := flag.String("also", "", "a second path to write the report to")
	dir := flag.String("testdata", "testdata", "bench's testdata directory")
	speed := flag.Bool("speed", true, "run the speed benchmarks")
	benchtime := flag.Duration("benchtime", 300*time.Millisecond, "time per speed benchmark and round")
	rounds := flag.Int("rounds", 7, "interleaved rounds of the speed benchmarks; the report gives their medians")
	misses := flag.String("misses", "", "also write every message whose secret survived toolmw, one JSON object per line, to this path")
	flag.Parse()
	*rounds = max(1, *rounds)

	sets, err := scrubvs.Load(*dir)
	if err != nil {
		fail(err)
	}
	start := time.Now()
	results, err := scrubvs.Evaluate(sets)
	if err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "scrubreport: recall and false positives in %v\n", time.Since(start).Round(time.Millisecond))
	if *misses != "" {
		if err := writeMisses(*misses, results); err != nil {
			fail(err)
		}
	}

	var speeds map[string]map[string]scrubvs.Speed
	speedSets := scrubvs.SpeedSets(sets)
	if *speed {
		if err := flag.Set("test.benchtime", benchtime.String()); err != nil {
			fail(err)
		}
		names, fns, err := scrubvs.Peers()
		if err != nil {
			fail(err)
		}
		speeds = measure(speedSets, names, fns, *rounds)
	}

	meta := scrubvs.Meta{
		Date:      time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		Commit:    gitCommit(),
		Go:        runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		CPU:       cpu(),
		Command:   "cd bench && go run ./cmd/scrubreport",
		BenchTime: benchtime.String(),
		Rounds:    *rounds,
	}
	var b strings.Builder
	scrubvs.Write(&b, meta, results, speeds, speedSets)
	for _, path := range []string{*out, *also} {
		switch path {
		case "":
		case "-":
			w := bufio.NewWriter(os.Stdout)
			w.WriteString(b.String())
			if err := w.Flush(); err != nil {
				fail(err)
			}
		default:
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				fail(err)
			}
			fmt.Fprintf(os.Stderr, "scrubreport: wrote %s\n", path)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "scrubreport:", err)
	os.Exit(1)
}

// gitCommit describes the toolmw checkout measured: the directory bench/go.mod (or the
// -modfile given) replaces github.com/toolmw/toolmw with, its branch and commit, and whether
// its scrub/ has uncommitted changes.
func gitCommit() string {
	dir := ".."
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/toolmw/toolmw" && d.Replace != nil {
				dir = d.Replace.Path
			}
		}
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	c := git("rev-parse", "--short", "HEAD")
	if c == "" {
		return "unknown (" + dir + ")"
	}
	if b := git("rev-parse", "--abbrev-ref", "HEAD"); b != "" {
		c = b + " " + c
	}
	if git("status", "--porcelain", "--", "scrub") != "" {
		c += " (scrub/ modified)"
	}
	return c + ", toolmw at " + dir
}

func cpu() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":")) + fmt.Sprintf(", %d CPUs", runtime.NumCPU())
		}
	}
	return runtime.GOARCH
}

// writeMisses writes every message whose secret survived toolmw, with its set, as JSON lines:
// the list to work from (and to diff between two checkouts) when recall moves.
func writeMisses(path string, results []scrubvs.SetResult) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range results {
		for _, m := range r.ToolmwMisses {
			if err := enc.Encode(struct {
				Set string
				scrubvs.Example
			}{r.Set.Name, m}); err != nil {
				return err
			}
		}
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// measure runs the speed benchmarks in rounds: each round times every
// peer on every set, the peers' order turning from round to round, so that
// both see the same changes of the machine's speed. It returns each
// peer's median per set, and the median of its rounds' ratios to toolmw.
func measure(sets []scrubvs.Set, names []string, fns []func(string), rounds int) map[string]map[string]scrubvs.Speed {
	runs := map[string]map[string][]scrubvs.Speed{}
	for r := 0; r < rounds; r++ {
		for _, s := range sets {
			if runs[s.Name] == nil {
				runs[s.Name] = map[string][]scrubvs.Speed{}
			}
			for k := range names {
				i := (k + r) % len(names)
				res := testing.Benchmark(func(b *testing.B) { scrubvs.Bench(b, s, fns[i]) })
				msgs := float64(res.N) * float64(len(s.Samples))
				sp := scrubvs.Speed{
					NsPerMsg:     float64(res.T.Nanoseconds()) / msgs,
					AllocsPerMsg: float64(res.MemAllocs) / msgs,
					BytesPerMsg:  float64(res.MemBytes) / msgs,
				}
				runs[s.Name][names[i]] = append(runs[s.Name][names[i]], sp)
				fmt.Fprintf(os.Stderr, "scrubreport: round %d %s/%s: %d passes, %.0f ns/msg\n", r+1, s.Name, names[i], res.N, sp.NsPerMsg)
			}
		}
	}
	speeds := map[string]map[string]scrubvs.Speed{}
	for set, peers := range runs {
		speeds[set] = map[string]scrubvs.Speed{}
		base := peers["toolmw"]
		for peer, rs := range peers {
			ns := make([]float64, len(rs))
			allocs := make([]float64, len(rs))
			bytes := make([]float64, len(rs))
			ratios := make([]float64, len(rs))
			for r, sp := range rs {
				ns[r], allocs[r], bytes[r] = sp.NsPerMsg, sp.AllocsPerMsg, sp.BytesPerMsg
				ratios[r] = sp.NsPerMsg / base[r].NsPerMsg
			}
			speeds[set][peer] = scrubvs.Speed{NsPerMsg: median(ns), AllocsPerMsg: median(allocs),
				BytesPerMsg: median(bytes), PerToolmw: median(ratios)}
		}
	}
	return speeds
}

// median returns the median of v (the mean of the middle two of an even
// number), sorting v.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
