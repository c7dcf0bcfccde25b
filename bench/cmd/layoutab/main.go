// Command layoutab compares scrub's speed at another commit with the working tree's, over
// several code layouts. The scan is branchy, and where the linker places its code and byte
// tables moves its time by several percent between builds of the same source (more than most
// changes do), so one build of each side says little: layoutab builds bench's test binary for
// each side with -ldflags=-randlayout=N for N = 1…layouts, times toolmw on one message set of
// BenchmarkScrubVsGitleaks in rounds that alternate the sides, and prints, for each layout, the
// median over the rounds of the working tree's ns ÷ the base's, then their mean and median.
//
//	cd bench
//	go run ./cmd/layoutab -base HEAD~1                 # the working tree against its parent
//	go run ./cmd/layoutab -base main -set gitleaks_fps -layouts 8
//
// The base commit is checked out in a temporary git worktree, which is removed at the end. A
// ratio below 1 in most layouts, with a mean below 1 by more than the layouts' spread, is a
// change that made scrub faster; a scatter around 1 is none.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	base := flag.String("base", "HEAD", "the commit to compare the working tree with")
	set := flag.String("set", "clean_errors", "the message set (a name of BenchmarkScrubVsGitleaks)")
	layouts := flag.Int("layouts", 6, "randomized layouts of each side")
	rounds := flag.Int("rounds", 5, "rounds per layout")
	benchtime := flag.String("benchtime", "200x", "-test.benchtime of each timing")
	flag.Parse()
	if *layouts < 1 || *rounds < 1 {
		fail(fmt.Errorf("-layouts and -rounds must be at least 1"))
	}
	if err := run(*base, *set, *layouts, *rounds, *benchtime); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "layoutab:", err)
	os.Exit(1)
}

func run(base, set string, layouts, rounds int, benchtime string) error {
	top, err := output("", "git", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "layoutab")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	baseTree := filepath.Join(tmp, "base")
	if _, err := output(top, "git", "worktree", "add", "--detach", baseTree, base); err != nil {
		return err
	}
	defer output(top, "git", "worktree", "remove", "--force", baseTree)

	trees := map[string]string{"base": baseTree, "head": top}
	bin := func(side string, n int) string { return filepath.Join(tmp, fmt.Sprintf("%s-%d.test", side, n)) }
	for n := 1; n <= layouts; n++ {
		for side, tree := range trees {
			if _, err := output(filepath.Join(tree, "bench"), "go", "test", "-c",
				"-ldflags=-randlayout="+strconv.Itoa(n), "-o", bin(side, n), "."); err != nil {
				return err
			}
		}
	}
	timeOf := func(side string, n int) (float64, error) {
		out, err := output(filepath.Join(trees[side], "bench"), bin(side, n), "-test.run", "^$",
			"-test.bench", "^BenchmarkScrubVsGitleaks$/^"+set+"$/^toolmw$", "-test.benchtime", benchtime)
		if err != nil {
			return 0, err
		}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) >= 4 && strings.HasPrefix(f[0], "BenchmarkScrubVsGitleaks/") && f[3] == "ns/op" {
				return strconv.ParseFloat(f[2], 64)
			}
		}
		return 0, fmt.Errorf("no timing of %s in the output of %s:\n%s", set, bin(side, n), out)
	}
	var medians []float64
	for n := 1; n <= layouts; n++ {
		var ratios []float64
		for r := 0; r < rounds; r++ {
			order := []string{"base", "head"}
			if r%2 == 1 {
				order = []string{"head", "base"}
			}
			ns := map[string]float64{}
			for _, side := range order {
				if ns[side], err = timeOf(side, n); err != nil {
					return err
				}
			}
			ratios = append(ratios, ns["head"]/ns["base"])
		}
		m := median(ratios)
		medians = append(medians, m)
		fmt.Printf("layout %d: head ÷ base %.4f (rounds %s)\n", n, m, format(ratios))
	}
	mean := 0.0
	for _, m := range medians {
		mean += m / float64(len(medians))
	}
	fmt.Printf("%s, %d layouts: mean %.4f, median %.4f, from %.4f to %.4f\n", set, layouts, mean, median(medians),
		slices.Min(medians), slices.Max(medians))
	return nil
}

// output runs a command in dir and returns its standard output, or an error with its output.
func output(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return strings.TrimSpace(out.String()), nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func format(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.3f", x)
	}
	return strings.Join(parts, " ")
}
