// Command scrubloop scrubs one message set of BenchmarkScrubVsGitleaks a given number of times
// and prints how many messages it scrubbed, so that a tool that counts instructions can measure
// scrub without the noise of a timer: with the garbage collector off and one P, the count is the
// same on every run and every machine of an architecture, and a change of a few tenths of a
// percent shows.
//
//	cd bench
//	go build -o /tmp/scrubloop ./cmd/scrubloop
//	GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no /tmp/scrubloop -set clean_errors -n 0
//	GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no /tmp/scrubloop -set clean_errors -n 300
//
// The difference of the two "I refs" counts, divided by the messages scrubbed, is scrub's
// instructions per message (about 9,350 on clean_errors at the commit that added this, about
// 11,600 on clean_256B; 8,037 and 9,774 at the end of session 53). Without GOGC=off and
// GOMAXPROCS=1 the collector's and the scheduler's work moves the counts by up to hundreds of
// millions between runs. Use -n 300 for clean_errors and -n 20000 for clean_256B (a few hundred
// million instructions of scrub's work); callgrind (--tool=callgrind, with
// GODEBUG=asyncpreemptoff=1 too, then callgrind_annotate --inclusive=yes) splits them by
// function and line. With --branch-sim=yes, cachegrind also counts the branches its simple
// predictor mispredicts (the "Mispredicts" line, and per line with cg_annotate): about 145 a
// message on clean_errors at the end of session 54 (some 15 to 20 cycles each on real
// hardware, where the real predictor differs), most at the ends of loops over words and runs and
// at the tests of a byte's class. A change that removes instructions but adds mispredicts may
// be slower, and the other way round. On a machine whose speed drifts, these counts guide where
// to work; the speed itself is measured in time (cmd/scrubab, cmd/scrubreport). At the end of
// session 55: 7,856 instructions and 137 mispredicts a message on clean_errors, 9,375 and 115 on
// clean_256B; at the end of session 56: 7,826 and 131, 9,449 and 101 (skipBoring's exit without
// a branch per byte added instructions, removed mispredicts and was faster in cmd/scrubab, which
// decides). -rule keeps one category of a set (clean_errors: git, go_sum, hash, http_status,
// path, sql, stack_trace, url, version), and -msg scrubs one message instead, to price a shape
// (a timestamp, a digest, a key before ':') against the program's start (-n 0).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/toolmw/toolmw/bench/internal/scrubvs"
	"github.com/toolmw/toolmw/scrub"
)

func main() {
	set := flag.String("set", "clean_errors", "the message set (a name of BenchmarkScrubVsGitleaks)")
	n := flag.Int("n", 100, "how many times to scrub the set (0 measures the program's start alone)")
	rule := flag.String("rule", "", "only the set's messages of this rule or category (clean_errors: git, go_sum, hash, …)")
	msg := flag.String("msg", "", "scrub this message instead of a set's")
	flag.Parse()
	sets, err := scrubvs.Load("testdata")
	if err != nil {
		fmt.Fprintln(os.Stderr, "scrubloop:", err)
		os.Exit(1)
	}
	var msgs []string
	for _, s := range scrubvs.SpeedSets(sets) {
		if s.Name == *set {
			for _, m := range s.Samples {
				if *rule != "" && m.Rule != *rule {
					continue
				}
				msgs = append(msgs, m.Msg)
			}
		}
	}
	if *msg != "" {
		msgs = []string{*msg}
	}
	if len(msgs) == 0 {
		fmt.Fprintf(os.Stderr, "scrubloop: no message set %q\n", *set)
		os.Exit(1)
	}
	out := 0
	for range *n {
		for _, m := range msgs {
			out += len(scrub.String(m))
		}
	}
	fmt.Printf("%d messages scrubbed, %d bytes out\n", *n*len(msgs), out)
}
