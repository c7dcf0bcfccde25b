// Command scrubloop scrubs one message set of BenchmarkScrubVsGitleaks a given number of times
// and prints how many messages it scrubbed, so that a tool that counts instructions can measure
// scrub without the noise of a timer: the count is the same on every run and every machine of
// an architecture, and a change of a few tenths of a percent shows.
//
//	cd bench
//	go build -o /tmp/scrubloop ./cmd/scrubloop
//	valgrind --tool=cachegrind --cache-sim=no /tmp/scrubloop -set clean_errors -n 0
//	valgrind --tool=cachegrind --cache-sim=no /tmp/scrubloop -set clean_errors -n 300
//
// The difference of the two "I refs" counts, divided by the messages scrubbed, is scrub's
// instructions per message (about 9,350 on clean_errors at the commit that added this, about
// 11,600 on clean_256B); loading the corpora moves the first count by 1 to 2M between runs, so
// -n should make the second count's work a few hundred million (300 passes of clean_errors,
// 20,000 of clean_256B); callgrind (--tool=callgrind, then callgrind_annotate
// --inclusive=yes) splits them by function and line. On a machine whose speed drifts,
// instruction counts guide where to work; the speed itself is measured in time
// (cmd/scrubab, cmd/scrubreport).
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
				msgs = append(msgs, m.Msg)
			}
		}
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
