// Command scrubab compares scrub's speed at another commit with the working tree's in one
// process, and checks that both give the same output. On a shared machine whose speed drifts by
// tens of percent within minutes, timings taken by separate runs (layoutab's) scatter more than
// most changes move them; scrubab builds one program holding both versions of scrub (copied into
// two packages of a temporary module), times each on the message set in turn, a few
// milliseconds at a time, and prints the median over the rounds of the working tree's time ÷
// the base's. The two sides drift together, so the median moves by about 1% between runs; A/A
// runs (-base HEAD on a clean tree) gave 0.98 to 1.01 here, the placement of the two copies
// mostly favouring the second a little, so only a ratio below about 0.97 is a change that made
// scrub faster.
//
//	cd bench
//	go run ./cmd/scrubab -base HEAD~1                  # the working tree against its parent
//	go run ./cmd/scrubab -base main -set gitleaks_fps -rounds 600
//
// Before timing, it scrubs every message of every set of BenchmarkScrubVsGitleaks with both
// versions and lists those whose outputs differ (at most -show, 10 by default), so that a change meant only to be
// faster shows at once whether it changed anything. With -splice n it also compares the two on n
// messages spliced from those (random pieces of one to three messages joined by separators and
// context words: "=", ": ", "bearer ", a line break, …; the same n messages on every run), which
// reach shapes the corpora do not hold; -rounds 0 then only compares.
//
//	go run ./cmd/scrubab -base HEAD~3 -splice 2000000 -rounds 0
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/toolmw/toolmw/bench/internal/scrubvs"
)

func main() {
	base := flag.String("base", "HEAD", "the commit to compare the working tree with")
	set := flag.String("set", "clean_errors", "the message set timed (a name of BenchmarkScrubVsGitleaks)")
	rounds := flag.Int("rounds", 400, "rounds, each timing both sides once (0: compare outputs only)")
	splice := flag.Int("splice", 0, "how many spliced messages to compare outputs on")
	show := flag.Int("show", 10, "how many messages whose outputs differ to print, of the corpora and of the spliced ones each")
	flag.Parse()
	if *rounds < 0 || *splice < 0 || *show < 0 {
		fail(fmt.Errorf("-rounds, -splice and -show must not be negative"))
	}
	if err := run(*base, *set, *rounds, *splice, *show); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "scrubab:", err)
	os.Exit(1)
}

func run(base, set string, rounds, splice, show int) error {
	sets, err := scrubvs.Load("testdata")
	if err != nil {
		return err
	}
	var timed, all []string
	for _, s := range scrubvs.SpeedSets(sets) {
		for _, m := range s.Samples {
			all = append(all, m.Msg)
			if s.Name == set {
				timed = append(timed, m.Msg)
			}
		}
	}
	if len(timed) == 0 {
		return fmt.Errorf("no message set %q", set)
	}
	top, err := output("", "git", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	top = strings.TrimSpace(top)
	tmp, err := os.MkdirTemp("", "scrubab")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	msgs, err := json.Marshal(map[string][]string{"timed": timed, "all": all})
	if err != nil {
		return err
	}
	for _, dir := range []string{"base", "head"} {
		if err := os.Mkdir(filepath.Join(tmp, dir), 0o755); err != nil {
			return err
		}
	}
	for name, text := range map[string]string{"go.mod": "module scrubab\n\ngo 1.26\n", "main.go": program, "msgs.json": string(msgs)} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	// The base's scrub from git, the head's from the working tree: the package's non-test
	// files, renamed.
	names, err := output(top, "git", "ls-tree", "--name-only", base, "scrub/")
	if err != nil {
		return err
	}
	for _, name := range strings.Fields(names) {
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := output(top, "git", "show", base+":"+name)
		if err != nil {
			return err
		}
		if err := copySource(src, "base", filepath.Join(tmp, "base", filepath.Base(name))); err != nil {
			return err
		}
	}
	heads, err := filepath.Glob(filepath.Join(top, "scrub", "*.go"))
	if err != nil {
		return err
	}
	for _, path := range heads {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := copySource(string(src), "head", filepath.Join(tmp, "head", filepath.Base(path))); err != nil {
			return err
		}
	}
	cmd := exec.Command("go", "run", ".", "-rounds", fmt.Sprint(rounds), "-set", set, "-splice", fmt.Sprint(splice), "-show", fmt.Sprint(show))
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

// copySource writes scrub's source src to path as package pkg. scrub's non-test files import
// only the standard library, so the package clause is all that changes.
func copySource(src, pkg, path string) error {
	const clause = "package scrub\n"
	k := strings.Index("\n"+src, "\n"+clause) // at the start of a line
	if k < 0 {
		return fmt.Errorf("%s: no package clause", path)
	}
	out := src[:k] + "package " + pkg + "\n" + src[k+len(clause):]
	return os.WriteFile(path, []byte(out), 0o644)
}

func output(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// program is the main package of the temporary module.
const program = `package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"scrubab/base"
	"scrubab/head"
)

var sink int

// joins are what spliced pieces are joined by: separators, and words a
// matcher reads a value after.
var joins = []string{" ", "", "\n", "\t", ": ", ":", "=", "=\"", "\"", "'", "/", "-", "_", ".", ",", "@",
	"bearer ", "Bearer ", "basic ", "token ", "password=", "key: ", "secret ", "api_key=", "://", "+", "~", "\\", "%", "[REDACTED:secret]"}

// spliced returns a message made of random pieces of msgs.
func spliced(r *rand.Rand, msgs []string) string {
	var b strings.Builder
	for n := 1 + r.IntN(3); n > 0; n-- {
		m := msgs[r.IntN(len(msgs))]
		i := r.IntN(len(m) + 1)
		j := i + r.IntN(len(m)-i+1)
		if r.IntN(3) == 0 {
			i, j = 0, len(m)
		}
		b.WriteString(m[i:j])
		if n > 1 || r.IntN(2) == 0 {
			b.WriteString(joins[r.IntN(len(joins))])
		}
	}
	return b.String()
}

// pass scrubs msgs k times with f and returns the time taken.
func pass(f func(string) string, msgs []string, k int) time.Duration {
	t := time.Now()
	for range k {
		for _, m := range msgs {
			sink += len(f(m))
		}
	}
	return time.Since(t)
}

func main() {
	rounds := flag.Int("rounds", 400, "")
	set := flag.String("set", "", "")
	splice := flag.Int("splice", 0, "")
	show := flag.Int("show", 10, "")
	flag.Parse()
	raw, err := os.ReadFile("msgs.json")
	if err != nil {
		panic(err)
	}
	var msgs map[string][]string
	if err := json.Unmarshal(raw, &msgs); err != nil {
		panic(err)
	}
	diffs := 0
	for _, m := range msgs["all"] {
		for _, in := range []string{m, "error: " + m + " (retry)"} {
			if b, h := base.String(in), head.String(in); b != h {
				if diffs++; diffs <= *show {
					fmt.Printf("differs: %q\n  base %q\n  head %q\n", in, b, h)
				}
			}
		}
	}
	fmt.Printf("outputs: %d of %d messages differ\n", diffs, 2*len(msgs["all"]))
	if *splice > 0 {
		r := rand.New(rand.NewPCG(53, 31))
		diffs := 0
		for range *splice {
			in := spliced(r, msgs["all"])
			if b, h := base.String(in), head.String(in); b != h {
				if diffs++; diffs <= *show {
					fmt.Printf("differs: %q\n  base %q\n  head %q\n", in, b, h)
				}
			}
		}
		fmt.Printf("spliced: %d of %d messages differ\n", diffs, *splice)
	}
	if *rounds == 0 {
		return
	}
	timed := msgs["timed"]
	// Each pass lasts a few milliseconds: short enough that both sides of a round see the
	// machine alike, long enough to time.
	k := 1
	for pass(base.String, timed, k) < 2*time.Millisecond && k < 1<<20 {
		k *= 2
	}
	pass(head.String, timed, 4*k)
	var ratios []float64
	var tb, th time.Duration
	for r := range *rounds {
		var b, h time.Duration
		if r%2 == 0 {
			b = pass(base.String, timed, k)
			h = pass(head.String, timed, k)
		} else {
			h = pass(head.String, timed, k)
			b = pass(base.String, timed, k)
		}
		tb += b
		th += h
		ratios = append(ratios, float64(h)/float64(b))
	}
	slices.Sort(ratios)
	n := len(ratios)
	per := func(d time.Duration) float64 { return float64(d) / float64(*rounds*k*len(timed)) }
	fmt.Printf("%s, %d rounds: head ÷ base median %.4f (quartiles %.4f %.4f); base %.0f ns/msg, head %.0f ns/msg\n",
		*set, n, ratios[n/2], ratios[n/4], ratios[3*n/4], per(tb), per(th))
}
`
