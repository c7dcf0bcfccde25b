// Command scrubdump writes what scrub makes of every message of bench's corpora, so that a
// change meant to leave scrub's output alone (a faster path, a refactor) can be checked byte for
// byte: run it before and after the change and compare the two files.
//
//	go run ./cmd/scrubdump -o /tmp/before.txt
//	(change scrub)
//	go run ./cmd/scrubdump -o /tmp/after.txt && cmp /tmp/before.txt /tmp/after.txt
//
// The messages: every set of testdata (gitleaks' rule samples, bare values, the tool-error
// templates, gitleaks' false-positive samples, the clean errors), each also inside two wrappings
// (an error chain and a sentence), and every line of scrub's own corpora (scrub/testdata/*.txt).
// Each output is followed by a NUL line, so that outputs with line breaks stay apart.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolmw/toolmw/bench/internal/scrubvs"
	"github.com/toolmw/toolmw/scrub"
)

func main() {
	out := flag.String("o", "-", "where to write (- for stdout)")
	dir := flag.String("testdata", "testdata", "bench's testdata directory")
	own := flag.String("scrub", "../scrub/testdata", "scrub's testdata directory")
	flag.Parse()
	if err := run(*out, *dir, *own); err != nil {
		fmt.Fprintln(os.Stderr, "scrubdump:", err)
		os.Exit(1)
	}
}

func run(out, dir, own string) error {
	sets, err := scrubvs.Load(dir)
	if err != nil {
		return err
	}
	f := os.Stdout
	if out != "-" {
		if f, err = os.Create(out); err != nil {
			return err
		}
	}
	w := bufio.NewWriter(f)
	write := func(s string) {
		w.WriteString(scrub.String(s))
		w.WriteString("\n\x00\n")
	}
	n := 0
	for _, s := range sets {
		for _, m := range s.Samples {
			write(m.Msg)
			write("error: " + m.Msg + " (retry)")
			write("the token was " + m.Msg + ", see logs")
			n += 3
		}
	}
	files, err := filepath.Glob(filepath.Join(own, "*.txt"))
	if err != nil {
		return err
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(data), "\n") {
			write(line)
			n++
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if f != os.Stdout {
		if err := f.Close(); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "scrubdump: %d outputs\n", n)
	return nil
}
